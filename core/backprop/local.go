package backprop

// newLocal returns the step of the local learner's schedule run on the
// backprop k-WTA MLP (the reference's run_bp_local):
//
//  1. forward the waking batch under the current suppression (Rotate),
//     take the mean loss and an unmasked Adam step at LR;
//  2. read the awake sets from that pre-update forward pass (a unit is awake
//     if its final activity is non-zero on any sample; suppressed units are
//     asleep);
//  3. with Rotate, the next waking batch's suppression is this awake set;
//  4. offer the waking batch to the reservoir;
//  5. if the buffer is non-empty, draw ReplayBatch samples with replacement,
//     forward them without suppression and take an Adam step at
//     LR*ReplayGain, masked by the awake sets when Isolate (input always
//     awake, readout unmasked).
//
// It also records, per hidden layer, the asleep fraction and the isolated-
// channel width rho = |R ∩ asleep| / max(1, |R|), R the units the replay
// batch fires, each averaged over replay steps.
func (r *runner) newLocal() func(idx []int) {
	cfg, net := r.cfg, r.net
	L, D, C := net.Layers(), r.train.D, r.train.Classes
	wake, rep := NewPass(net, cfg.Batch), NewPass(net, cfg.ReplayBatch)
	kind := cfg.loss()
	y := make([]int32, max(cfg.Batch, cfg.ReplayBatch))
	awake := make([][]bool, L+1) // per layer; hidden layers only
	r.supp = make([][]bool, L+1) // per layer; hidden layers only
	fired := make([][]bool, L+1)
	for l := 1; l < L; l++ {
		awake[l] = make([]bool, net.Sizes[l])
		r.supp[l] = make([]bool, net.Sizes[l])
		fired[l] = make([]bool, net.Sizes[l])
	}
	if cfg.Rotate {
		wake.Suppress = r.supp
	}
	mask := &Mask{Pre: make([][]bool, L), Post: make([][]bool, L)}
	for l := 0; l < L-1; l++ {
		mask.Pre[l], mask.Post[l] = awake[l], awake[l+1] // awake[0] is nil: input always awake
	}
	asleepSum, rhoSum := make([]float64, L-1), make([]float64, L-1)
	steps := 0
	var draw []int

	return func(idx []int) {
		mb := len(idx)
		wake.SetRows(mb)
		for k, i := range idx {
			copy(wake.Input(k, D), r.train.Row(i))
			y[k] = r.train.Y[i]
		}
		net.Forward(wake)
		lossRows(kind, wake, y[:mb], L, C)
		clear(r.grad)
		net.Backward(wake, r.grad)
		r.adam.Step(net.Params, r.grad, cfg.LR)
		net.Rewire()

		for l := 1; l < L; l++ {
			anyNonZero(awake[l], wake.A[l], mb)
		}
		if cfg.Rotate {
			for l := 1; l < L; l++ {
				copy(r.supp[l], awake[l])
			}
		}
		r.buf.OfferBatch(wake.A[0][:mb*D], y[:mb], nil, r.rng)
		if r.buf.Len() == 0 {
			return
		}
		draw = r.buf.Sample(draw, cfg.ReplayBatch, r.rng)
		n := len(draw)
		rep.SetRows(n)
		for k, it := range draw {
			copy(rep.Input(k, D), r.buf.Row(it))
			y[k] = r.buf.Label(it)
		}
		net.Forward(rep)
		lossRows(kind, rep, y[:n], L, C)
		clear(r.grad)
		net.Backward(rep, r.grad)
		lr := cfg.LR * cfg.ReplayGain
		if cfg.Isolate {
			r.adam.StepMasked(net, net.Params, r.grad, mask, lr)
		} else {
			r.adam.Step(net.Params, r.grad, lr)
		}
		net.Rewire()
		r.countReplay(n)

		steps++
		for l := 1; l < L; l++ {
			anyNonZero(fired[l], rep.A[l], n)
			na, nr, ni := 0, 0, 0
			for i, a := range awake[l] {
				if a {
					na++
				}
				if fired[l][i] {
					nr++
					if !a {
						ni++
					}
				}
			}
			asleepSum[l-1] += 1 - float64(na)/float64(len(awake[l]))
			rhoSum[l-1] += float64(ni) / float64(max(1, nr))
		}
		r.res.AsleepFrac = r.res.AsleepFrac[:0]
		r.res.Rho = r.res.Rho[:0]
		for l := range asleepSum {
			r.res.AsleepFrac = append(r.res.AsleepFrac, asleepSum[l]/float64(steps))
			r.res.Rho = append(r.res.Rho, rhoSum[l]/float64(steps))
		}
	}
}

// resetRotation clears the suppression at a task boundary, as the local
// learner's rotation state is reset at every task (the reference's run_bp_local keeps its state in the same place).
func (r *runner) resetRotation() {
	for _, s := range r.supp {
		clear(s)
	}
}

// lossRows fills p.D[L] with the gradient of the mean per-sample loss.
func lossRows(kind Loss, p *Pass, y []int32, L, C int) {
	w := 1 / float32(len(y))
	for k := range y {
		lossGrad(kind, p.A[L][k*C:(k+1)*C], y[k], w, nil, p.D[L][k*C:(k+1)*C])
	}
}

// anyNonZero sets dst[i] to whether column i of the rows x len(dst) matrix
// a is non-zero in any of the first rows rows.
func anyNonZero(dst []bool, a []float32, rows int) {
	n := len(dst)
	clear(dst)
	for r := range rows {
		for i, v := range a[r*n : (r+1)*n] {
			if v != 0 {
				dst[i] = true
			}
		}
	}
}
