package core

import (
	"math"

	"repro/internal/kernels"
)

// layerMask is the replay (or mirror) mask of one layer's synapses: synapse
// (i, j) may move iff post i is not awake or pre j is not awake, i.e. M =
// 1 - post_awake (x) pre_awake; the bias of i moves iff i is
// not awake. A nil *layerMask means unmasked.
type layerMask struct {
	frozen  bool   // nothing moves (hidden layers under readout-only replay)
	post    []bool // awake post units (nil: none awake)
	pre     []bool // awake pre units (nil: none awake)
	preAll  bool   // every pre unit awake (the input layer)
	postAll bool   // every post unit awake (isolated readout)
}

func (m *layerMask) postAwake(i int) bool {
	return m.postAll || (m.post != nil && m.post[i])
}

// synFree reports whether synapse (i, j) may move (true for a nil mask).
func (m *layerMask) synFree(i, j int) bool {
	switch {
	case m == nil:
		return true
	case m.frozen:
		return false
	case !m.postAwake(i):
		return true
	case m.preAll:
		return false
	}
	return m.pre == nil || !m.pre[j]
}

// biasFree reports whether the bias of unit i may move.
func (m *layerMask) biasFree(i int) bool {
	return m == nil || (!m.frozen && !m.postAwake(i))
}

// rowFrozen reports whether no synapse of row i may move.
func (m *layerMask) rowFrozen(i int) bool {
	return m.frozen || (m.postAwake(i) && m.preAll)
}

// optim holds the optimiser constants of one update call.
type optim struct {
	adam     bool
	mu       float32
	eta      float32
	b1, b2   float32
	bc1, bc2 float32 // bias corrections 1 - beta^t
	eps      float32
	leak     bool
}

// update is one local_update call: for every layer in
// order the plasticity signal, the local product, the optimiser step of W,
// b and the twin B, the decay; then the anchor (waking calls), the Dale
// clamp and the connectivity re-mask, which the sparse storage fuses into
// the per-synapse pass. masks is nil for an unmasked call, otherwise indexed
// by layer. replay says whether the call does the waking bookkeeping: a
// replay call leaves the burst baseline and the anchor alone and freezes the
// controller's EMA. The masks decide which synapses move; replay is a
// separate flag because the mirror's masked waking update is masked but
// keeps the waking bookkeeping (the reference's caller passes replay=False
// with the mask), and the offline night's unmasked replay is unmasked and
// does it too.
func (nt *net) update(cfg *LocalConfig, p *pass, eta float64, masks []*layerMask, replay bool) {
	nt.t++
	op := optim{adam: nt.mode.opt == optAdam, mu: float32(cfg.Momentum), eta: float32(eta),
		b1: 0.9, b2: 0.999, eps: float32(cfg.AdamEps), leak: cfg.LeakMoments && masks != nil}
	if op.adam {
		op.bc1 = float32(1 - math.Pow(0.9, float64(nt.t)))
		op.bc2 = float32(1 - math.Pow(0.999, float64(nt.t)))
	}
	anchor := len(cfg.Anchor) == 2 && !replay
	if anchor {
		for l := 1; l <= nt.L; l++ {
			nt.lay[l].anchorStart(cfg.Anchor[0], cfg.Anchor[1])
		}
	}
	for l := 1; l <= nt.L; l++ {
		var m *layerMask
		if masks != nil {
			m = masks[l]
		}
		c := nt.newLayerCall(cfg, p, l, &op, m, replay, anchor, false)
		nt.updateLayer(cfg, p, &c)
		if nt.sub.transport && nt.lay[l].fb != nil {
			// Weight transport: the feedback is the forward weights.
			copy(nt.lay[l].fb, nt.lay[l].w)
		}
		if nt.skip[l] != nil {
			var ms *layerMask
			if masks != nil {
				ms = masks[nt.L+1+l]
			}
			c := nt.newLayerCall(cfg, p, l, &op, ms, replay, false, true)
			nt.updateLayer(cfg, p, &c)
		}
	}
}

// layerCall is one layer's share of an update call: which synapses move,
// from which presynaptic rates, under which mask and decay.
type layerCall struct {
	ly      *layer
	l, preL int       // post layer; pre layer (l-1, or l-2 for skip synapses)
	pre     []float32 // presynaptic rows of the batch (the input for preL = 0)
	m       *layerMask
	op      *optim
	replay  bool    // a replay call: no baseline or anchor update, controller EMA frozen
	anchor  bool    // the two-timescale anchor applies (waking calls)
	skip    bool    // the skip synapses S^l rather than W^l
	lam, wd float32 // fixed decay; coupled L2 inside the gradient
	ctrl    bool    // the adaptive controller sets the decay after the step
}

