package core

import (
	"math"
	"slices"
)

// The appendix's rotation and consolidation variants: rotation forced by
// accumulated unit pressure (refr_press, refr_frac), utility-exempt
// rotation (refr_util), the gate duty of every gated rotation, replay
// noise, and structural plasticity anchored to replay. All are off in the
// default system.

// extraState is the run state of these variants.
type extraState struct {
	restP   [][]float64 // per-unit rest pressure (refr_press, refr_frac)
	longUse [][]float64 // long-term use trace, from 0.5 (refr_util)
	gateOn  int         // waking batches whose next batch rotates (gated variants)
	spCtr   int         // replay micro-batches since the start (sp = "local")
}

// GatedRotation reports whether the run's rotation is gated, i.e. on for
// some waking batches only, so that its duty is logged (Result.GateDuty).
func (c *LocalConfig) GatedRotation() bool {
	m := c.modes()
	return m.gate.gatesRotation() || m.mask == maskRefrPress || m.mask == maskRefrFrac
}

// orDefault returns v, or def when v is 0 (the omitted setting).
func orDefault(v, def float64) float64 {
	if v == 0 {
		return def
	}
	return v
}

// batchFired writes to frac, per unit of hidden layer l, the fraction of the
// pass's samples on which it fired.
func batchFired(p *pass, l int, frac []float64) {
	clear(frac)
	for b := range p.n {
		for _, i := range p.activeOf(l, b) {
			frac[i]++
		}
	}
	for i := range frac {
		frac[i] /= float64(p.n)
	}
}

// pressureRest fills s (layer l's next suppression) for refr_press and
// refr_frac: each unit's rest pressure S gains the fraction of the batch on
// which it fired; refr_press benches the units with S >= theta_r, refr_frac
// the top frac_r of units by S (ties at the threshold included, S > 0
// only); the benched units' pressure is discharged by the rest they are
// about to take. It reports whether any unit was benched.
func (r *localRun) pressureRest(p *pass, l int, s []float32) bool {
	cfg := r.cfg
	n := r.nt.sizes[l]
	if r.ext.restP == nil {
		r.ext.restP = make([][]float64, r.nt.L)
		for k := 1; k < r.nt.L; k++ {
			r.ext.restP[k] = make([]float64, r.nt.sizes[k])
		}
	}
	S := r.ext.restP[l]
	frac := make([]float64, n)
	batchFired(p, l, frac)
	for i := range S {
		S[i] += frac[i]
	}
	thr := orDefault(cfg.ThetaR, 4)
	if r.nt.mode.mask == maskRefrFrac {
		k := max(1, int(math.RoundToEven(orDefault(cfg.FracR, 0.25)*float64(n))))
		thr = kthLargest64(S, k)
	}
	any := false
	for i, v := range S {
		if v >= thr && (r.nt.mode.mask == maskRefrPress || v > 0) {
			s[i] = 1
			S[i] = 0
			any = true
		}
	}
	return any
}

// utilityRest fills s for refr_util: the fired units sit out the next
// competition unless they are among the top util_q of the layer by
// long-term use (the trace of the previous batches; it is advanced after
// the awake sets, see advanceUse).
func (r *localRun) utilityRest(p *pass, l int, s []float32, fired []bool) {
	r.initUse()
	u := r.ext.longUse[l]
	k := max(1, int(math.RoundToEven(orDefault(r.cfg.UtilQ, 0.25)*float64(len(u)))))
	thr := kthLargest64(u, k)
	for i, f := range fired {
		if f && u[i] < thr {
			s[i] = 1
		}
	}
}

func (r *localRun) initUse() {
	if r.ext.longUse != nil {
		return
	}
	r.ext.longUse = make([][]float64, r.nt.L)
	for l := 1; l < r.nt.L; l++ {
		u := make([]float64, r.nt.sizes[l])
		for i := range u {
			u[i] = 0.5
		}
		r.ext.longUse[l] = u
	}
}

