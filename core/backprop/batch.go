package backprop

// newBatch returns the step of the batch-256 protocol (the reference's
// run()): plain BP, BP+ER, DER++, ER-ACE or A-GEM. Each step takes the
// incoming batch idx, draws from the buffer (if non-empty) with the run
// generator, takes one Adam step, and then offers the incoming batch to the
// reservoir, so that a batch never replays itself.
func (r *runner) newBatch() func(idx []int) {
	return r.newBatchStep().step
}

// newBatchStep returns the state of newBatch's step.
func (r *runner) newBatchStep() *batchStep {
	cfg, net := r.cfg, r.net
	m, rb := cfg.Batch, cfg.ReplayBatch
	maxRows := m
	switch cfg.Method {
	case MethodER, MethodERACE:
		maxRows = m + rb
	case MethodDERPP:
		maxRows = m + 2*rb
	}
	s := &batchStep{r: r, p: NewPass(net, maxRows), D: r.train.D, C: r.train.Classes, L: net.Layers(),
		kind: cfg.loss(), y: make([]int32, maxRows), present: make([]bool, r.train.Classes)}
	if cfg.Method == MethodAGEM {
		s.ref = NewPass(net, rb)
		s.gref = make([]float32, len(net.Params))
	}
	return s
}

// batchStep is the state of the batch protocol's steps: the pass over the
// incoming batch and its replayed rows (p), A-GEM's reference pass and
// gradient (ref, gref; nil for the other methods), the rows' labels (y),
// ER-ACE's classes of the incoming batch (present), the buffer draws and
// A-GEM's last dot product of the incoming and the buffer gradient (dot;
// the reference check reads it).
type batchStep struct {
	r            *runner
	p, ref       *Pass
	gref         []float32
	D, C, L      int
	kind         Loss
	y            []int32
	present      []bool
	draw1, draw2 []int
	dot          float64
}

// step runs one batch: the method's gradient, the Adam step, the rewiring,
// and the reservoir offer of the incoming rows.
func (s *batchStep) step(idx []int) {
	r, cfg, net, p := s.r, s.r.cfg, s.r.net, s.p
	D, C, L := s.D, s.C, s.L
	mb := len(idx)
	for k, i := range idx {
		copy(p.Input(k, D), r.train.Row(i))
		s.y[k] = r.train.Y[i]
	}
	switch cfg.Method { // r.grad is zero: the last Adam step left it so
	case MethodNone, MethodER:
		s.stepER(mb)
	case MethodDERPP:
		s.stepDERPP(mb)
	case MethodERACE:
		s.stepERACE(mb)
	case MethodAGEM:
		s.stepAGEM(mb)
	}
	net.Rewire()
	var logits []float32
	if cfg.Method == MethodDERPP {
		// This step's forward pass, with the pre-step weights.
		logits = p.A[L][:mb*C]
	}
	r.buf.OfferBatch(p.A[0][:mb*D], s.y[:mb], logits, r.rng)
}

// load copies rows into pass q from the buffer items at positions
// [at, at+len(items)) and returns their labels in y[at:].
func (s *batchStep) load(q *Pass, at int, items []int) {
	for k, it := range items {
		copy(q.Input(at+k, s.D), s.r.buf.Row(it))
		s.y[at+k] = s.r.buf.Label(it)
	}
}

// stepER is plain BP (with an empty buffer) and BP+ER: the incoming rows
// and a replay draw in one batch, the mean loss over all of them.
func (s *batchStep) stepER(mb int) {
	r, cfg, net, p := s.r, s.r.cfg, s.r.net, s.p
	C, L, y, kind := s.C, s.L, s.y, s.kind
	rows := mb
	if r.buf.Len() > 0 {
		s.draw1 = r.buf.Sample(s.draw1, cfg.ReplayBatch, r.rng)
		s.load(p, mb, s.draw1)
		rows += len(s.draw1)
		r.countReplay(len(s.draw1))
	}
	p.SetRows(rows)
	net.Forward(p)
	w := 1 / float32(rows)
	for k := range rows {
		lossGrad(kind, p.A[L][k*C:(k+1)*C], y[k], w, nil, p.D[L][k*C:(k+1)*C])
	}
	net.Backward(p, r.grad)
	r.adam.Step(net.Params, r.grad, cfg.LR)
}