// newLayerCall describes the update of the synapses into layer l: W^l (with
// b^l and the twin B^{l-1}) or, if skip, the skip synapses S^l from a^{l-2}
// (with their twin Bs^l; no bias, no anchor, the decay lambda_l of W^l),
// which learn from the same plasticity signal.
func (nt *net) newLayerCall(cfg *LocalConfig, p *pass, l int, op *optim, m *layerMask, replay, anchor, skip bool) layerCall {
	c := layerCall{ly: nt.lay[l], l: l, preL: l - 1, m: m, op: op, replay: replay, anchor: anchor, skip: skip}
	if skip {
		c.ly, c.preL, c.anchor = nt.skip[l], l-2, false
	}
	c.pre = p.x
	if c.preL > 0 {
		c.pre = p.a[c.preL]
	}
	// Decay: fixed, or the adaptive controller's (two passes), applied per
	// update call and not scaled by eta. [CODE≠PAPER] W^1 has no
	// Kolen-Pollack decay (the paper writes -lambda W for every layer); it
	// has a coupled L2 of input_l2 inside its gradient instead.
	if l >= 2 && !nt.sub.transport {
		c.lam = float32(cfg.KPDecay)
	}
	if c.preL == 0 || nt.sub.transport {
		// Under weight transport every layer has the coupled L2 (no
		// twin, so no Kolen-Pollack decay).
		c.wd = float32(cfg.InputL2)
	}
	c.ctrl = cfg.KPAdapt > 0 && l >= 2
	if skip && c.ctrl {
		// Skip synapses share the lambda the controller just set for W^l.
		c.ctrl, c.lam = false, float32(nt.lay[l].lastLam)
	}
	return c
}

// updateLayer performs one layer's share of an update call: the burst
// baseline, the plasticity signal as per-row terms, then the optimiser
// step with decay, anchor, clamp and re-mask on the fast path whose guard
// admits the call (fastpath.go) or the general one.
func (nt *net) updateLayer(cfg *LocalConfig, p *pass, c *layerCall) {
	// [CODE≠PAPER] The paper's Eq. (kp) uses eps^l; the code (followed
	// here) uses the re-bounded kappa tanh(eps/kappa), minus the burst
	// baseline, gated by 1[a > 0]; the readout uses the raw eps^L.
	if c.l < nt.L && !c.replay && cfg.BaselineEMA > 0 && !c.skip {
		nt.updateBaseline(p, c.l, float32(cfg.BaselineEMA))
	}
	nt.buildTerms(p, c)
	if !nt.fastUpdate(cfg, c) {
		nt.generalUpdate(cfg, c)
		nt.pathCalls[numFastPaths]++
	}
}

// updateBaseline advances the burst baseline of hidden layer l, a
// waking-only EMA (rate a) of the batch-mean bounded error.
func (nt *net) updateBaseline(p *pass, l int, a float32) {
	nh, n := nt.sizes[l], p.n
	th, ebar := p.th[l], nt.ebar[l]
	mean := p.tmp[:nh]
	clear(mean)
	for b := range n {
		t := th[b*nh : (b+1)*nh]
		if nt.sub.relaxT > 0 {
			// The settled errors are dense: every unit's counts.
			for i, v := range t {
				mean[i] += v
			}
			continue
		}
		for _, i := range p.activeOf(l, b) {
			mean[i] += t[i]
		}
	}
	for i := range ebar {
		ebar[i] = (1-a)*ebar[i] + a*(mean[i]/float32(n))
	}
}

// forTerms calls fn for every term (i, b, e) of the plasticity signal into
// layer l, ascending in b per row i, where buildTerms has no loop of its
// own: e^L on the readout, and the substrate's burst variants on a hidden
// layer (burstTerms). The plain burst deviation is buildBurstTerms's.
func (nt *net) forTerms(p *pass, l int, fn func(i, b int, e float32)) {
	L := nt.L
	if l < L {
		nt.burstTerms(p, l, fn)
		return
	}
	C := nt.sizes[L]
	for b := range p.n {
		for i, v := range p.eps[L][b*C : (b+1)*C] {
			fn(i, b, v)
		}
	}
}

// buildTerms stores the call's plasticity signal as per-row lists of
// terms (pre-row offset, e/n), ascending in b (CSR over the posts in
// ly.termPtr): G row i = sum_t coef_t * pre row b_t. Zero terms and rows
// the mask freezes (unless moments leak) are left out.
func (nt *net) buildTerms(p *pass, c *layerCall) {
	ly, m := c.ly, c.m
	visitAll := m == nil || c.op.leak
	inv := 1 / float32(p.n)
	ptr := ly.termPtr
	clear(ptr)
	if c.l < nt.L && !nt.sub.burstMult && !nt.sub.noBurstGate {
		nt.buildBurstTerms(p, c, visitAll, inv)
		return
	}
	preW := ly.nIn
	keep := func(i int, e float32) bool { return e != 0 && (visitAll || !m.rowFrozen(i)) }
	nt.forTerms(p, c.l, func(i, _ int, e float32) {
		if keep(i, e) {
			ptr[i+1]++
		}
	})
	ly.sizeTerms()
	fill := ly.termFill
	nt.forTerms(p, c.l, func(i, b int, e float32) {
		if keep(i, e) {
			ly.termOff[fill[i]] = int32(b * preW)
			ly.termCoef[fill[i]] = e * inv
			fill[i]++
		}
	})
}

