package core

import (
	"fmt"
	"math"
)

// The substrate switches of LocalConfig: the constraints the appendix's
// substrate ladder adds one at a time (bounded error, Dale's law on weights
// and feedback, no weight transport, k-WTA, connectivity, burst gate and
// baseline, single-phase sweep instead of relaxation) and its replacements
// (weight mirroring, multiplicative burst coding, spike-count training).
// Every switch is off in the default system, whose forward pass, sweep and
// update run unchanged; the code here runs only when a switch is on.

// substrate holds the switches a net needs at run time.
type substrate struct {
	relaxT      int
	gamma       float32
	unbounded   bool
	burstMult   bool
	noBurstGate bool
	transport   bool
	spikeTrain  int
	spikeRNG    *RNG
	// spikeTape, when set (the differential check, refcheck_test.go),
	// replaces the Poisson draws of spike-count training: each call returns
	// the counts of the next n rates, in the reference's order.
	spikeTape func(n int) []float32
	// mirrorTape, when set (the differential check), replaces the mirror
	// night's normal draws: each call returns the next n values of xi, in
	// the reference's order (torch.randn(n, width), row-major).
	mirrorTape func(n int) []float32
	// direct: the sweep runs sweepDirect (unbounded or multiplicative burst).
	direct bool
}

// validateSubstrate checks the substrate switches.
func (c *LocalConfig) validateSubstrate() error {
	if len(c.ActiveFracs) != 0 {
		if len(c.ActiveFracs) != len(c.Hidden) {
			return badField("active_fracs", c.ActiveFracs, fmt.Sprintf("need one fraction per hidden layer (%d)", len(c.Hidden)))
		}
		for i, f := range c.ActiveFracs {
			if !(f > 0 && f <= 1) {
				return badField(fmt.Sprintf("active_fracs[%d]", i), f, "must be in (0, 1]")
			}
		}
		if c.NoKWTA {
			return badField("active_fracs", c.ActiveFracs, "no_kwta has no k-WTA fractions")
		}
	}
	switch {
	case c.RelaxT < 0:
		return badField("relax_t", c.RelaxT, "must be >= 0")
	case c.RelaxT > 0 && !(c.RelaxGamma > 0 && c.RelaxGamma <= 1):
		return badField("relax_gamma", c.RelaxGamma, "must be in (0, 1] with relax_t > 0")
	case c.RelaxT == 0 && c.RelaxGamma != 0:
		return badField("relax_gamma", c.RelaxGamma, "needs relax_t > 0")
	case c.Mirror < 0:
		return badField("mirror", c.Mirror, "must be >= 0")
	case c.Mirror > 0 && c.Transport:
		return badField("mirror", c.Mirror, "mirroring aligns the feedback twins, which transport does not have")
	case c.SpikeTrain < 0:
		return badField("spike_train", c.SpikeTrain, "must be >= 0")
	case c.BurstMult && c.NoBurstGate:
		return badField("no_burst_gate", c.NoBurstGate, "burst_mult replaces the burst gate; set one of them")
	case c.Transport && c.NoDaleFB:
		return badField("no_dale_fb", c.NoDaleFB, "transport has no feedback twins to clamp")
	case c.Transport && c.KPAdapt > 0:
		return badField("kp_adapt", c.KPAdapt, "transport has no Kolen-Pollack decay to adapt")
	}
	switch {
	case !(c.ThetaR >= 0):
		return badField("theta_r", c.ThetaR, "must be >= 0 (0 = 4)")
	case !(c.FracR >= 0 && c.FracR <= 1):
		return badField("frac_r", c.FracR, "must be in [0, 1] (0 = 0.25)")
	case !(c.UtilQ >= 0 && c.UtilQ <= 1):
		return badField("util_q", c.UtilQ, "must be in [0, 1] (0 = 0.25)")
	case !(c.ReplayNoise >= 0):
		return badField("replay_noise", c.ReplayNoise, "must be >= 0")
	case c.SP != "" && c.SP != "local" && c.SP != "epoch" && c.SP != "night":
		return badField("sp", c.SP, `must be "", "local", "epoch" or "night"`)
	case !(c.SPRho >= 0 && c.SPRho < 1):
		return badField("sp_rho", c.SPRho, "must be in [0, 1) (0 = 0.05)")
	case c.SPEvery < 0:
		return badField("sp_every", c.SPEvery, "must be >= 0 (0 = 128)")
	case c.SP != "" && !(c.ConnDensity < 1):
		return badField("sp", c.SP, "structural plasticity needs sparse connectivity (conn_density < 1)")
	case c.SP != "" && (c.KPAdapt > 0 || c.Skip || c.Transport):
		return badField("sp", c.SP, "structural plasticity runs without kp_adapt, skip and transport")
	case c.SP == "night" && !c.Night:
		return badField("sp", c.SP, `"night" needs night = true`)
	}
	if c.Skip && (c.Transport || c.RelaxT > 0 || c.BurstMult || c.NoBurstGate || c.NoDale || c.NoDaleFB || c.Mirror > 0 || c.Unbounded) {
		return badField("skip", c.Skip, "skip synapses run only on the default substrate")
	}
	return nil
}

