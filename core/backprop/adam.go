package backprop

import (
	"math"

	"repro/internal/kernels"
)

// Adam's constants as the reference uses them (torch.optim.Adam(lr,
// weight_decay=1e-3) and its masked copy `_adam_masked`).
const (
	adamBeta1 = 0.9
	adamBeta2 = 0.999
	adamEps   = 1e-8
)

// Adam is PyTorch's Adam with coupled L2 weight decay (wd*theta added to the
// gradient before the moments, not AdamW) and, for the local schedule, a
// masked step. One step counter serves every step, masked or not, as in the
// reference, where waking and replay steps share the bias correction.
type Adam struct {
	LR, WeightDecay float64
	M, V            []float32
	T               int // steps taken
}

// NewAdam returns the optimiser state for n parameters.
func NewAdam(n int, lr, weightDecay float64) *Adam {
	return &Adam{LR: lr, WeightDecay: weightDecay, M: make([]float32, n), V: make([]float32, n)}
}

// coef advances the step counter and returns the step's scalars at rate lr.
func (a *Adam) coef(lr float64) kernels.AdamStepCoef {
	a.T++
	bc1 := 1 - math.Pow(adamBeta1, float64(a.T))
	bc2 := 1 - math.Pow(adamBeta2, float64(a.T))
	return kernels.AdamStepCoef{
		WD: float32(a.WeightDecay), B1: adamBeta1, OB1: 1 - adamBeta1, B2: adamBeta2, OB2: 1 - adamBeta2,
		InvSqrtBC2: float32(1 / math.Sqrt(bc2)), Eps: adamEps, Step: float32(lr / bc1),
	}
}

// Step applies one unmasked step at learning rate lr (usually a.LR) to
// params with gradient grad (same length as the state), and leaves grad
// zero, ready for the next Backward to accumulate into.
func (a *Adam) Step(params, grad []float32, lr float64) {
	k := a.coef(lr)
	kernels.AdamStep(params, grad, a.M, a.V, nil, &k)
}

// Mask is a synapse mask over a Net's parameters in the form the local
// schedule produces: per weight layer, the presynaptic units that are awake
// (Pre) and the postsynaptic units that are awake (Post). A weight may move
// iff its presynaptic unit is asleep or its postsynaptic unit is asleep; a
// bias iff its unit is asleep. When only one of Pre[l], Post[l] is nil,
// that side counts as all awake (Pre[0] nil: the input is always awake).
// A layer with both nil is exempt from the mask and takes the full step, as
// the readout does.
type Mask struct {
	Pre, Post [][]bool
}

// StepMasked applies one step at learning rate lr to the parameters inside
// the mask only: there the moments advance (with the decay term) and the
// parameter moves; outside it parameters and both moments are left exactly
// unchanged. The step counter advances once either way. net gives the
// layout of params and grad. As Step, it leaves all of grad zero.
func (a *Adam) StepMasked(net *Net, params, grad []float32, mask *Mask, lr float64) {
	k := a.coef(lr)
	pw, pb := net.views(params)
	gw, gb := net.views(grad)
	mw, mb := net.views(a.M)
	vw, vb := net.views(a.V)
	var col []uint32
	for l := range pw {
		in, out := net.Sizes[l], net.Sizes[l+1]
		if mask.Pre[l] == nil && mask.Post[l] == nil {
			kernels.AdamStep(pw[l], gw[l], mw[l], vw[l], nil, &k)
			kernels.AdamStep(pb[l], gb[l], mb[l], vb[l], nil, &k)
			continue
		}
		// col[i] is all ones where postsynaptic unit i is asleep.
		col = col[:0]
		for i := range out {
			w := uint32(0)
			if mask.Post[l] != nil && !mask.Post[l][i] {
				w = ^uint32(0)
			}
			col = append(col, w)
		}
		for j := range in {
			s := j * out
			if mask.Pre[l] != nil && !mask.Pre[l][j] {
				kernels.AdamStep(pw[l][s:s+out], gw[l][s:s+out], mw[l][s:s+out], vw[l][s:s+out], nil, &k)
			} else {
				kernels.AdamStep(pw[l][s:s+out], gw[l][s:s+out], mw[l][s:s+out], vw[l][s:s+out], col, &k)
			}
		}
		kernels.AdamStep(pb[l], gb[l], mb[l], vb[l], col, &k)
	}
}