// sizeTerms turns the per-row term counts in ly.termPtr[1:] into row
// starts and sizes termOff and termCoef for them.
func (ly *layer) sizeTerms() {
	ptr := ly.termPtr
	for i := range ly.nOut {
		ptr[i+1] += ptr[i]
	}
	if need := int(ptr[ly.nOut]); cap(ly.termOff) < need {
		ly.termOff = make([]int32, need)
		ly.termCoef = make([]float32, need)
	}
	ly.termOff = ly.termOff[:ptr[ly.nOut]]
	ly.termCoef = ly.termCoef[:ptr[ly.nOut]]
	copy(ly.termFill, ptr[:ly.nOut])
}

// buildBurstTerms is buildTerms on a hidden layer under the plain burst
// deviation (forTerms' common case: e = th - ebar at the active units),
// with the loops written out rather than a call per term: the same terms
// in the same order. It runs on every update of every hidden layer.
func (nt *net) buildBurstTerms(p *pass, c *layerCall, visitAll bool, inv float32) {
	ly, m, l := c.ly, c.m, c.l
	nh, preW := nt.sizes[l], int32(ly.nIn)
	th, ebar := p.th[l], nt.ebar[l][:nh]
	ptr := ly.termPtr[:nh+1]
	for b := range p.n {
		t := th[b*nh : (b+1)*nh]
		for _, i := range p.activeOf(l, b) {
			if t[i]-ebar[i] != 0 && (visitAll || !m.rowFrozen(int(i))) {
				ptr[i+1]++
			}
		}
	}
	ly.sizeTerms()
	fill := ly.termFill[:nh]
	off, coef := ly.termOff, ly.termCoef
	for b := range p.n {
		t := th[b*nh : (b+1)*nh]
		for _, i := range p.activeOf(l, b) {
			if e := t[i] - ebar[i]; e != 0 && (visitAll || !m.rowFrozen(int(i))) {
				off[fill[i]] = int32(b) * preW
				coef[fill[i]] = e * inv
				fill[i]++
			}
		}
	}
}

// generalUpdate is the general path: the gradient accumulated per synapse
// (ascending b, as the fast paths), the optimiser step per synapse with
// finishSyn, or under the controller its sums and then controllerDecay.
func (nt *net) generalUpdate(cfg *LocalConfig, c *layerCall) {
	ly, m, op := c.ly, c.m, c.op
	visitAll := m == nil || op.leak
	ly.accumGrad(c.pre)
	var sums kernels.CtrlSums
	for i := range ly.nOut {
		if !visitAll && m.rowFrozen(i) {
			continue
		}
		lo, hi := ly.rowPtr[i], ly.rowPtr[i+1]
		for s := lo; s < hi; s++ {
			free := m.synFree(i, int(ly.col[s]))
			gs := ly.g[s]
			ly.g[s] = 0
			if !free && !op.leak {
				continue
			}
			if c.wd != 0 {
				gs -= c.wd * ly.w[s]
			}
			var d float32
			if op.adam {
				m1 := kernels.FlushTiny(op.b1*ly.m1[s] + (1-op.b1)*gs)
				m2 := op.b2*ly.m2[s] + (1-op.b2)*gs*gs
				ly.m1[s], ly.m2[s] = m1, m2
				if !free {
					continue // leaking moments: the state advances, no step
				}
				d = op.eta * (m1 / op.bc1) / (float32(math.Sqrt(float64(m2/op.bc2))) + op.eps)
			} else {
				v := kernels.FlushTiny(op.mu*ly.m1[s] + gs)
				ly.m1[s] = v
				d = op.eta * v
			}
			ly.w[s] += d
			if ly.fb != nil {
				ly.fb[s] += d
			}
			if c.ctrl {
				sums.D[(s-lo)&3] += math.Abs(float64(d))
				sums.G[(s-lo)&3] += math.Abs(float64(gs))
				continue // decay and projections in the second pass
			}
			ly.finishSyn(s, c.lam, c.anchor)
		}
		if bf := m.biasFree(i); (bf || op.leak) && !ly.noBias {
			ly.stepBias(i, op, bf)
		}
		ly.gb[i] = 0
	}
	nt.finishGeneral(cfg, c, &sums)
}

// accumGrad adds the call's plasticity terms into the gradient scratch:
// per stored synapse into g, per post unit into gb. A dense layer's row
// takes its terms with the vector product (synapse j reads pre unit j:
// the same products added in the same order per synapse).
func (ly *layer) accumGrad(pre []float32) {
	ptr := ly.termPtr
	dense := ly.dense()
	for i := range ly.nOut {
		lo, hi := ly.rowPtr[i], ly.rowPtr[i+1]
		g, col := ly.g[lo:hi], ly.col[lo:hi]
		g = g[:len(col)]
		t0, t1 := ptr[i], ptr[i+1]
		for _, coef := range ly.termCoef[t0:t1] {
			ly.gb[i] += coef
		}
		if dense {
			kernels.AddRows(g, ly.termCoef[t0:t1], ly.termOff[t0:t1], pre)
			continue
		}
		for t := t0; t < t1; t++ {
			coef := ly.termCoef[t]
			x := pre[ly.termOff[t]:][:ly.nIn]
			for s, j := range col {
				g[s] += coef * x[j]
			}
		}
	}
}

