package backprop

import (
	"math"
	"slices"
)

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
func (r *runner) newLocal() func(idx []int) { return r.newLocalStep().step }

// newLocalStep returns newLocal's state, its suppression in r.supp.
func (r *runner) newLocalStep() *localStep {
	cfg, net := r.cfg, r.net
	L := net.Layers()
	s := &localStep{r: r, wake: NewPass(net, cfg.Batch), rep: NewPass(net, cfg.ReplayBatch),
		y: make([]int32, max(cfg.Batch, cfg.ReplayBatch)), awake: make([][]bool, L+1), fired: make([][]bool, L+1),
		asleepSum: make([]float64, L-1), rhoSum: make([]float64, L-1), acc: make([]uint32, slices.Max(net.Sizes))}
	r.supp = make([][]bool, L+1) // per layer; hidden layers only
	for l := 1; l < L; l++ {
		s.awake[l] = make([]bool, net.Sizes[l])
		r.supp[l] = make([]bool, net.Sizes[l])
		s.fired[l] = make([]bool, net.Sizes[l])
	}
	if cfg.Rotate {
		s.wake.Suppress = r.supp
	}
	s.mask = &Mask{Pre: make([][]bool, L), Post: make([][]bool, L)}
	for l := 0; l < L-1; l++ {
		s.mask.Pre[l], s.mask.Post[l] = s.awake[l], s.awake[l+1] // awake[0] is nil: input always awake
	}
	return s
}

// localStep is the state of the local schedule's steps: the waking and
// replay passes, the rows' labels, per layer (hidden only) the awake units
// of the last waking batch and the units the last replay batch fired, the
// isolation mask built on the awake sets, and the running sums of the
// asleep fraction and rho over the replay steps so far.
type localStep struct {
	r                 *runner
	wake, rep         *Pass
	y                 []int32
	awake, fired      [][]bool
	mask              *Mask
	asleepSum, rhoSum []float64
	steps             int
	draw              []int
	acc               []uint32 // anyNonZero's scratch
	// probe, when set (the differential check, inject.go), is called after
	// each optimiser step with the pass it stepped on ("wake" or "replay").
	probe func(stage string)
}

// step runs steps 1-5 of newLocal for the waking batch idx.
func (s *localStep) step(idx []int) {
	r, cfg, net, wake := s.r, s.r.cfg, s.r.net, s.wake
	L, D, C := net.Layers(), r.train.D, r.train.Classes
	kind := cfg.loss()
	mb := len(idx)
	wake.SetRows(mb)
	for k, i := range idx {
		copy(wake.Input(k, D), r.train.Row(i))
		s.y[k] = r.train.Y[i]
	}
	net.Forward(wake)
	lossRows(kind, wake, s.y[:mb], L, C)
	net.Backward(wake, r.grad)
	r.adam.Step(net.Params, r.grad, cfg.LR)
	net.Rewire()
	if s.probe != nil {
		s.probe("wake")
	}

	for l := 1; l < L; l++ {
		anyNonZero(s.awake[l], wake.A[l], mb, s.acc)
	}
	if cfg.Rotate {
		for l := 1; l < L; l++ {
			copy(r.supp[l], s.awake[l])
		}
	}
	r.buf.OfferBatch(wake.A[0][:mb*D], s.y[:mb], nil, r.rng)
	if r.buf.Len() == 0 {
		return
	}
	n := s.replay()
	s.record(n)
}

// replay is step 5: a replay draw's mean loss and an Adam step at
// LR*ReplayGain, masked by the awake sets under Isolate; it returns the
// number of rows replayed.
func (s *localStep) replay() int {
	r, cfg, net, rep := s.r, s.r.cfg, s.r.net, s.rep
	L, D, C := net.Layers(), r.train.D, r.train.Classes
	s.draw = r.buf.Sample(s.draw, cfg.ReplayBatch, r.rng)
	n := len(s.draw)
	rep.SetRows(n)
	for k, it := range s.draw {
		copy(rep.Input(k, D), r.buf.Row(it))
		s.y[k] = r.buf.Label(it)
	}
	net.Forward(rep)
	lossRows(cfg.loss(), rep, s.y[:n], L, C)
	net.Backward(rep, r.grad)
	lr := cfg.LR * cfg.ReplayGain
	if cfg.Isolate {
		r.adam.StepMasked(net, net.Params, r.grad, s.mask, lr)
	} else {
		r.adam.Step(net.Params, r.grad, lr)
	}
	net.Rewire()
	if s.probe != nil {
		s.probe("replay")
	}
	r.countReplay(n)
	return n
}

// record adds this replay step's asleep fraction and rho per hidden layer
// (from the n replayed rows) to the sums and writes their means so far to
// the result.
func (s *localStep) record(n int) {
	r, L := s.r, s.r.net.Layers()
	s.steps++
	for l := 1; l < L; l++ {
		anyNonZero(s.fired[l], s.rep.A[l], n, s.acc)
		na, nr, ni := 0, 0, 0
		for i, a := range s.awake[l] {
			if a {
				na++
			}
			if s.fired[l][i] {
				nr++
				if !a {
					ni++
				}
			}
		}
		s.asleepSum[l-1] += 1 - float64(na)/float64(len(s.awake[l]))
		s.rhoSum[l-1] += float64(ni) / float64(max(1, nr))
	}
	r.res.AsleepFrac = r.res.AsleepFrac[:0]
	r.res.Rho = r.res.Rho[:0]
	for l := range s.asleepSum {
		r.res.AsleepFrac = append(r.res.AsleepFrac, s.asleepSum[l]/float64(s.steps))
		r.res.Rho = append(r.res.Rho, s.rhoSum[l]/float64(s.steps))
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
// a is non-zero in any of the first rows rows, using acc (len(dst)
// entries) as scratch. It ORs the entries' bits without their sign, so no
// branch depends on the data: -0 counts as zero and NaN as non-zero, as
// v != 0 has them.
func anyNonZero(dst []bool, a []float32, rows int, acc []uint32) {
	n := len(dst)
	acc = acc[:n]
	clear(acc)
	for r := range rows {
		for i, v := range a[r*n : (r+1)*n] {
			acc[i] |= math.Float32bits(v) &^ (1 << 31)
		}
	}
	for i, x := range acc {
		dst[i] = x != 0
	}
}
