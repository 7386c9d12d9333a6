package backprop

import "math"

// Loss names a per-sample loss on the logits.
type Loss int

const (
	// SquaredError is sum_c (z_c - y_c)^2 against the one-hot target: a sum
	// over classes, C times PyTorch's F.mse_loss (the reference's "mse").
	SquaredError Loss = iota
	// CrossEntropy is -log softmax(z)_y (the reference's "ce").
	CrossEntropy
)

// lossGrad writes w * d loss(z, y) / dz into dz and returns loss(z, y).
// classMask, when non-nil, restricts cross-entropy to the classes where it
// is true (ER-ACE): the other logits are left out of the softmax, as the
// reference's fill with -1e9 does, and get zero gradient; y must be one of
// the kept classes. classMask is ignored for SquaredError.
func lossGrad(kind Loss, z []float32, y int32, w float32, classMask []bool, dz []float32) float64 {
	switch kind {
	case SquaredError:
		var s float64
		for c, zc := range z {
			t := float32(0)
			if int32(c) == y {
				t = 1
			}
			e := zc - t
			s += float64(e) * float64(e)
			dz[c] = w * 2 * e
		}
		return s
	case CrossEntropy:
		mx := math.Inf(-1)
		for c, zc := range z {
			if classMask == nil || classMask[c] {
				mx = max(mx, float64(zc))
			}
		}
		var sum float64
		for c, zc := range z {
			if classMask == nil || classMask[c] {
				sum += math.Exp(float64(zc) - mx)
			}
		}
		lse := mx + math.Log(sum)
		for c, zc := range z {
			if classMask != nil && !classMask[c] {
				dz[c] = 0
				continue
			}
			p := math.Exp(float64(zc) - lse)
			if int32(c) == y {
				p--
			}
			dz[c] = w * float32(p)
		}
		return lse - float64(z[y])
	}
	panic("backprop: unknown loss")
}

// distillGrad writes w * d/dz sum_c (z_c - t_c)^2 into dz and returns the
// sum: DER++'s logit term, alpha multiplying the per-sample sum (ten times
// Mammoth's mean-reduced form at C = 10).
func distillGrad(z, t []float32, w float32, dz []float32) float64 {
	var s float64
	for c, zc := range z {
		e := zc - t[c]
		s += float64(e) * float64(e)
		dz[c] = w * 2 * e
	}
	return s
}

// presentClasses sets mask[c] to whether class c occurs in y (ER-ACE's
// incoming-batch mask: every absent class, past or future, is masked).
func presentClasses(y []int32, mask []bool) {
	clear(mask)
	for _, c := range y {
		mask[c] = true
	}
}