// finishGeneral ends the general path's call after the optimiser pass:
// the controller's decay (from the pass's sums of |Delta W| and |G|), the
// anchor on the biases, the column copy and, for W^1, c = W^1 o.
func (nt *net) finishGeneral(cfg *LocalConfig, c *layerCall, sums *kernels.CtrlSums) {
	ly := c.ly
	if c.ctrl {
		for i := range ly.nOut {
			sums.AddW(ly.w[ly.rowPtr[i]:ly.rowPtr[i+1]])
		}
		nt.controllerDecay(cfg, ly, c.m, c.op, sums, c.replay, c.anchor)
	}
	if c.anchor {
		ly.anchorBias()
	}
	ly.anchorFirst = false
	// The column copy first: c = W^1 o is computed from it. (Until train
	// version 2 the copy was deferred past this point, so c lagged one
	// update behind W^1 on this path.)
	ly.syncT()
	if c.preL == 0 {
		nt.staleC = true
	}
}

// finishSyn applies to stored synapse s, after its optimiser step, the decay
// lam, the anchor (waking calls), the Dale clamp and the re-mask, in the
// reference's order.
func (ly *layer) finishSyn(s int32, lam float32, anchor bool) {
	w := ly.w[s]
	if lam != 0 {
		w -= lam * w
	}
	var b float32
	if ly.fb != nil {
		b = ly.fb[s]
		if lam != 0 {
			b -= lam * b
		}
	}
	if anchor {
		if ly.anchorFirst {
			ly.wSlow[s] = w
			if ly.fb != nil {
				ly.fbSlow[s] = b
			}
		} else {
			w, b = ly.anchorSyn(s, w, b)
		}
	}
	if ly.sign != nil {
		sg := ly.sign[ly.col[s]]
		if (sg > 0 && w < 0) || (sg < 0 && w > 0) {
			w = 0
		}
		if ((sg > 0 && b < 0) || (sg < 0 && b > 0)) && !ly.fbNoDale {
			b = 0
		}
	}
	if ly.absent != nil && ly.absent[s] {
		w, b = 0, 0
	}
	ly.w[s] = w
	if ly.fb != nil {
		ly.fb[s] = b
	}
}

// stepBias is the optimiser step of bias i (no decay on biases).
func (ly *layer) stepBias(i int, op *optim, free bool) {
	gs := ly.gb[i]
	ly.gb[i] = 0
	var d float32
	if op.adam {
		m1 := kernels.FlushTiny(op.b1*ly.bm1[i] + (1-op.b1)*gs)
		m2 := op.b2*ly.bm2[i] + (1-op.b2)*gs*gs
		ly.bm1[i], ly.bm2[i] = m1, m2
		if !free {
			return
		}
		d = op.eta * (m1 / op.bc1) / (float32(math.Sqrt(float64(m2/op.bc2))) + op.eps)
	} else {
		v := kernels.FlushTiny(op.mu*ly.bm1[i] + gs)
		ly.bm1[i] = v
		d = op.eta * v
	}
	ly.bias[i] += d
}

// anchorSyn applies the two-timescale anchor to one synapse:
// P_slow += mu_a (P - P_slow); P += lambda_a (P_slow - P). The slow
// copies are cloned at the first waking call (see anchorInit).
func (ly *layer) anchorSyn(s int32, w, b float32) (float32, float32) {
	ws := ly.wSlow[s]
	ws += ly.anchorMu * (w - ws)
	w += ly.anchorLam * (ws - w)
	ly.wSlow[s] = ws
	if ly.fb != nil {
		bs := ly.fbSlow[s]
		bs += ly.anchorMu * (b - bs)
		b += ly.anchorLam * (bs - b)
		ly.fbSlow[s] = bs
	}
	return w, b
}

func (ly *layer) anchorBias() {
	if ly.anchorFirst {
		copy(ly.biasSlow, ly.bias)
		return
	}
	for i, v := range ly.bias {
		bs := ly.biasSlow[i]
		bs += ly.anchorMu * (v - bs)
		ly.bias[i] = v + ly.anchorLam*(bs-v)
		ly.biasSlow[i] = bs
	}
}

// anchorStart allocates the slow copies at the first anchored call; that
// call clones the values after its optimiser step and decay.
func (ly *layer) anchorStart(lam, mu float64) {
	ly.anchorState.start(lam, mu, ly.w, ly.fb, ly.bias)
}

