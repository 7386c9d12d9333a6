package kernels

import "math"

// TinyVelocity is the magnitude below which a velocity is set to 0. A
// velocity without input decays geometrically (mu = 0.9) into float32's
// subnormal range, where x86 arithmetic is about a hundred times slower;
// most synapses of the sparse hidden layers sit there. Below 1e-30 the step
// eta*v (< 1e-31) cannot change any weight of magnitude above 1e-23, so
// flushing is numerically inert for the learner; the reference (torch on
// CPU, denormals kept) differs only in such sub-ulp steps. Adam's first
// moment decays the same way (beta1 = 0.9) and is flushed at the same
// magnitude: its step eta*m/(sqrt(v)+eps) is then below 1e-29 (eps = 1e-3).
const TinyVelocity = 1e-30

// FlushTiny returns 0 for |v| < TinyVelocity, v otherwise (NaN stays NaN).
func FlushTiny(v float32) float32 {
	// Branch-free: the sign of the velocity's magnitude is random across
	// synapses, so a branch would mispredict.
	b := math.Float32bits(v)
	keep := uint32(int32(tinyBits-1-(b&0x7fffffff)) >> 31) // all ones iff |v| >= tiny
	return math.Float32frombits(b & keep)
}

var tinyBits = math.Float32bits(TinyVelocity)