// advanceUse updates the long-term use trace with the waking batch:
// u <- 0.995 u + 0.005 (fraction of the batch on which the unit fired).
func (r *localRun) advanceUse(p *pass) {
	if r.nt.mode.mask != maskRefrUtil {
		return
	}
	r.initUse()
	for l := 1; l < r.nt.L; l++ {
		frac := make([]float64, r.nt.sizes[l])
		batchFired(p, l, frac)
		for i, f := range frac {
			r.ext.longUse[l][i] = 0.995*r.ext.longUse[l][i] + 0.005*f
		}
	}
}

// kthLargest64 returns the k-th largest value of v (1 <= k <= len(v)).
func kthLargest64(v []float64, k int) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	return s[len(s)-k]
}

// addReplayNoise adds Gaussian noise of s.d. ReplayNoise, drawn from the run
// generator, to the inputs of a replay or night batch.
func (r *localRun) addReplayNoise(rp *pass) {
	sd := r.cfg.ReplayNoise
	if sd == 0 {
		return
	}
	x := rp.x[:rp.n*r.nt.sizes[0]]
	for k := range x {
		x[k] += float32(sd * r.rng.NormFloat64())
	}
}

// afterReplay counts a replay micro-batch for structural plasticity
// anchored to replay (sp = "local"): every sp_every of them.
func (r *localRun) afterReplay() {
	if r.cfg.SP != "local" {
		return
	}
	r.ext.spCtr++
	if r.ext.spCtr%int(orDefault(float64(r.cfg.SPEvery), 128)) == 0 {
		r.structural()
	}
}

// structural is the reference's structural plasticity: in every layer with
// sparse connectivity (W^1 .. W^{L-1}), the weakest sp_rho of the existing
// synapses (by |W|) are pruned and as many absent ones are born, drawn
// without replacement by the layer's connection propensity (distance
// dependent or uniform, as its connectivity); a new synapse starts at
// N(0, 0.01^2) with a fresh optimiser state, its twin at 0; then the Dale
// clamp. Port note: the reference keeps optimiser state for absent twin
// synapses (phantom updates of dense gradients) and a reborn twin resumes
// it; here a reborn synapse's shared state starts at zero.
func (r *localRun) structural() {
	cfg, nt := r.cfg, r.nt
	rho := orDefault(cfg.SPRho, 0.05)
	for l := 1; l < nt.L; l++ {
		ly := nt.lay[l]
		alive := len(ly.col)
		nSwap := int(math.RoundToEven(rho * float64(alive)))
		if nSwap == 0 {
			continue
		}
		nIn, nOut := ly.nIn, ly.nOut
		dm := ly.denseMatrices()
		pruned := weakest(ly.w, nSwap)
		// Birth among the absent synapses (before the pruning).
		born := r.drawBirths(l, dm.keep, nSwap)
		for s, f := range dm.at {
			if pruned[s] {
				dm.keep[f], dm.W[f] = false, 0
				if dm.B != nil {
					dm.B[f] = 0
				}
			}
		}
		for _, f := range born {
			dm.keep[f] = true
			dm.W[f] = float32(r.rng.NormFloat64() * 0.01)
			if dm.B != nil {
				dm.B[f] = 0
			}
		}
		if ly.sign != nil {
			daleClamp(dm.W, ly.sign)
		}
		nl := newLayer(nIn, nOut, dm.W, dm.B, dm.keep, false, ly.sign, ly.m2 != nil, ly.tiled)
		nl.fbNoDale, nl.noBias = ly.fbNoDale, ly.noBias
		nl.inheritOpt(ly, dm.at, pruned)
		if ly.fb != nil && l < nt.L {
			nl.indexTwin()
		}
		nt.lay[l] = nl
		if l == 1 {
			nt.staleC = true
		}
	}
}

// denseLayer is a layer's stored synapses laid out row-major over every
// (post, pre) pair: W and its twin B (nil without one), the keep mask, and
// at, each stored synapse's flat index.
type denseLayer struct {
	W, B []float32
	keep []bool
	at   []int32
}