// controllerDecay finishes a layer under the adaptive decay controller:
// lambda_l = min(0.02, rho * ubar_l / wmag_l), with u_l the
// mean |Delta W| of this call over all n_l n_{l-1} entries (absent synapses
// included, post-optimiser, pre-decay), ubar_l its EMA over waking calls and
// wmag_l the mean |W| after the step. Replay calls use the waking EMA and
// apply lambda inside the mask.
func (nt *net) controllerDecay(cfg *LocalConfig, ly *layer, m *layerMask, op *optim, sums *kernels.CtrlSums, replay, anchor bool) {
	sumD, sumG, sumW := sums.Total()
	total := float64(ly.nIn * ly.nOut)
	u := sumD / total
	if nt.mode.ctrl == ctrlGrad {
		u = sumG / total
	}
	ub := ly.ctrlState.drive(u, replay)
	wmag := sumW/total + 1e-12
	lam := cfg.KPAdapt * ub / wmag
	if nt.mode.ctrl == ctrlGrad {
		lam *= float64(op.eta)
	}
	lam = min(0.02, lam)
	ly.ctrlState.record(lam)
	l32 := float32(lam)
	if anchor {
		for i := range ly.nOut {
			for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
				if m.synFree(i, int(ly.col[s])) {
					ly.finishSyn(s, l32, anchor)
				}
			}
		}
		return
	}
	ly.decayRows(m, l32, !nt.generalOnly)
}

// decayRows is finishSyn without the anchor over every synapse the mask
// frees, row by row, with the mask decided once per row where it can be
// and the per-layer tests out of the loop: the same float32 operations in
// the same order as finishSyn, so the same bits. (The adaptive controller
// spent most of its update here, one call per synapse.) A dense layer with
// a twin, as every controller layer is, runs the vector kernel
// kernels.CtrlDecayRow if vector is set (tests compare the two).
func (ly *layer) decayRows(m *layerMask, lam float32, vector bool) {
	clampB := !ly.fbNoDale
	if vector && ly.fb != nil && ly.dense() {
		k := kernels.NewDecayCoef(lam, clampB)
		flags := preWords(m, ly.signWord, ly.flagPre)
		for i := range ly.nOut {
			fl := ly.signWord
			if m != nil {
				if m.rowFrozen(i) {
					continue
				}
				if m.postAwake(i) {
					fl = flags // free only where the pre unit sleeps
				}
			}
			lo, hi := ly.rowPtr[i], ly.rowPtr[i+1]
			absent := ly.zeroWord
			if ly.absentWord != nil {
				absent = ly.absentWord[lo:hi]
			}
			kernels.CtrlDecayRow(ly.w[lo:hi], ly.fb[lo:hi], fl, absent, &k)
		}
		return
	}
	ly.decayRowsScalar(m, lam, clampB)
}

// decayRowsScalar is decayRows one synapse at a time, for the layers the
// vector kernel does not take (sparse, or without a twin) and for tests.
func (ly *layer) decayRowsScalar(m *layerMask, lam float32, clampB bool) {
	for i := range ly.nOut {
		lo, hi := ly.rowPtr[i], ly.rowPtr[i+1]
		// The row's synapses are all free (pre nil), all frozen (skip), or
		// free where the pre unit sleeps (pre set): synFree per row.
		var pre []bool
		if m != nil {
			if m.rowFrozen(i) {
				continue
			}
			if m.postAwake(i) {
				pre = m.pre
			}
		}
		w, col := ly.w[lo:hi], ly.col[lo:hi]
		col = col[:len(w)]
		var fb []float32
		if ly.fb != nil {
			fb = ly.fb[lo:hi][:len(w)]
		}
		var absent []bool
		if ly.absent != nil {
			absent = ly.absent[lo:hi][:len(w)]
		}
		for s, j := range col {
			if pre != nil && pre[j] {
				continue
			}
			x := w[s]
			if lam != 0 {
				x -= lam * x
			}
			var b float32
			if fb != nil {
				b = fb[s]
				if lam != 0 {
					b -= lam * b
				}
			}
			if ly.sign != nil {
				sg := ly.sign[j]
				if (sg > 0 && x < 0) || (sg < 0 && x > 0) {
					x = 0
				}
				if clampB && ((sg > 0 && b < 0) || (sg < 0 && b > 0)) {
					b = 0
				}
			}
			if absent != nil && absent[s] {
				x, b = 0, 0
			}
			w[s] = x
			if fb != nil {
				fb[s] = b
			}
		}
	}
}

// ctrlRows is the fast path of updateLayer for heavy-ball SGD under the
// adaptive decay controller on a dense layer with a twin (no anchor, no
// coupled L2): the optimiser pass row by row (kernels.CtrlStepRow, which also
// gathers the controller's sums), the controller, then its decay pass. On
// the calls ctrlRowsGuard admits it computes exactly what the general path
// computes.
func (nt *net) ctrlRows(cfg *LocalConfig, ly *layer, m *layerMask, op *optim, pre []float32, replay bool) {
	k := kernels.NewCtrlCoef(op.mu, op.eta)
	var sums kernels.CtrlSums
	flags := preWords(m, ly.signWord, ly.flagPre)
	for i := range ly.nOut {
		lo, hi := ly.rowPtr[i], ly.rowPtr[i+1]
		w := ly.w[lo:hi]
		if m != nil && m.rowFrozen(i) {
			sums.AddW(w)
			continue
		}
		fl := ly.signWord
		if m != nil && m.postAwake(i) {
			fl = flags
		}
		gRow := ly.rowGrad(i, pre)
		kernels.CtrlStepRow(w, ly.fb[lo:hi], ly.m1[lo:hi], gRow, fl, &k, &sums)
		if !ly.noBias && m.biasFree(i) {
			ly.stepBias(i, op, true)
		}
		ly.gb[i] = 0
	}
	nt.controllerDecay(cfg, ly, m, op, &sums, replay, false)
	ly.anchorFirst = false
	ly.syncT()
}

