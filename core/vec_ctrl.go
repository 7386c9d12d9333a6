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

// ctrlSums are the controller's sums of one update call: |Delta W| and |G|
// over the synapses that moved, |W| after the step over every synapse. Each
// is kept in float64 as four partial sums: stored synapse j of a row
// (counted from the row's first) adds to partial j mod 4, in ascending j,
// and the call's sum is (p0 + p1) + (p2 + p3) (total). Partial sums are
// the vector kernel's lanes, so it adds four synapses in one instruction
// with the loop's bits on every CPU; a single running sum made each
// addition wait for the one before, a fifth of a deep net's run.
type ctrlSums struct{ d, g, w [4]float64 }

// addW adds |w[j]| of one row (from its first stored synapse) to the |W|
// partial sums.
func (s *ctrlSums) addW(w []float32) {
	for j, x := range w {
		s.w[j&3] += math.Abs(float64(x))
	}
}

// total returns the three sums of the call, each from its partial sums.
func (s *ctrlSums) total() (d, g, w float64) {
	sum := func(p *[4]float64) float64 { return (p[0] + p[1]) + (p[2] + p[3]) }
	return sum(&s.d), sum(&s.g), sum(&s.w)
}

// ctrlStepRow is the optimiser pass of one dense row under the controller
// (no decay, no clamp: those follow once lambda is known): for each
// synapse j whose pre unit may move (flags[j]&flagFrozen == 0),
//
//	v[j] = flushTiny(mu*v[j] + g[j]); d = eta*v[j]
//	w[j] += d; fb[j] += d
//	s.d[j&3] += |d|; s.g[j&3] += |g[j]|
//
// and for every j, s.w[j&3] += |w[j]| after the step, in float64 (a frozen
// synapse adds +0 in the kernel, which leaves a non-negative sum's bits
// unchanged), so the vector kernel gives the loop's bits. w starts at the
// row's first stored synapse (or a multiple of 4 after it).
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
			s.d[j&3] += math.Abs(float64(d))
			s.g[j&3] += math.Abs(float64(gs))
		}
		s.w[j&3] += math.Abs(float64(w[j]))
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
