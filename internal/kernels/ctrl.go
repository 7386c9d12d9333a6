package kernels

import "math"

// The adaptive decay controller's row kernels. Every layer the controller
// runs on is stored densely (absent synapses carry a flag, since their
// phantom steps enter the controller's drive estimate), so stored synapse
// j of a row comes from pre unit j and each per-pre-unit word lines up
// with the row.

// CtrlCoef holds the constants of the controller's heavy-ball row step.
// Its fields are read by the vector kernel at fixed offsets.
type CtrlCoef struct {
	mu, eta float32
	tiny    float32 // TinyVelocity
}

// NewCtrlCoef returns CtrlStepRow's constants: momentum mu, step eta.
func NewCtrlCoef(mu, eta float32) CtrlCoef {
	return CtrlCoef{mu: mu, eta: eta, tiny: TinyVelocity}
}

// CtrlSums are the controller's sums of one update call: |Delta W| and |G|
// over the synapses that moved, |W| after the step over every synapse. Each
// is kept in float64 as four partial sums: stored synapse j of a row
// (counted from the row's first) adds to partial j mod 4, in ascending j,
// and the call's sum is (p0 + p1) + (p2 + p3) (total). Partial sums are
// the vector kernel's lanes, so it adds four synapses in one instruction
// with the loop's bits on every CPU; a single running sum made each
// addition wait for the one before, a fifth of a deep net's run.
type CtrlSums struct{ D, G, W [4]float64 }

// addW adds |w[j]| of one row (from its first stored synapse) to the |W|
// partial sums.
func (s *CtrlSums) AddW(w []float32) {
	for j, x := range w {
		s.W[j&3] += math.Abs(float64(x))
	}
}

// total returns the three sums of the call, each from its partial sums.
func (s *CtrlSums) Total() (d, g, w float64) {
	sum := func(p *[4]float64) float64 { return (p[0] + p[1]) + (p[2] + p[3]) }
	return sum(&s.D), sum(&s.G), sum(&s.W)
}

// CtrlStepRow is the optimiser pass of one dense row under the controller
// (no decay, no clamp: those follow once lambda is known): for each
// synapse j whose pre unit may move (flags[j]&FlagFrozen == 0),
//
//	v[j] = FlushTiny(mu*v[j] + g[j]); d = eta*v[j]
//	w[j] += d; fb[j] += d
//	s.D[j&3] += |d|; s.G[j&3] += |g[j]|
//
// and for every j, s.W[j&3] += |w[j]| after the step, in float64 (a frozen
// synapse adds +0 in the kernel, which leaves a non-negative sum's bits
// unchanged), so the vector kernel gives the loop's bits. w starts at the
// row's first stored synapse (or a multiple of 4 after it).
func CtrlStepRow(w, fb, v, g []float32, flags []int32, k *CtrlCoef, s *CtrlSums) {
	ctrlStepRowImpl(w, fb, v, g, flags, k, s)
}

func ctrlStepRowGo(w, fb, v, g []float32, flags []int32, k *CtrlCoef, s *CtrlSums) {
	fb, v, g, flags = fb[:len(w)], v[:len(w)], g[:len(w)], flags[:len(w)]
	for j := range w {
		if flags[j]&FlagFrozen == 0 {
			gs := g[j]
			vs := FlushTiny(float32(k.mu*v[j]) + gs)
			v[j] = vs
			d := float32(k.eta * vs)
			w[j] += d
			fb[j] += d
			s.D[j&3] += math.Abs(float64(d))
			s.G[j&3] += math.Abs(float64(gs))
		}
		s.W[j&3] += math.Abs(float64(w[j]))
	}
}

// DecayCoef holds the constants of the controller's decay pass.
// Its fields are read by the vector kernel at fixed offsets.
type DecayCoef struct {
	lam    float32
	hasLam int32 // apply the decay (the loop skips it at lambda 0)
	clampB int32 // all ones: the twin obeys Dale's law too (not no_dale_fb)
}

// NewDecayCoef returns CtrlDecayRow's constants: decay lam, and whether
// the twin obeys Dale's law too (clampB).
func NewDecayCoef(lam float32, clampB bool) DecayCoef {
	k := DecayCoef{lam: lam}
	if lam != 0 {
		k.hasLam = 1
	}
	if clampB {
		k.clampB = -1
	}
	return k
}

// CtrlDecayRow is the second pass of one dense row under the controller:
// for each synapse j whose pre unit may move (flags[j]&FlagFrozen == 0),
//
//	x = w[j] - lam*w[j]; b = fb[j] - lam*fb[j]      (if hasLam)
//	x = 0 if it has the wrong Dale sign: x < 0 at FlagExc, x > 0 at FlagInh
//	b likewise if clampB
//	x, b = 0, 0 where absent[j] != 0 (the connectivity re-mask)
//
// The vector kernel performs the same float32 operations and comparisons,
// so both give identical bits, signed zeros included.
func CtrlDecayRow(w, fb []float32, flags, absent []int32, k *DecayCoef) {
	ctrlDecayRowImpl(w, fb, flags, absent, k)
}

func ctrlDecayRowGo(w, fb []float32, flags, absent []int32, k *DecayCoef) {
	fb, flags, absent = fb[:len(w)], flags[:len(w)], absent[:len(w)]
	for j, x := range w {
		f := flags[j]
		if f&FlagFrozen != 0 {
			continue
		}
		b := fb[j]
		if k.hasLam != 0 {
			x -= float32(k.lam * x)
			b -= float32(k.lam * b)
		}
		if (f&FlagExc != 0 && x < 0) || (f&FlagInh != 0 && x > 0) {
			x = 0
		}
		if k.clampB != 0 && ((f&FlagExc != 0 && b < 0) || (f&FlagInh != 0 && b > 0)) {
			b = 0
		}
		if absent[j] != 0 {
			x, b = 0, 0
		}
		w[j], fb[j] = x, b
	}
}