// anchorRows is the fast path of updateLayer for heavy-ball SGD with the
// two-timescale anchor (an unmasked waking call) and a fixed decay: per row
// the optimiser step (W^1: the vector row step), then per synapse the
// decay, the anchor and the Dale clamp in finishSyn's order; then the
// biases' anchor and the column copy. On the calls anchorRowsGuard admits
// it computes exactly what the general path computes.
func (nt *net) anchorRows(ly *layer, preL int, op *optim, wd, lam float32, pre []float32) {
	mu, eta := op.mu, op.eta
	first := ly.anchorFirst
	for i := range ly.nOut {
		gRow := ly.rowGrad(i, pre)
		lo, hi := ly.rowPtr[i], ly.rowPtr[i+1]
		w := ly.w[lo:hi]
		n := len(w)
		v := ly.m1[lo:hi][:n]
		col := ly.col[lo:hi][:n]
		if ly.fb == nil {
			if ly.col16 != nil {
				k := kernels.NewSGDCoef(wd, mu, eta)
				g := gRow
				if ly.termPtr[i+1] == ly.termPtr[i] {
					g = nil // a zero gradient, without the gather
				}
				kernels.SGDRowInput(w, v, ly.col16[lo:hi][:n], g, &k, nil, 0) // anchorRow moves w, then the copy
			} else {
				for s, j := range col {
					gs := gRow[j] - wd*w[s]
					vs := kernels.FlushTiny(mu*v[s] + gs)
					v[s] = vs
					w[s] += eta * vs
				}
			}
			ly.anchorRow(lo, w, nil, col, lam, first)
		} else {
			fb := ly.fb[lo:hi][:n]
			for s, j := range col {
				gs := gRow[j]
				if wd != 0 {
					gs -= wd * w[s]
				}
				vs := kernels.FlushTiny(mu*v[s] + gs)
				v[s] = vs
				d := eta * vs
				w[s] += d
				fb[s] += d
			}
			ly.anchorRow(lo, w, fb, col, lam, first)
		}
		if !ly.noBias {
			ly.stepBias(i, op, true)
		}
		ly.gb[i] = 0
		wT, stride := ly.colCopy(i)
		kernels.CopyColumn(wT, w, col, stride) // none without a copy
	}
	ly.anchorBias()
	ly.anchorFirst = false
	if preL == 0 {
		nt.staleC = true
	}
}

// anchorRow is finishSyn with the anchor on the row whose stored synapses
// start at lo (weights w, twin fb or nil, pre units col): the decay lam,
// the anchor (the first call clones the slow copies) and the Dale clamp,
// in finishSyn's order and with its operations.
func (ly *layer) anchorRow(lo int32, w, fb []float32, col []int32, lam float32, first bool) {
	ws := ly.wSlow[lo:][:len(w)]
	if !first {
		// The steady state: the vector kernel on the weights, then the
		// loop on the rest; the twin the same way (its decay, slow copy
		// and pull are the weights' formula, on its own values); then
		// the Dale clamp of both (which the loop's tails have already
		// applied to theirs: clamping twice changes nothing).
		n8 := kernels.AnchorRowVec(w, ws, lam, ly.anchorMu, ly.anchorLam)
		ly.anchorRowGo(w[n8:], nil, ws[n8:], nil, col[n8:], lam, false)
		if fb != nil {
			bsl := ly.fbSlow[lo:][:len(w)]
			n8 = kernels.AnchorRowVec(fb, bsl, lam, ly.anchorMu, ly.anchorLam)
			ly.anchorRowGo(fb[n8:], nil, bsl[n8:], nil, col[n8:], lam, false)
		}
		if ly.sign != nil {
			daleClampRow(w, fb, col, ly.sign)
		}
		return
	}
	var bsl []float32
	if fb != nil {
		bsl = ly.fbSlow[lo:][:len(w)]
	}
	ly.anchorRowGo(w, fb, ws, bsl, col, lam, first)
}

// daleClampRow zeroes the weights of a row (and of its twin fb, if any)
// that have the wrong Dale sign for their pre unit col[s]: negative at an
// excitatory one, positive at an inhibitory one, as anchorRowGo does.
func daleClampRow(w, fb []float32, col []int32, sign []float32) {
	for s, j := range col[:len(w)] {
		sg := sign[j]
		if x := w[s]; (sg > 0 && x < 0) || (sg < 0 && x > 0) {
			w[s] = 0
		}
		if fb != nil {
			if b := fb[s]; (sg > 0 && b < 0) || (sg < 0 && b > 0) {
				fb[s] = 0
			}
		}
	}
}