// newSubstrate returns the run-time switches of cfg; seed seeds the spike
// counts' stream.
func newSubstrate(cfg *LocalConfig, seed int64) substrate {
	s := substrate{relaxT: cfg.RelaxT, gamma: float32(cfg.RelaxGamma), unbounded: cfg.Unbounded,
		burstMult: cfg.BurstMult, noBurstGate: cfg.NoBurstGate, transport: cfg.Transport,
		spikeTrain: cfg.SpikeTrain, direct: cfg.Unbounded || cfg.BurstMult}
	if cfg.SpikeTrain > 0 {
		s.spikeRNG = NewRNG(seed, StreamSpike)
	}
	return s
}

// kwtaK returns the k-WTA winners of hidden layer l (1-based) of width n.
func (c *LocalConfig) kwtaK(l, n int) int {
	switch {
	case c.NoKWTA:
		return n
	case len(c.ActiveFracs) != 0:
		return KWTAK(c.ActiveFracs[l-1], n)
	}
	return KWTAK(c.ActiveFrac, n)
}

// settle runs a batch's forward pass and top-down errors for an update:
// the single-phase sweep (default), or the iterative relaxation. train
// marks a waking batch: spike-count noise applies to it only (the
// reference switches training off for replay and night batches).
func (nt *net) settle(p *pass, sup [][]float32, tgtScale float32, train bool) {
	p.train = train
	if nt.sub.relaxT > 0 {
		nt.relax(p, sup, tgtScale)
		return
	}
	nt.forward(p, sup)
	if nt.sub.direct {
		nt.sweepDirect(p, tgtScale)
		return
	}
	nt.sweep(p, tgtScale)
}

// bound returns the burst channel's function of the error: kappa
// tanh(e/kappa), or e itself when unbounded.
func (nt *net) bound(e float32) float32 {
	if nt.sub.unbounded {
		return e
	}
	return nt.kappa * float32(math.Tanh(float64(e/nt.kappa)))
}

// errUp returns the burst signal hidden or readout unit i of layer l sends
// down on sample b: the bounded error, gated by a > 0 (burst gate) or
// multiplied by the rate (burst_mult) for a hidden layer.
func (nt *net) errUp(p *pass, l, b, i int) float32 {
	n := nt.sizes[l]
	if l == nt.L {
		return p.th[l][b*n+i]
	}
	u := p.th[l][b*n+i]
	a := p.a[l][b*n+i]
	switch {
	case nt.sub.burstMult:
		if a == 0 {
			return 0 // th may be stale off the active set (relax)
		}
		return u * a
	case !nt.sub.noBurstGate && a <= 0:
		return 0
	}
	return u
}

// topDown adds to td (layer l's units) the burst of layer l+1 on sample b
// through the feedback twin B^l: td_j += sum_i errUp_i B^l_ij, ascending i.
func (nt *net) topDown(p *pass, l, b int, td []float32) {
	up := nt.lay[l+1]
	row := func(i int) {
		u := nt.errUp(p, l+1, b, i)
		if u == 0 {
			return
		}
		lo, hi := up.rowPtr[i], up.rowPtr[i+1]
		fb, col := up.fb[lo:hi], up.col[lo:hi]
		for s, j := range col {
			td[j] += u * fb[s]
		}
	}
	if l+1 < nt.L && !nt.sub.noBurstGate {
		// Gated or rate-multiplied: only active units send (the same
		// terms in the same ascending order as over every unit).
		for _, i := range p.activeOf(l+1, b) {
			row(int(i))
		}
		return
	}
	for i := range up.nOut {
		row(i)
	}
}

