package backprop

// newBatch returns the step of the batch-256 protocol (the reference's
// run()): plain BP, BP+ER, DER++, ER-ACE or A-GEM. Each step takes the
// incoming batch idx, draws from the buffer (if non-empty) with the run
// generator, takes one Adam step, and then offers the incoming batch to the
// reservoir, so that a batch never replays itself.
func (r *runner) newBatch() func(idx []int) {
	cfg, net := r.cfg, r.net
	m, rb := cfg.Batch, cfg.ReplayBatch
	maxRows := m
	switch cfg.Method {
	case MethodER, MethodERACE:
		maxRows = m + rb
	case MethodDERPP:
		maxRows = m + 2*rb
	}
	p := NewPass(net, maxRows)
	var ref *Pass
	var gref []float32
	if cfg.Method == MethodAGEM {
		ref = NewPass(net, rb)
		gref = make([]float32, len(net.Params))
	}
	D, C, L := r.train.D, r.train.Classes, net.Layers()
	kind := cfg.loss()
	y := make([]int32, maxRows)
	present := make([]bool, C)
	var draw1, draw2 []int

	// load copies rows into pass q from the buffer items at positions
	// [at, at+len(items)) and returns their labels in y[at:].
	load := func(q *Pass, at int, items []int) {
		for k, it := range items {
			copy(q.Input(at+k, D), r.buf.Row(it))
			y[at+k] = r.buf.Label(it)
		}
	}

	return func(idx []int) {
		mb := len(idx)
		for k, i := range idx {
			copy(p.Input(k, D), r.train.Row(i))
			y[k] = r.train.Y[i]
		}
		rows := mb
		clear(r.grad)
		switch cfg.Method {
		case MethodNone, MethodER:
			if r.buf.Len() > 0 {
				draw1 = r.buf.Sample(draw1, rb, r.rng)
				load(p, mb, draw1)
				rows += len(draw1)
				r.countReplay(len(draw1))
			}
			p.SetRows(rows)
			net.Forward(p)
			w := 1 / float32(rows)
			for k := range rows {
				lossGrad(kind, p.A[L][k*C:(k+1)*C], y[k], w, nil, p.D[L][k*C:(k+1)*C])
			}
			net.Backward(p, r.grad)
			r.adam.Step(net.Params, r.grad, cfg.LR)

		case MethodDERPP:
			n1, n2 := 0, 0
			if r.buf.Len() > 0 {
				draw1 = r.buf.Sample(draw1, rb, r.rng)
				draw2 = r.buf.Sample(draw2, rb, r.rng)
				n1, n2 = len(draw1), len(draw2)
				load(p, mb, draw1)
				load(p, mb+n1, draw2)
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
				for k, it := range draw1 {
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

		case MethodERACE:
			n := 0
			if r.buf.Len() > 0 {
				draw1 = r.buf.Sample(draw1, rb, r.rng)
				n = len(draw1)
				load(p, mb, draw1)
				rows += n
				r.countReplay(n)
			}
			p.SetRows(rows)
			net.Forward(p)
			z, d := p.A[L], p.D[L]
			presentClasses(y[:mb], present)
			w := 1 / float32(mb)
			for k := range mb {
				lossGrad(CrossEntropy, z[k*C:(k+1)*C], y[k], w, present, d[k*C:(k+1)*C])
			}
			if n > 0 {
				wn := 1 / float32(n)
				for k := mb; k < rows; k++ {
					lossGrad(CrossEntropy, z[k*C:(k+1)*C], y[k], wn, nil, d[k*C:(k+1)*C])
				}
			}
			net.Backward(p, r.grad)
			r.adam.Step(net.Params, r.grad, cfg.LR)

		case MethodAGEM:
			p.SetRows(mb)
			net.Forward(p)
			w := 1 / float32(mb)
			for k := range mb {
				lossGrad(kind, p.A[L][k*C:(k+1)*C], y[k], w, nil, p.D[L][k*C:(k+1)*C])
			}
			net.Backward(p, r.grad)
			if r.buf.Len() > 0 {
				draw1 = r.buf.Sample(draw1, rb, r.rng)
				n := len(draw1)
				ref.SetRows(n)
				for k, it := range draw1 {
					copy(ref.Input(k, D), r.buf.Row(it))
				}
				net.Forward(ref)
				wn := 1 / float32(n)
				for k, it := range draw1 {
					lossGrad(kind, ref.A[L][k*C:(k+1)*C], r.buf.Label(it), wn, nil, ref.D[L][k*C:(k+1)*C])
				}
				clear(gref)
				net.Backward(ref, gref)
				project(r.grad, gref)
				r.countReplay(n)
			}
			r.adam.Step(net.Params, r.grad, cfg.LR)
		}
		net.Rewire()
		var logits []float32
		if cfg.Method == MethodDERPP {
			// This step's forward pass, with the pre-step weights.
			logits = p.A[L][:mb*C]
		}
		r.buf.OfferBatch(p.A[0][:mb*D], y[:mb], logits, r.rng)
	}
}

func (r *runner) countReplay(n int) {
	r.res.ReplayUpdates++
	r.res.ReplaySamples += n
}

// project is A-GEM's projection: if g . gref < 0, g becomes
// g - (g . gref)/(gref . gref + 1e-12) * gref, so that afterwards
// g . gref = 0 up to rounding. Dot products are taken in float64.
func project(g, gref []float32) {
	var dot, nn float64
	for i, x := range g {
		dot += float64(x) * float64(gref[i])
		nn += float64(gref[i]) * float64(gref[i])
	}
	if !(dot < 0) {
		return
	}
	s := dot / (nn + 1e-12)
	for i := range g {
		g[i] = float32(float64(g[i]) - s*float64(gref[i]))
	}
}