// stepDERPP is DER++: the incoming rows' loss, alpha times the distillation
// of a first draw's stored logits and beta times a second draw's loss.
func (s *batchStep) stepDERPP(mb int) {
	r, cfg, net, p := s.r, s.r.cfg, s.r.net, s.p
	C, L, y, kind := s.C, s.L, s.y, s.kind
	rb := cfg.ReplayBatch
	rows := mb
	n1, n2 := 0, 0
	if r.buf.Len() > 0 {
		s.draw1 = r.buf.Sample(s.draw1, rb, r.rng)
		s.draw2 = r.buf.Sample(s.draw2, rb, r.rng)
		n1, n2 = len(s.draw1), len(s.draw2)
		s.load(p, mb, s.draw1)
		s.load(p, mb+n1, s.draw2)
		rows += n1 + n2
		r.countReplay(n1 + n2)
	}
	p.SetRows(rows)
	net.Forward(p)
	z, d := p.A[L], p.D[L]
	w := 1 / float32(mb)
	for k := range mb {
		lossGrad(kind, z[k*C:(k+1)*C], y[k], w, nil, d[k*C:(k+1)*C])
	}
	if n1 > 0 {
		wa := float32(cfg.Alpha / float64(n1))
		for k, it := range s.draw1 {
			q := mb + k
			distillGrad(z[q*C:(q+1)*C], r.buf.Logits(it), wa, d[q*C:(q+1)*C])
		}
		wb := float32(cfg.Beta / float64(n2))
		for k := range n2 {
			q := mb + n1 + k
			lossGrad(kind, z[q*C:(q+1)*C], y[q], wb, nil, d[q*C:(q+1)*C])
		}
	}
	net.Backward(p, r.grad)
	r.adam.Step(net.Params, r.grad, cfg.LR)
}

// stepERACE is ER-ACE: the incoming rows' cross-entropy over the classes
// they contain, plus the replayed rows' mean cross-entropy.
func (s *batchStep) stepERACE(mb int) {
	r, cfg, net, p := s.r, s.r.cfg, s.r.net, s.p
	C, L, y := s.C, s.L, s.y
	rows := mb
	n := 0
	if r.buf.Len() > 0 {
		s.draw1 = r.buf.Sample(s.draw1, cfg.ReplayBatch, r.rng)
		n = len(s.draw1)
		s.load(p, mb, s.draw1)
		rows += n
		r.countReplay(n)
	}
	p.SetRows(rows)
	net.Forward(p)
	z, d := p.A[L], p.D[L]
	presentClasses(y[:mb], s.present)
	w := 1 / float32(mb)
	for k := range mb {
		lossGrad(CrossEntropy, z[k*C:(k+1)*C], y[k], w, s.present, d[k*C:(k+1)*C])
	}
	if n > 0 {
		wn := 1 / float32(n)
		for k := mb; k < rows; k++ {
			lossGrad(CrossEntropy, z[k*C:(k+1)*C], y[k], wn, nil, d[k*C:(k+1)*C])
		}
	}
	net.Backward(p, r.grad)
	r.adam.Step(net.Params, r.grad, cfg.LR)
}

// stepAGEM is A-GEM: the incoming rows' gradient, projected against the
// gradient of a replay draw (the reference pass) when they conflict.
func (s *batchStep) stepAGEM(mb int) {
	r, cfg, net, p, ref := s.r, s.r.cfg, s.r.net, s.p, s.ref
	D, C, L, y, kind := s.D, s.C, s.L, s.y, s.kind
	p.SetRows(mb)
	net.Forward(p)
	w := 1 / float32(mb)
	for k := range mb {
		lossGrad(kind, p.A[L][k*C:(k+1)*C], y[k], w, nil, p.D[L][k*C:(k+1)*C])
	}
	net.Backward(p, r.grad)
	if r.buf.Len() > 0 {
		s.draw1 = r.buf.Sample(s.draw1, cfg.ReplayBatch, r.rng)
		n := len(s.draw1)
		ref.SetRows(n)
		for k, it := range s.draw1 {
			copy(ref.Input(k, D), r.buf.Row(it))
		}
		net.Forward(ref)
		wn := 1 / float32(n)
		for k, it := range s.draw1 {
			lossGrad(kind, ref.A[L][k*C:(k+1)*C], r.buf.Label(it), wn, nil, ref.D[L][k*C:(k+1)*C])
		}
		clear(s.gref)
		net.Backward(ref, s.gref)
		s.dot = project(r.grad, s.gref)
		r.countReplay(n)
	}
	r.adam.Step(net.Params, r.grad, cfg.LR)
}

// countReplay records one replay update of n samples.
func (r *runner) countReplay(n int) {
	r.res.ReplayUpdates++
	r.res.ReplaySamples += n
}

// project is A-GEM's projection: if g . gref < 0, g becomes
// g - (g . gref)/(gref . gref + 1e-12) * gref, so that afterwards
// g . gref = 0 up to rounding. Dot products are taken in float64. It
// returns g . gref before the projection.
func project(g, gref []float32) float64 {
	var dot, nn float64
	for i, x := range g {
		dot += float64(x) * float64(gref[i])
		nn += float64(gref[i]) * float64(gref[i])
	}
	if !(dot < 0) {
		return dot
	}
	s := dot / (nn + 1e-12)
	for i := range g {
		g[i] = float32(float64(g[i]) - s*float64(gref[i]))
	}
	return dot
}