// topDownActive returns topDown's sum at the active units act of layer l
// on sample b (acc[k] for unit act[k]), in the same ascending order of
// senders: through the twin's index map for a twin between hidden layers,
// by row for the dense readout twin.
func (nt *net) topDownActive(p *pass, l, b int, act []int32) []float32 {
	up := nt.lay[l+1]
	acc := p.zbuf[:len(act)]
	clear(acc)
	us, offs := p.valBuf[:0], p.offBuf[:0]
	send := func(i int) {
		if u := nt.errUp(p, l+1, b, i); u != 0 {
			us = append(us, u)
			offs = append(offs, int32(i*up.nIn))
		}
	}
	if l+1 < nt.L && !nt.sub.noBurstGate {
		for _, i := range p.activeOf(l+1, b) {
			send(int(i))
		}
	} else {
		for i := range up.nOut {
			send(i)
		}
	}
	switch {
	case up.fbPos != nil:
		twinAtActive(acc, us, offs, up, act, p.tmp)
	case len(up.col) == up.nOut*up.nIn:
		// Dense twin (the readout's): row i starts at i*nIn.
		for r, u := range us {
			row := up.fb[offs[r]:]
			for k, j := range act {
				acc[k] += u * row[j]
			}
		}
	default:
		td := p.tmp[:nt.sizes[l]]
		clear(td)
		nt.topDown(p, l, b, td)
		for k, j := range act {
			acc[k] = td[j]
		}
	}
	return acc
}

// sweepDirect is the single-phase burst sweep written out for the substrate
// switches (unbounded error, multiplicative burst): eps^L = y - z^L, and for
// hidden l, eps^l = 1[a^l > 0] sum_i errUp^{l+1}_i B^l_i, th = bound(eps).
func (nt *net) sweepDirect(p *pass, tgtScale float32) {
	L := nt.L
	C := nt.sizes[L]
	for b := range p.n {
		for i := range C {
			var t float32
			if int32(i) == p.y[b] {
				t = tgtScale
			}
			e := t - p.z[b*C+i]
			p.eps[L][b*C+i] = e
			p.th[L][b*C+i] = nt.bound(e)
		}
		for l := L - 1; l >= 1; l-- {
			n := nt.sizes[l]
			td := p.tmp[:n]
			clear(td)
			nt.topDown(p, l, b, td)
			e := p.eps[l][b*n : (b+1)*n]
			t := p.th[l][b*n : (b+1)*n]
			clear(e)
			clear(t)
			for _, j := range p.activeOf(l, b) {
				e[j] = td[j]
				t[j] = nt.bound(td[j])
			}
		}
	}
}

// mu writes layer l's drive on sample b, b^l + W^l a^{l-1}, to z (layer 1:
// the drive the forward pass computed, which relaxation never changes).
func (nt *net) mu(p *pass, l, b int, z []float32) {
	ly := nt.lay[l]
	if l == 1 {
		copy(z, p.z1[b*ly.nOut:(b+1)*ly.nOut])
		return
	}
	copy(z, ly.bias)
	ly.scatter(z, p.activeOf(l-1, b), nil, p.a[l-1][b*ly.nIn:(b+1)*ly.nIn], p.offBuf, p.valBuf)
}