// denseMatrices lays the layer's synapses out densely (0 and keep false
// where a synapse is not stored).
func (ly *layer) denseMatrices() denseLayer {
	nIn, nOut := ly.nIn, ly.nOut
	dm := denseLayer{W: make([]float32, nIn*nOut), keep: make([]bool, nIn*nOut), at: make([]int32, len(ly.col))}
	if ly.fb != nil {
		dm.B = make([]float32, nIn*nOut)
	}
	for i := range nOut {
		for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
			f := int32(i*nIn) + ly.col[s]
			dm.at[s] = f
			dm.keep[f] = true
			dm.W[f] = ly.w[s]
			if dm.B != nil {
				dm.B[f] = ly.fb[s]
			}
		}
	}
	return dm
}

// weakest marks the n stored synapses of smallest |w| (ties by position).
func weakest(w []float32, n int) []bool {
	order := make([]int32, len(w))
	for s := range order {
		order[s] = int32(s)
	}
	slices.SortStableFunc(order, func(a, b int32) int {
		wa, wb := math.Abs(float64(w[a])), math.Abs(float64(w[b]))
		switch {
		case wa < wb:
			return -1
		case wa > wb:
			return 1
		}
		return 0
	})
	pruned := make([]bool, len(w))
	for _, s := range order[:n] {
		pruned[s] = true
	}
	return pruned
}

// inheritOpt gives the synapses of the rewired layer ly that survive from
// old (stored at flat index at[s] there, not pruned) their optimiser state
// back; the born ones keep the zero start. Biases keep their values and
// state.
func (ly *layer) inheritOpt(old *layer, at []int32, pruned []bool) {
	from := map[int32]int32{}
	for s, f := range at {
		if !pruned[s] {
			from[f] = int32(s)
		}
	}
	for i := range ly.nOut {
		for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
			if o, ok := from[int32(i*ly.nIn)+ly.col[s]]; ok {
				ly.m1[s] = old.m1[o]
				if old.m2 != nil {
					ly.m2[s] = old.m2[o]
				}
			}
		}
	}
	copy(ly.bias, old.bias)
	copy(ly.bm1, old.bm1)
	if old.bm2 != nil {
		copy(ly.bm2, old.bm2)
	}
}

// drawBirths draws n absent synapses of W^l (flat indices where keep is
// false) without replacement, by the distance propensity exp(-d/lambda)
// (Efraimidis-Spirakis keys, as connMask) or uniformly, as the layer's
// connectivity was drawn.
func (r *localRun) drawBirths(l int, keep []bool, n int) []int32 {
	cfg, nt := r.cfg, r.nt
	var dead []int32
	for f, k := range keep {
		if !k {
			dead = append(dead, int32(f))
		}
	}
	n = min(n, len(dead))
	if cfg.ConnMode == "random" {
		perm := r.rng.Perm(len(dead))
		out := make([]int32, n)
		for k := range out {
			out[k] = dead[perm[k]]
		}
		return out
	}
	nIn := nt.sizes[l-1]
	var pre [][2]float64
	if l == 1 {
		pre = sheet(nIn, r.train.Height, r.train.Width)
	} else {
		pre = sheet(nIn, 0, 0)
	}
	post := sheet(nt.sizes[l], 0, 0)
	keys := make([]float64, len(dead))
	for k, f := range dead {
		i, j := int(f)/nIn, int(f)%nIn
		dy, dx := post[i][0]-pre[j][0], post[i][1]-pre[j][1]
		keys[k] = math.Log(r.rng.Float64()) / math.Exp(-math.Sqrt(dy*dy+dx*dx)/cfg.ConnLambda)
	}
	idx := make([]int, len(dead))
	for k := range idx {
		idx[k] = k
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case keys[a] > keys[b]:
			return -1
		case keys[a] < keys[b]:
			return 1
		}
		return 0
	})
	out := make([]int32, n)
	for k := range out {
		out[k] = dead[idx[k]]
	}
	return out
}