// anchorRowGo is anchorRow's loop on weights w with slow copies ws, and
// twin fb with slow copies bsl (nil without a twin).
func (ly *layer) anchorRowGo(w, fb, ws, bsl []float32, col []int32, lam float32, first bool) {
	aMu, aLam := ly.anchorMu, ly.anchorLam
	ws = ws[:len(w)]
	if fb != nil {
		fb = fb[:len(w)]
		bsl = bsl[:len(w)]
	}
	for s, x := range w {
		var b float32
		if fb != nil {
			b = fb[s]
		}
		if lam != 0 {
			x -= lam * x
			b -= lam * b
		}
		if first {
			ws[s] = x
			if fb != nil {
				bsl[s] = b
			}
		} else {
			sl := ws[s]
			sl += aMu * (x - sl)
			x += aLam * (sl - x)
			ws[s] = sl
			if fb != nil {
				sl = bsl[s]
				sl += aMu * (b - sl)
				b += aLam * (sl - b)
				bsl[s] = sl
			}
		}
		if ly.sign != nil {
			sg := ly.sign[col[s]]
			if (sg > 0 && x < 0) || (sg < 0 && x > 0) {
				x = 0
			}
			if fb != nil && ((sg > 0 && b < 0) || (sg < 0 && b > 0)) {
				b = 0
			}
		}
		w[s] = x
		if fb != nil {
			fb[s] = b
		}
	}
}

// sgdRows is the fast path of updateLayer for heavy-ball SGD with a fixed
// decay and no anchor: one pass per row doing the optimiser step, the decay,
// the Dale clamp, the column-order copy and (layer 1) c = W^1 o. On the
// calls sgdRowsGuard admits it computes exactly what the general path
// computes.
func (nt *net) sgdRows(ly *layer, preL int, m *layerMask, op *optim, wd, lam float32, pre []float32) {
	mu, eta := op.mu, op.eta
	// The vector twin step needs a decay and Dale signs (always so for
	// l >= 2 in the paper's configurations) and the awake pre units as a
	// word per unit.
	vecFB := ly.fb != nil && lam != 0 && ly.sign != nil
	// A dense tiled layer (the skip synapses) reads its gradient and flags
	// in step with the row and rewrites the column copy after the rows, a
	// tile at a time.
	denseFB := vecFB && ly.tiled && ly.dense()
	fbk := kernels.NewSGDFBCoef(mu, eta, lam)
	var flags []int32
	if vecFB {
		flags = preWords(m, ly.signWord, ly.flagPre)
	}
	for i := range ly.nOut {
		if m != nil && m.rowFrozen(i) {
			continue
		}
		// This row's gradient, densely over the pre units (vector kernel),
		// read at the stored synapses below.
		gRow := ly.rowGrad(i, pre)
		// The gathering kernels read a row without terms as nil: a zero
		// gradient they need not gather.
		gGather := gRow
		if ly.termPtr[i+1] == ly.termPtr[i] {
			gGather = nil
		}
		// A row whose post unit is awake moves only at silent pre units.
		var preAwake []bool
		if m != nil && m.postAwake(i) {
			preAwake = m.pre
		}
		lo, hi := ly.rowPtr[i], ly.rowPtr[i+1]
		w := ly.w[lo:hi]
		n := len(w)
		v := ly.m1[lo:hi][:n]
		col := ly.col[lo:hi][:n]
		wT, stride := ly.colCopy(i) // nil: no copy to write
		if ly.fb == nil && lam == 0 && ly.col16 != nil {
			// W^1: the vector row step with the column copy (if W^1
			// keeps one), reading 16-bit columns (less memory traffic on
			// the largest layer).
			k := kernels.NewSGDCoef(wd, mu, eta)
			c16 := ly.col16[lo:hi][:n]
			kernels.SGDRowInput(w, v, c16, gGather, &k, wT, stride)
		} else if ly.fb == nil {
			sgdRowScalar(w, v, col, gRow, wT, stride, wd, mu, eta, lam)
		} else if vecFB {
			fl := ly.signWord
			if preAwake != nil {
				fl = flags
			}
			if denseFB {
				kernels.SGDRowFBDense(w, ly.fb[lo:hi], v, gRow, fl, &fbk)
			} else if preAwake == nil && ly.colWord != nil {
				// The flags are the static Dale bits: packed with the columns.
				kernels.SGDRowFBWords(w, ly.fb[lo:hi], v, ly.colWord[lo:hi][:n], gGather, &fbk, wT, stride)
			} else {
				kernels.SGDRowFB(w, ly.fb[lo:hi], v, col, gGather, fl, &fbk, wT, stride)
			}
		} else {
			sgdRowFBScalar(w, ly.fb[lo:hi][:n], v, col, gRow, preAwake, ly.sign, wT, stride, mu, eta, lam)
		}
		if !ly.noBias && m.biasFree(i) {
			// stepBias's heavy-ball branch, inline.
			bv := kernels.FlushTiny(mu*ly.bm1[i] + ly.gb[i])
			ly.bm1[i] = bv
			ly.bias[i] += eta * bv
		}
		ly.gb[i] = 0
	}
	if denseFB {
		ly.syncT()
	}
	if preL == 0 {
		nt.staleC = true
	}
}