// relax is the reference's prospective-configuration settling: after the
// forward pass the hidden value nodes v^l start at their drives and, with
// input and target clamped, take relaxT steps
//
//	eps^l = v^l - mu^l(a^{l-1})  (all layers, at the step's start; eps^L = y - mu^L)
//	v^l  += gamma (-eps^l + 1[a^l > 0] sum_i errUp^{l+1}_i B^l_i),  a^l = act(v^l),
//
// layer by layer upward (layer l's step sees layer l+1's activity of the
// previous step). The errors of the settled state are then recomputed and
// bounded for the update: dense on hidden layers, unlike the sweep's.
func (nt *net) relax(p *pass, sup [][]float32, tgtScale float32) {
	nt.forward(p, sup)
	L := nt.L
	if p.v == nil {
		p.v = make([][]float32, L)
		for l := 1; l < L; l++ {
			p.v[l] = make([]float32, p.cap*nt.sizes[l])
		}
	}
	for l := 1; l < L; l++ {
		n := nt.sizes[l]
		for b := range p.n {
			nt.mu(p, l, b, p.v[l][b*n:(b+1)*n])
		}
	}
	for range nt.sub.relaxT {
		nt.relaxErrors(p, tgtScale, false)
		for l := 1; l < L; l++ {
			n := nt.sizes[l]
			gain := p.gainOf(l, n, sup)
			// All samples' top-down input first: it reads a^l (the burst
			// gate's dact) before this step rewrites it.
			for b := range p.n {
				v := p.v[l][b*n : (b+1)*n]
				e := p.eps[l][b*n : (b+1)*n]
				act := p.activeOf(l, b)
				td := nt.topDownActive(p, l, b, act)
				// v += gamma (-eps + 1[a > 0] td), computed as v -=
				// gamma (eps - td) with td only at the active units
				// (the same rounding: negation is exact). eps is
				// recomputed before anything reads it again.
				for k, j := range act {
					e[j] -= td[k]
				}
				g := nt.sub.gamma
				for j, ej := range e {
					v[j] -= g * ej
				}
			}
			p.act[l] = p.act[l][:0]
			for b := range p.n {
				nt.activate(p, l, b, p.v[l][b*n:(b+1)*n], gain)
			}
		}
	}
	nt.relaxErrors(p, tgtScale, true)
	C := nt.sizes[L]
	for b := range p.n {
		nt.mu(p, L, b, p.z[b*C:(b+1)*C])
	}
}

// relaxErrors sets eps^l = v^l - mu^l for every hidden layer and eps^L = y
// - mu^L, and th = bound(eps): everywhere when all (the settled state, for
// the update), else only where a settling step reads it (the readout, and
// the sending units of hidden layers above the first).
func (nt *net) relaxErrors(p *pass, tgtScale float32, all bool) {
	L := nt.L
	for l := 1; l <= L; l++ {
		n := nt.sizes[l]
		z := p.tmp[:n]
		for b := range p.n {
			nt.mu(p, l, b, z)
			e := p.eps[l][b*n : (b+1)*n]
			t := p.th[l][b*n : (b+1)*n]
			if l == L {
				for i := range e {
					var target float32
					if int32(i) == p.y[b] {
						target = tgtScale
					}
					e[i] = target - z[i]
					t[i] = nt.bound(e[i])
				}
				continue
			}
			v := p.v[l][b*n : (b+1)*n]
			for i := range e {
				e[i] = v[i] - z[i]
			}
			switch {
			case all || (l > 1 && nt.sub.noBurstGate):
				for i := range e {
					t[i] = nt.bound(e[i])
				}
			case l > 1:
				for _, i := range p.activeOf(l, b) {
					t[i] = nt.bound(e[i])
				}
			}
		}
	}
}

// spikeRate writes a = Poisson(relu(z) T_s)/T_s * g: the rate known only
// through its spike count in a window of T_s steps, then the suppression
// gain (the reference's order).
func (nt *net) spikeRate(a, z, g []float32) {
	ts := float64(nt.sub.spikeTrain)
	var taped []float32
	if nt.sub.spikeTape != nil {
		taped = nt.sub.spikeTape(len(a))
	}
	for i := range a {
		r := max(z[i], 0)
		var c float64
		switch {
		case taped != nil:
			c = float64(taped[i])
		case r > 0:
			c = float64(Poisson(nt.sub.spikeRNG, float64(r)*ts))
		}
		a[i] = float32(c/ts) * g[i]
	}
}

