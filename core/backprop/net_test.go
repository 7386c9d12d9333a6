package backprop

import (
	"math"
	"sort"
	"testing"

	"repro/core"
)

// refLoss is an independent float64 forward pass and loss of the network
// described by sizes/kfrac with parameters params (Params layout), on rows x
// (row-major), labels y, per-row loss weights w, optional suppression and
// ER-ACE class mask. It is the finite-difference oracle for Backward.
func refLoss(sizes []int, kfrac float64, params []float64, x []float64, y []int32, w []float64,
	kind Loss, supp [][]bool, classMask []bool) float64 {
	L := len(sizes) - 1
	rows := len(y)
	a := x
	o := 0
	for l := range L {
		in, out := sizes[l], sizes[l+1]
		W, B := params[o:o+in*out], params[o+in*out:o+in*out+out]
		o += in*out + out
		z := make([]float64, rows*out)
		for r := range rows {
			for i := range out {
				s := B[i]
				for j := range in {
					s += a[r*in+j] * W[j*out+i]
				}
				z[r*out+i] = s
			}
			if l == L-1 {
				continue
			}
			row := z[r*out : (r+1)*out]
			for i := range row {
				if row[i] < 0 || (supp != nil && supp[l+1] != nil && supp[l+1][i]) {
					row[i] = 0
				}
			}
			if kfrac > 0 {
				k := core.KWTAK(kfrac, out)
				s := append([]float64(nil), row...)
				sort.Sort(sort.Reverse(sort.Float64Slice(s)))
				thr := s[k-1]
				for i := range row {
					if row[i] < thr {
						row[i] = 0
					}
				}
			}
		}
		a = z
	}
	C := sizes[L]
	total := 0.0
	for r := range rows {
		z := a[r*C : (r+1)*C]
		switch kind {
		case SquaredError:
			for c := range C {
				t := 0.0
				if int32(c) == y[r] {
					t = 1
				}
				total += w[r] * (z[c] - t) * (z[c] - t)
			}
		case CrossEntropy:
			mx := math.Inf(-1)
			for c := range C {
				if classMask == nil || classMask[c] {
					mx = max(mx, z[c])
				}
			}
			s := 0.0
			for c := range C {
				if classMask == nil || classMask[c] {
					s += math.Exp(z[c] - mx)
				}
			}
			total += w[r] * (mx + math.Log(s) - z[y[r]])
		}
	}
	return total
}

func TestBackwardFiniteDifferences(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		sizes    []int
		kfrac    float64
		kind     Loss
		suppress bool
		ace      bool
	}{
		{"relu-mse", []int{7, 9, 6, 4}, 0, SquaredError, false, false},
		{"relu-ce", []int{7, 9, 6, 4}, 0, CrossEntropy, false, false},
		{"kwta-mse", []int{7, 20, 10, 4}, 0.3, SquaredError, false, false},
		{"kwta-suppressed-ce", []int{7, 20, 10, 4}, 0.3, CrossEntropy, true, false},
		{"one-hidden-ace", []int{5, 8, 6}, 0, CrossEntropy, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rng := core.NewRNG(3, 0)
			net := NewNet(tc.sizes, tc.kfrac, rng)
			rows := 5
			p := NewPass(net, rows)
			p.SetRows(rows)
			D, C, L := tc.sizes[0], net.Classes(), net.Layers()
			x64 := make([]float64, rows*D)
			y := make([]int32, rows)
			w64 := make([]float64, rows)
			for r := range rows {
				for j := range D {
					v := float32(rng.NormFloat64())
					p.Input(r, D)[j] = v
					x64[r*D+j] = float64(v)
				}
				y[r] = int32(rng.IntN(C))
				w64[r] = 1 / float64(rows)
			}
			if tc.ace {
				y[0], y[1], y[2], y[3], y[4] = 1, 3, 1, 3, 1
			}
			var supp [][]bool
			if tc.suppress {
				supp = make([][]bool, L+1)
				for l := 1; l < L; l++ {
					supp[l] = make([]bool, tc.sizes[l])
					for i := range supp[l] {
						supp[l][i] = rng.IntN(4) == 0
					}
				}
				p.Suppress = supp
			}
			var cm []bool
			if tc.ace {
				cm = make([]bool, C)
				presentClasses(y, cm)
			}
			net.Forward(p)
			for r := range rows {
				lossGrad(tc.kind, p.A[L][r*C:(r+1)*C], y[r], float32(w64[r]), cm, p.D[L][r*C:(r+1)*C])
			}
			grad := make([]float32, len(net.Params))
			net.Backward(p, grad)

			params := make([]float64, len(net.Params))
			for i, v := range net.Params {
				params[i] = float64(v)
			}
			// Central differences in float64; h small enough not to cross a
			// k-WTA or ReLU boundary on these random inputs.
			const h = 1e-6
			checked := 0
			for i := range params {
				old := params[i]
				params[i] = old + h
				up := refLoss(tc.sizes, tc.kfrac, params, x64, y, w64, tc.kind, supp, cm)
				params[i] = old - h
				dn := refLoss(tc.sizes, tc.kfrac, params, x64, y, w64, tc.kind, supp, cm)
				params[i] = old
				fd := (up - dn) / (2 * h)
				// float32 forward/backward against a float64 oracle: 1e-4
				// absolute plus 1e-3 relative.
				if math.Abs(fd-float64(grad[i])) > 1e-4+1e-3*math.Abs(fd) {
					t.Errorf("param %d: backward %g, finite difference %g", i, grad[i], fd)
				}
				if fd != 0 {
					checked++
				}
			}
			if checked < len(params)/4 {
				t.Errorf("only %d of %d parameters have a non-zero gradient", checked, len(params))
			}
		})
	}
}