// sgdRowScalar is sgdRows' step of a row without a twin that the vector
// kernel does not take (a decay, or more than 65536 pre units): heavy-ball
// step with the coupled L2 wd, decay lam, and the column copy into wT
// (the row's first column, columns stride apart; nil for none).
func sgdRowScalar(w, v []float32, col []int32, gRow, wT []float32, stride int, wd, mu, eta, lam float32) {
	for s := range w {
		ws := w[s]
		gs := gRow[col[s]] - wd*ws
		vs := kernels.FlushTiny(mu*v[s] + gs)
		v[s] = vs
		ws += eta * vs
		if lam != 0 {
			ws -= lam * ws
		}
		w[s] = ws
		if wT != nil {
			wT[int(col[s])*stride] = ws
		}
	}
}

// sgdRowFBScalar is sgdRows' step of a row with a twin that the vector
// kernel does not take (no decay, or no Dale signs): the shared velocity
// moves both, then decay and Dale clamp, skipping the synapses from the
// awake pre units (preAwake nil: none), and the column copy.
func sgdRowFBScalar(w, fb, v []float32, col []int32, gRow []float32, preAwake []bool, sign, wT []float32, stride int, mu, eta, lam float32) {
	for s := range w {
		j := col[s]
		if preAwake != nil && preAwake[j] {
			continue
		}
		vs := kernels.FlushTiny(mu*v[s] + gRow[j])
		v[s] = vs
		d := eta * vs
		ws := w[s] + d
		bs := fb[s] + d
		if lam != 0 {
			ws -= lam * ws
			bs -= lam * bs
		}
		if sign != nil {
			if sign[j] > 0 {
				ws = max(ws, 0)
				bs = max(bs, 0)
			} else {
				ws = min(ws, 0)
				bs = min(bs, 0)
			}
		}
		w[s] = ws
		fb[s] = bs
		wT[int(j)*stride] = ws
	}
}

// rowGrad computes row i's dense gradient into ly.gRow from the call's terms
// (and its bias gradient into ly.gb[i]); it returns ly.zeroRow for a row without
// terms, whose gradient is 0.
func (ly *layer) rowGrad(i int, pre []float32) []float32 {
	t0, t1 := ly.termPtr[i], ly.termPtr[i+1]
	if t1 == t0 {
		return ly.zeroRow
	}
	g := ly.gRow
	coef := ly.termCoef[t0:t1]
	kernels.SetRows(g, coef, ly.termOff[t0:t1], pre)
	var gb float32
	for _, c := range coef {
		gb += c
	}
	ly.gb[i] = gb
	return g
}

// adamRows is the fast path of updateLayer for masked Adam (confined or
// leaking moments) with a fixed decay and no anchor, on a layer without a
// twin or with Dale signs: the vector row step of kernels.AdamRow, with the column
// copy. On the calls adamRowsGuard admits it computes exactly what the
// general path computes.
func (nt *net) adamRows(ly *layer, preL int, m *layerMask, op *optim, wd, lam float32, pre []float32) {
	k := kernels.NewAdamCoef(op.b1, op.b2, op.bc1, op.bc2, op.eta, op.eps, wd, lam, op.leak)
	var frozenPre []int32 // nil where m marks no awake pre units
	if m != nil && m.pre != nil {
		frozenPre = preWords(m, ly.zeroWord, ly.frozenPre)
	}
	for i := range ly.nOut {
		// A frozen row's moments still advance when they leak.
		rowFrozen := m != nil && m.rowFrozen(i)
		if rowFrozen && !op.leak {
			continue
		}
		gRow := ly.rowGrad(i, pre)
		lo, hi := ly.rowPtr[i], ly.rowPtr[i+1]
		w := ly.w[lo:hi]
		n := len(w)
		var fb []float32
		if ly.fb != nil {
			fb = ly.fb[lo:hi][:n]
		}
		var fr []int32 // nil: no pre unit frozen, nothing to gather
		switch {
		case rowFrozen:
			fr = ly.oneWord
		case m != nil && m.postAwake(i):
			fr = frozenPre
		}
		var sign []float32
		if fb != nil {
			sign = ly.synSign[lo:hi][:n]
		}
		col := ly.col[lo:hi][:n]
		wT, stride := ly.colCopy(i) // nil: no copy to write
		kernels.AdamRow(w, fb, ly.m1[lo:hi][:n], ly.m2[lo:hi][:n], col, gRow, fr, sign, k, wT, stride)
		if bf := m.biasFree(i); (bf || op.leak) && !ly.noBias {
			ly.stepBias(i, op, bf)
		}
		ly.gb[i] = 0
	}
	if preL == 0 {
		nt.staleC = true
	}
}

// preWords returns the per-pre-unit words of a row step for the rows whose
// post unit is awake under mask m: base[j], with kernels.FlagFrozen set where pre
// unit j is awake, written to dst; base itself when m marks no awake pre
// units. kernels.SGDRowFB's flags start from the Dale bits (signWord); masked Adam's
// frozen words from zeroWord, so they are 1 exactly where the pre unit is
// awake.
func preWords(m *layerMask, base, dst []int32) []int32 {
	if m == nil || m.pre == nil {
		return base
	}
	for j, a := range m.pre {
		f := base[j]
		if a {
			f |= kernels.FlagFrozen
		}
		dst[j] = f
	}
	return dst
}
