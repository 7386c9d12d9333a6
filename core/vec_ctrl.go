package core

import "math"

// The adaptive decay controller's row kernels. Every layer the controller
// runs on is stored densely (absent synapses carry a flag, since their
// phantom steps enter the controller's drive estimate), so stored synapse
// j of a row comes from pre unit j and each per-pre-unit word lines up
// with the row.

// ctrlCoef holds the constants of the controller's heavy-ball row step.
type ctrlCoef struct {
	mu, eta float32
	tiny    float32 // tinyVelocity
}

// ctrlSums are the controller's running sums of one update call: |Delta W|
// and |G| over the synapses that moved, |W| after the step over every
// synapse, each accumulated in float64 in synapse order.
type ctrlSums struct{ d, g, w float64 }

// ctrlStepRow is the optimiser pass of one dense row under the controller
// (no decay, no clamp: those follow once lambda is known): for each
// synapse j whose pre unit may move (flags[j]&flagFrozen == 0),
//
//	v[j] = flushTiny(mu*v[j] + g[j]); d = eta*v[j]
//	w[j] += d; fb[j] += d
//	s.d += |d|; s.g += |g[j]|
//
// and for every j, s.w += |w[j]| after the step. The sums run in ascending
// j in float64 (a frozen synapse adds +0 in the kernel, which leaves a
// non-negative sum's bits unchanged), so the vector kernel gives the
// loop's bits.
func ctrlStepRow(w, fb, v, g []float32, flags []int32, k *ctrlCoef, s *ctrlSums) {
	ctrlStepRowImpl(w, fb, v, g, flags, k, s)
}

func ctrlStepRowGo(w, fb, v, g []float32, flags []int32, k *ctrlCoef, s *ctrlSums) {
	fb, v, g, flags = fb[:len(w)], v[:len(w)], g[:len(w)], flags[:len(w)]
	for j := range w {
		if flags[j]&flagFrozen == 0 {
			gs := g[j]
			vs := flushTiny(float32(k.mu*v[j]) + gs)
			v[j] = vs
			d := float32(k.eta * vs)
			w[j] += d
			fb[j] += d
			s.d += math.Abs(float64(d))
			s.g += math.Abs(float64(gs))
		}
		s.w += math.Abs(float64(w[j]))
	}
}

// decayCoef holds the constants of the controller's decay pass.
type decayCoef struct {
	lam    float32
	hasLam int32 // apply the decay (the loop skips it at lambda 0)
	clampB int32 // all ones: the twin obeys Dale's law too (not no_dale_fb)
}

// ctrlDecayRow is the second pass of one dense row under the controller:
// for each synapse j whose pre unit may move (flags[j]&flagFrozen == 0),
//
//	x = w[j] - lam*w[j]; b = fb[j] - lam*fb[j]      (if hasLam)
//	x = 0 if it has the wrong Dale sign: x < 0 at flagExc, x > 0 at flagInh
//	b likewise if clampB
//	x, b = 0, 0 where absent[j] != 0 (the connectivity re-mask)
//
// The vector kernel performs the same float32 operations and comparisons,
// so both give identical bits, signed zeros included.
func ctrlDecayRow(w, fb []float32, flags, absent []int32, k *decayCoef) {
	ctrlDecayRowImpl(w, fb, flags, absent, k)
}

func ctrlDecayRowGo(w, fb []float32, flags, absent []int32, k *decayCoef) {
	fb, flags, absent = fb[:len(w)], flags[:len(w)], absent[:len(w)]
	for j, x := range w {
		f := flags[j]
		if f&flagFrozen != 0 {
			continue
		}
		b := fb[j]
		if k.hasLam != 0 {
			x -= float32(k.lam * x)
			b -= float32(k.lam * b)
		}
		if (f&flagExc != 0 && x < 0) || (f&flagInh != 0 && x > 0) {
			x = 0
		}
		if k.clampB != 0 && ((f&flagExc != 0 && b < 0) || (f&flagInh != 0 && b > 0)) {
			b = 0
		}
		if absent[j] != 0 {
			x, b = 0, 0
		}
		w[j], fb[j] = x, b
	}
}