// Poisson draws a Poisson variate of mean lam >= 0: by multiplying uniforms
// below 10, and by Hormann's transformed rejection (PTRS, as numpy) above.
func Poisson(rng *RNG, lam float64) int {
	if lam <= 0 {
		return 0
	}
	if lam < 10 {
		limit := math.Exp(-lam)
		k, prod := 0, rng.Float64()
		for prod > limit {
			k++
			prod *= rng.Float64()
		}
		return k
	}
	slam, loglam := math.Sqrt(lam), math.Log(lam)
	b := 0.931 + 2.53*slam
	a := -0.059 + 0.02483*b
	invAlpha := 1.1239 + 1.1328/(b-3.4)
	vr := 0.9277 - 3.6224/(b-2)
	for {
		u := rng.Float64() - 0.5
		v := rng.Float64()
		us := 0.5 - math.Abs(u)
		k := math.Floor((2*a/us+b)*u + lam + 0.43)
		if us >= 0.07 && v <= vr {
			return int(k)
		}
		if k < 0 || (us < 0.013 && v > us) {
			continue
		}
		lg, _ := math.Lgamma(k + 1)
		if math.Log(v)+math.Log(invAlpha)-math.Log(a/(us*us)+b) <= -lam+k*loglam-lg {
			return int(k)
		}
	}
}

// mirrorPhase is the weight-mirror night (Akrout et al. 2019, the
// reference's mirror_phase): per batch and per twin layer l = 2..L, noise xi
// ~ N(0, 1) in layer l-1 (n samples) is projected through W^l, and B^{l-1}
// moves toward the Hebbian product of projection and noise with a matched
// decay, B <- (1 - 0.01) B + 0.01 y^T xi / n, whose fixed point is B = W in
// expectation; then the connectivity mask (absent synapses are not stored)
// and the Dale clamp of the twins.
func (r *localRun) mirrorPhase() {
	const etaM = 0.01
	nt, n := r.nt, r.cfg.BatchWake
	for range r.cfg.Mirror {
		for l := 2; l <= nt.L; l++ {
			ly := nt.lay[l]
			var xi []float32
			if nt.sub.mirrorTape != nil {
				xi = nt.sub.mirrorTape(n * ly.nIn)
			} else {
				xi = make([]float32, n*ly.nIn)
				for k := range xi {
					xi[k] = float32(r.rng.NormFloat64())
				}
			}
			y := make([]float32, n*ly.nOut)
			for b := range n {
				x := xi[b*ly.nIn : (b+1)*ly.nIn]
				for i := range ly.nOut {
					var acc float32
					for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
						acc += ly.w[s] * x[ly.col[s]]
					}
					y[b*ly.nOut+i] = acc
				}
			}
			for i := range ly.nOut {
				for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
					j := ly.col[s]
					var h float32
					for b := range n {
						h += y[b*ly.nOut+i] * xi[b*ly.nIn+int(j)]
					}
					fb := (1-etaM)*ly.fb[s] + etaM*h/float32(n)
					if ly.absent != nil && ly.absent[s] {
						fb = 0
					}
					ly.fb[s] = ly.daleFB(j, fb)
				}
			}
		}
	}
}

// daleFB clamps a twin synapse from pre unit j onto the unit's sign (Dale
// on the feedback), unless the layer has no signs or its twin is exempt.
func (ly *layer) daleFB(j int32, b float32) float32 {
	if ly.sign == nil || ly.fbNoDale {
		return b
	}
	if sg := ly.sign[j]; (sg > 0 && b < 0) || (sg < 0 && b > 0) {
		return 0
	}
	return b
}

// gainOf returns the suppression gain 1 - s of hidden layer l (all ones
// without suppression) in p's scratch.
func (p *pass) gainOf(l, n int, sup [][]float32) []float32 {
	if sup == nil {
		return p.ones[:n]
	}
	g := p.gain[:n]
	for i, s := range sup[l] {
		g[i] = 1 - s
	}
	return g
}

// burstTerms lists the plasticity terms (i, b, e) of hidden layer l without
// the burst gate (every unit, e = th - ebar, ascending b then i) or under
// multiplicative burst coding (active units, e = (th - ebar) a).
func (nt *net) burstTerms(p *pass, l int, fn func(i, b int, e float32)) {
	nh := nt.sizes[l]
	th, ebar := p.th[l], nt.ebar[l]
	for b := range p.n {
		t := th[b*nh : (b+1)*nh]
		if nt.sub.burstMult {
			a := p.a[l][b*nh : (b+1)*nh]
			for _, i := range p.activeOf(l, b) {
				fn(int(i), b, (t[i]-ebar[i])*a[i])
			}
			continue
		}
		for i := range nh {
			fn(i, b, t[i]-ebar[i])
		}
	}
}
