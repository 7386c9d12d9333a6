package core

import (
	"fmt"
	"slices"
)

// TrainLocal runs the local learner with configuration cfg on a
// class-incremental stream and reports its metrics.
//
// Where the paper and the reference code disagree it follows the code
// ([CODE≠PAPER]): the burst baseline and re-bounded hidden signal, no decay
// on W^1, decay per update call, rotation reset per task, pressure discharge
// only under the pressure gate, the gates' warm-up clause. Port decisions that change no
// mathematics: the forward pass computes W^1 x as W^1 o + W^1 (x - o) with o
// the training set's per-pixel majority value (x - o is sparse on MNIST);
// only existing synapses are stored; W^l and its twin share one velocity
// (their gradients are identical); velocities below 1e-30 are flushed to 0
// (see kernels.TinyVelocity). Torch's random streams cannot be reproduced,
// so runs match the reference in distribution, not draw for draw.
//
// train holds the stream's samples; each task's stream is every train sample
// whose label is in the task, in dataset order, reshuffled every epoch (or, if
// cfg.Static, one task holding all classes). eval is evaluated after every
// task with the suppression off. The network's initialisation draws from
// NewRNG(seed, StreamInit), everything during the run (epoch permutations,
// reservoir writes, replay draws, random rotation) from NewRNG(seed,
// StreamRun). The run is deterministic and single-threaded.
//
// It returns an error wrapping ErrConfig for a bad config or mismatched
// data, and ErrStopped when hooks.Stop asked to stop.
func TrainLocal(cfg LocalConfig, train, eval *Dataset, tasks []Task, seed int64, hooks Hooks) (*Result, error) {
	r, err := newLocalRun(&cfg, train, eval, tasks, seed, hooks)
	if err != nil {
		return nil, err
	}
	return r.run()
}

// TrainLocalNetwork is TrainLocal that also returns the trained network
// (Network). It returns an error wrapping ErrConfig for a configuration
// the snapshot cannot hold (skip synapses).
func TrainLocalNetwork(cfg LocalConfig, train, eval *Dataset, tasks []Task, seed int64, hooks Hooks) (*Result, *Network, error) {
	r, err := newLocalRun(&cfg, train, eval, tasks, seed, hooks)
	if err != nil {
		return nil, nil, err
	}
	if cfg.Skip {
		return nil, nil, fmt.Errorf("%w: skip synapses: the trained network cannot be kept", ErrConfig)
	}
	res, err := r.run()
	if err != nil {
		return nil, nil, err
	}
	nw, err := r.nt.network()
	if err != nil {
		return nil, nil, err
	}
	return res, nw, nil
}

type localRun struct {
	cfg         *LocalConfig
	train, eval *Dataset
	tasks       []Task
	hooks       Hooks
	nt          *net
	rng         *RNG
	buf         *Reservoir
	wake, rep   *pass
	evalP       *pass

	sup       [][]float32 // suppression of the next waking forward (nil: none)
	supBuf    [2][][]float32
	supFlip   int
	supWake   [][]float32 // the suppression of the last waking forward
	fired     [][]bool    // scratch
	maskBuf   [2][]layerMask
	maskPtr   [2][]*layerMask
	sampleBuf []int
	awake     [][]bool // awake sets of the current waking batch
	ractive   [][]bool // mirror: units fired by the last replay batch
	haveRact  bool
	pressure  [][]float64 // homeostatic pressure per hidden unit
	gstep     int
	totalWake int

	// Gate state.
	fast, slow       float64
	emaInit          bool
	e0Sum            float64
	e0N              int
	blockCtr, offCtr int
	// gateSignal is the replay gate's last signal (the mean pressure of
	// the asleep units, or the surprise sb); the differential check
	// compares it with the reference's gate_log. Nothing reads it.
	gateSignal float64

	nightBatches int

	res      Result
	rhoSum   []float64
	sleepSum []float64
	drift    *driftAcc
	channels [3]int64   // DiagChannels: masked synapse entries per channel
	ext      extraState // appendix variants (rotation.go)

	// probe, when set (the differential check, inject.go), is called
	// after every update call of a waking step: "wake" after the waking
	// update, "replay" after each replay update.
	probe func(stage string)
}

func newLocalRun(cfg *LocalConfig, train, eval *Dataset, tasks []Task, seed int64, hooks Hooks) (*localRun, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if train == nil || eval == nil || train.N == 0 || eval.N == 0 {
		return nil, fmt.Errorf("%w: empty train or eval set", ErrConfig)
	}
	if train.D != eval.D || train.Classes != eval.Classes {
		return nil, fmt.Errorf("%w: train (d=%d, %d classes) and eval (d=%d, %d classes) differ",
			ErrConfig, train.D, train.Classes, eval.D, eval.Classes)
	}
	if cfg.Static {
		all := make(Task, train.Classes)
		for c := range all {
			all[c] = c
		}
		tasks = []Task{all}
	}
	if len(tasks) == 0 {
		return nil, fmt.Errorf("%w: no tasks", ErrConfig)
	}
	for ti, t := range tasks {
		for _, c := range t {
			if c < 0 || c >= train.Classes {
				return nil, fmt.Errorf("%w: task %d: class %d outside [0, %d)", ErrConfig, ti, c, train.Classes)
			}
		}
	}
	r := &localRun{cfg: cfg, train: train, eval: eval, tasks: tasks, hooks: hooks,
		rng: NewRNG(seed, StreamRun)}
	r.setNet(newNet(cfg, train.D, train.Classes, train.Height, train.Width, NewRNG(seed, StreamInit)), seed)
	r.buf = NewReservoir(cfg.Buffer, train.D, 0)
	L := r.nt.L
	r.awake = make([][]bool, L)
	r.ractive = make([][]bool, L)
	r.pressure = make([][]float64, L)
	for l := 1; l < L; l++ {
		n := r.nt.sizes[l]
		r.awake[l] = make([]bool, n)
		r.ractive[l] = make([]bool, n)
		r.pressure[l] = make([]float64, n)
	}
	r.fired = make([][]bool, L)
	for l := 1; l < L; l++ {
		r.fired[l] = make([]bool, r.nt.sizes[l])
	}
	for k := range 2 {
		r.supBuf[k] = make([][]float32, L)
		for l := 1; l < L; l++ {
			r.supBuf[k][l] = make([]float32, r.nt.sizes[l])
		}
		// Entries 1..L: W^l; entries L+1+l: the skip synapses S^l.
		r.maskBuf[k] = make([]layerMask, 2*(L+1))
		r.maskPtr[k] = make([]*layerMask, 2*(L+1))
	}
	r.rhoSum = make([]float64, L-1)
	r.sleepSum = make([]float64, L-1)
	if cfg.DiagDrift {
		r.drift = newDriftAcc(r.nt, cfg.BatchWake)
	}
	for _, t := range tasks {
		n := 0
		for _, y := range train.Y {
			if slices.Contains(t, int(y)) {
				n++
			}
		}
		r.totalWake += cfg.Epochs * ((n + cfg.BatchWake - 1) / cfg.BatchWake)
	}
	return r, nil
}

// setNet makes nt the run's network: its input offset from the training
// set, its forward product, its substrate switches and the passes over it.
func (r *localRun) setNet(nt *net, seed int64) {
	cfg, train := r.cfg, r.train
	r.nt = nt
	off, matching := InputOffset(train)
	r.nt.setOffset(off)
	batch := min(cfg.BatchWake, cfg.BatchReplay)
	if cfg.Night {
		batch = min(batch, cfg.NightBatch)
	}
	r.nt.useRowForward(1-float64(matching)/float64(train.N*train.D), batch)
	r.nt.sub = newSubstrate(cfg, seed)
	r.wake = newPass(r.nt, cfg.BatchWake)
	rc := cfg.BatchReplay
	if cfg.Night {
		rc = max(rc, cfg.NightBatch)
	}
	r.rep = newPass(r.nt, rc)
	r.evalP = newPass(r.nt, 256)
}

// rates returns the waking and replay learning rates: eta * batch_wake /
// 256 (the configured waking batch, also for a short last batch) and eta *
// nrem_gain.
func (c *LocalConfig) rates() (wake, replay float64) {
	return c.Eta * float64(c.BatchWake) / 256, c.Eta * c.NremGain
}

func (r *localRun) run() (*Result, error) {
	cfg := r.cfg
	T := len(r.tasks)
	r.res.Acc = make([][]float64, T)
	etaWake, etaReplay := cfg.rates()
	batch := make([]int, 0, cfg.BatchWake)
	done := 0
	for ti, task := range r.tasks {
		var idx []int
		for i, y := range r.train.Y {
			if slices.Contains(task, int(y)) {
				idx = append(idx, i)
			}
		}
		for range cfg.Epochs {
			if r.hooks.Stop != nil && r.hooks.Stop() {
				return nil, ErrStopped
			}
			perm := r.rng.Perm(len(idx))
			for lo := 0; lo < len(perm); lo += cfg.BatchWake {
				batch = batch[:0]
				for _, p := range perm[lo:min(lo+cfg.BatchWake, len(perm))] {
					batch = append(batch, idx[p])
				}
				r.wakingStep(batch, etaWake, etaReplay)
				done++
				if r.hooks.Progress != nil {
					r.hooks.Progress(done, r.totalWake)
				}
			}
			r.endEpoch(etaReplay)
		}
		r.endTask()
		r.res.Acc[ti] = r.evaluate(ti)
	}
	r.finish()
	return &r.res, nil
}

// endEpoch runs what follows an epoch's last waking batch: the combo
// night, structural plasticity, weight mirroring.
func (r *localRun) endEpoch(etaReplay float64) {
	cfg := r.cfg
	if cfg.Night {
		r.night(etaReplay)
		if cfg.SP == "night" {
			r.structural()
		}
	}
	if cfg.SP == "epoch" {
		r.structural()
	}
	if cfg.Mirror > 0 {
		r.mirrorPhase()
	}
}

// endTask resets the rotation state after a task's last epoch.
// [CODE≠PAPER] The rotation state is reset at every task boundary (not
// between epochs); the paper does not mention it.
func (r *localRun) endTask() {
	r.sup = nil
}

// wakingStep is one waking batch in the reference's order: settle, next
// rotation mask, waking update, reservoir write, awake sets, and, when
// the schedule and gate call for it, a replay burst.
func (r *localRun) wakingStep(batch []int, etaWake, etaReplay float64) {
	cfg, nt, p := r.cfg, r.nt, r.wake
	p.load(r.train, batch)
	supWake := r.sup
	r.supWake = supWake
	nt.settle(p, supWake, float32(cfg.TgtScale), true)
	r.res.WakingBatches++
	sb := meanSqOut(nt, p)

	// Next rotation mask from the pre-update activities.
	r.sup = r.nextSuppression(p, sb)

	// Waking update: unmasked, or masked by the last replay batch (mirror).
	// The mirror's masked waking call is still a waking call: it updates
	// the burst baseline (and the controller's EMA and the anchor) like any
	// other, as the reference's caller says by passing replay=False with
	// the mask.
	var wakeMasks []*layerMask
	if r.nt.mode.mask == maskMirror && r.haveRact {
		wakeMasks = r.masksFrom(r.ractive, false)
	}
	nt.update(cfg, p, etaWake, wakeMasks, false)
	if r.probe != nil {
		r.probe("wake")
	}
	p.train = false // later passes over this batch (re-inference, diagnostics) are not training

	// Reservoir write of the waking samples.
	d := nt.sizes[0]
	for b := range p.n {
		r.buf.Offer(p.x[b*d:(b+1)*d], p.y[b], nil, r.rng)
	}

	// Awake sets (and pressure) from the pre-update activities.
	if cfg.MaskPostWake {
		nt.forward(p, supWake) // re-infer after the waking update
	}
	mode := &r.nt.mode
	unmasked := mode.mask == maskNone || mode.mask == maskMirror || cfg.NoIso
	r.markAwake(p, unmasked)

	r.gstep++
	if !r.replayDue(sb) || r.buf.Len() == 0 {
		return
	}
	masks := r.replayMasks()
	if cfg.DiagChannels && !unmasked {
		r.countChannels(masks, supWake)
	}
	for range cfg.Burst {
		r.replayBatch(p, masks, supWake, etaReplay)
	}
}

// markAwake advances the use traces and sets the awake units of every
// hidden layer from pass src (cleared again when the mask is off), adding
// each unit's share of firing to its pressure.
func (r *localRun) markAwake(src *pass, unmasked bool) {
	r.advanceUse(src)
	for l := 1; l < r.nt.L; l++ {
		aw := r.awake[l]
		clear(aw)
		cnt := r.pressure[l]
		for b := range src.n {
			for _, i := range src.activeOf(l, b) {
				aw[i] = true
				cnt[i] += 1 / float64(src.n)
			}
		}
		if unmasked {
			clear(aw)
		}
	}
}

// replayDue reports whether this waking step replays, under the local
// schedule only: every cadence-th step, or by the gate (mean pressure of
// the silent units, or the surprise sb, against theta).
func (r *localRun) replayDue(sb float64) bool {
	cfg, mode := r.cfg, &r.nt.mode
	doReplay := cfg.Buffer > 0 && r.gstep%cfg.Cadence == 0 && mode.schedule == scheduleLocal
	switch mode.gate {
	case gatePressure:
		var sum float64
		var n int
		for l := 1; l < r.nt.L; l++ {
			for i, a := range r.awake[l] {
				if !a {
					sum += r.pressure[l][i]
					n++
				}
			}
		}
		doReplay = cfg.Buffer > 0 && n > 0 && sum/float64(n) >= cfg.Theta
		r.gateSignal = 0
		if n > 0 {
			r.gateSignal = sum / float64(n)
		}
	case gateSurprise:
		doReplay = cfg.Buffer > 0 && sb >= cfg.Theta
		r.gateSignal = sb
	}
	if mode.schedule != scheduleLocal {
		doReplay = false
	}
	return doReplay
}

// settleReplay loads the buffer rows of sample into the replay pass, adds
// the replay noise and settles it without rotation: the shared start of a
// replay step and of a night batch.
func (r *localRun) settleReplay(sample []int) *pass {
	nt, d := r.nt, r.nt.sizes[0]
	rp := r.rep
	rp.n = len(sample)
	for b, j := range sample {
		copy(rp.x[b*d:(b+1)*d], r.buf.Row(j))
		rp.y[b] = r.buf.Label(j)
	}
	r.addReplayNoise(rp)
	nt.settle(rp, nil, float32(r.cfg.TgtScale), false)
	return rp
}

// replayBatch is one batch of a replay burst after waking pass p: a
// reservoir sample, settled without suppression, and a masked update; then
// the bookkeeping (the mirror's replay-active sets, the pressure discharge,
// the drift probe).
func (r *localRun) replayBatch(p *pass, masks []*layerMask, supWake [][]float32, etaReplay float64) {
	cfg, nt, mode := r.cfg, r.nt, &r.nt.mode
	sample := r.buf.Sample(r.sampleBuf, cfg.BatchReplay, r.rng)
	r.sampleBuf = sample
	rp := r.settleReplay(sample)
	r.logRho(rp)
	if r.drift != nil {
		r.drift.before(nt, p, supWake)
	}
	nt.update(cfg, rp, etaReplay, masks, masks != nil)
	if r.probe != nil {
		r.probe("replay")
	}
	r.res.ReplayUpdates++
	r.res.ReplaySamples += rp.n
	r.afterReplay()
	if mode.mask == maskMirror {
		for l := 1; l < nt.L; l++ {
			clear(r.ractive[l])
			for _, i := range rp.act[l] {
				r.ractive[l][i] = true
			}
		}
		r.haveRact = true
	}
	// [CODE≠PAPER] Algorithm 1's discharge runs only under the
	// pressure gate; the default accumulates S without using it.
	if mode.gate == gatePressure {
		for l := 1; l < nt.L; l++ {
			for i, a := range r.awake[l] {
				if !a {
					r.pressure[l][i] *= 1 - cfg.Delta
				}
			}
		}
	}
	if r.drift != nil {
		r.drift.after(nt, supWake)
	}
}

// meanSqOut is the batch mean of sum_c (eps^L_c)^2, the surprise and
// novelty signal.
func meanSqOut(nt *net, p *pass) float64 {
	C := nt.sizes[nt.L]
	var s float64
	for _, e := range p.eps[nt.L][:p.n*C] {
		s += float64(e) * float64(e)
	}
	return s / float64(p.n)
}

// nextSuppression returns s(t+1) for the mask mode and gate.
func (r *localRun) nextSuppression(p *pass, sb float64) [][]float32 {
	cfg, nt := r.cfg, r.nt
	L := nt.L
	if !nt.mode.mask.rotates() || nt.mode.schedule == scheduleOffline {
		return nil
	}
	if !r.rotationGate(sb) {
		return nil
	}
	benched := false
	// Two buffers: the current suppression stays valid for this batch.
	r.supFlip ^= 1
	sup := r.supBuf[r.supFlip]
	for l := 1; l < L; l++ {
		n := nt.sizes[l]
		s := sup[l]
		clear(s)
		fired := r.fired[l]
		clear(fired)
		for _, i := range p.act[l] {
			fired[i] = true
		}
		switch nt.mode.mask {
		case maskRefractory:
			for i, f := range fired {
				if f {
					s[i] = 1
				}
			}
		case maskSoft:
			for i, f := range fired {
				if f {
					s[i] = float32(cfg.SoftGain)
				}
			}
		case maskRandom:
			kr := 0
			for _, f := range fired {
				if f {
					kr++
				}
			}
			for _, i := range r.rng.Perm(n)[:kr] {
				s[i] = 1
			}
		case maskRefrPress, maskRefrFrac:
			benched = r.pressureRest(p, l, s) || benched
		case maskRefrUtil:
			r.utilityRest(p, l, s, fired)
		}
		sup[l] = s
	}
	// The gate duty counts the batches after which rotation runs: the
	// gate opened, or pressure benched some unit.
	if nt.mode.gate != gateAlways || benched {
		r.ext.gateOn++
	}
	return sup
}

// rotationGate updates the novelty signals with this batch's error and
// reports whether rotation runs for the next batch.
func (r *localRun) rotationGate(sb float64) bool {
	cfg, gate := r.cfg, r.nt.mode.gate
	if !gate.gatesRotation() {
		return true
	}
	if !r.emaInit {
		r.fast, r.slow, r.emaInit = sb, sb, true
	} else {
		r.fast = 0.9*r.fast + 0.1*sb
		r.slow = 0.998*r.slow + 0.002*sb
	}
	novel := r.fast >= cfg.BetaNov*r.slow
	if gate == gateNovelty {
		return novel
	}
	// [CODE≠PAPER] The warm-up clause (rotation forced on while fewer than
	// 20 batches have been seen, i.e. batches 1-19) is in the code only.
	if r.e0N < 20 {
		r.e0Sum += sb
		r.e0N++
	}
	e0 := r.e0Sum / float64(r.e0N)
	trig := r.e0N < 20 || r.fast >= cfg.GammaP*e0 || novel
	if gate == gateProgress {
		return trig
	}
	if r.offCtr > 0 {
		r.offCtr--
	} else if trig {
		r.blockCtr = cfg.Block
	}
	if r.blockCtr > 0 {
		r.blockCtr--
		if r.blockCtr == 0 && cfg.BlockOff > 0 {
			r.offCtr = cfg.BlockOff
		}
		return true
	}
	return false
}

// replayMasks builds the replay masks from the awake sets.
func (r *localRun) replayMasks() []*layerMask {
	return r.masksFrom(r.awake, true)
}

// masksFrom builds per-layer masks M^l = 1 - awake^l (x) awake^{l-1} with the
// input always awake. For replay the readout follows cfg.Readout and
// replay_readout_only freezes the hidden layers; the mirror's waking mask
// leaves the readout unmasked.
func (r *localRun) masksFrom(awake [][]bool, replay bool) []*layerMask {
	cfg, L := r.cfg, r.nt.L
	k := 0
	if !replay {
		k = 1
	}
	masks, buf := r.maskPtr[k], r.maskBuf[k]
	for l := 1; l < L; l++ {
		m := &buf[l]
		*m = layerMask{post: awake[l]}
		if l == 1 {
			m.preAll = true
		} else {
			m.pre = awake[l-1]
		}
		if replay && cfg.ReplayReadoutOnly {
			*m = layerMask{frozen: true}
		}
		masks[l] = m
	}
	for l := 3; l < L; l++ {
		if r.nt.skip[l] == nil {
			continue
		}
		// [CODE≠PAPER] Readout-only replay does not freeze the skip
		// synapses: the reference's replay loop gives S^l the
		// pre-or-post-asleep mask whatever replay_readout_only says
		// (run_seq.py, run_local's skip_syn). No configuration combines
		// the two.
		m := &buf[L+1+l]
		*m = layerMask{post: awake[l], pre: awake[l-2]}
		masks[L+1+l] = m
	}
	masks[L] = nil
	if replay && r.nt.mode.readout == readoutIsolated {
		buf[L] = layerMask{postAll: true, pre: awake[L-1]}
		masks[L] = &buf[L]
	}
	return masks
}

// logRho accumulates the isolated-channel width and asleep fraction of one
// replay micro-batch.
func (r *localRun) logRho(rp *pass) {
	for l := 1; l < r.nt.L; l++ {
		n := r.nt.sizes[l]
		fired := r.fired[l]
		clear(fired)
		for _, i := range rp.act[l] {
			fired[i] = true
		}
		var nR, nIso, nAwake int
		for i, f := range fired {
			if r.awake[l][i] {
				nAwake++
			}
			if f {
				nR++
				if !r.awake[l][i] {
					nIso++
				}
			}
		}
		r.rhoSum[l-1] += float64(nIso) / float64(max(1, nR))
		r.sleepSum[l-1] += 1 - float64(nAwake)/float64(n)
	}
}

// night is the offline "combo" night: NightBatches unmasked buffer
// batches of NightBatch at eta*nrem_gain after an epoch, each counted as a
// replay update; the rotation state is reset.
func (r *localRun) night(eta float64) {
	cfg, nt := r.cfg, r.nt
	if r.buf.Len() == 0 {
		return
	}
	r.sup = nil
	var sample []int
	for range cfg.NightBatches {
		sample = r.buf.Sample(sample, cfg.NightBatch, r.rng)
		rp := r.settleReplay(sample)
		nt.update(cfg, rp, eta, nil, false) // the night's replay does the waking bookkeeping, as the reference's unmasked call does
		r.nightBatches++
		r.res.ReplayUpdates++
		r.res.ReplaySamples += rp.n
	}
}

// countChannels adds to r.channels the stored synapses each replay mask
// frees, by the channel through which they enter: presynaptic silent
// (pre j not awake, whatever the post unit), else postsynaptic asleep
// under suppression (s_i > 0, the rotation's forced rest, including a soft
// gain), else postsynaptic naturally asleep. The channels overlap (a silent
// pre onto an asleep post); each synapse counts once, in the first channel
// that frees it, so the counts partition the masked synapses. sup is the
// suppression of the waking forward that gave the awake sets.
func (r *localRun) countChannels(masks []*layerMask, sup [][]float32) {
	nt := r.nt
	for idx, m := range masks {
		if m == nil || m.frozen {
			continue
		}
		l, ly := idx, (*layer)(nil) // l: the post layer
		if idx <= nt.L {
			ly = nt.lay[idx]
		} else {
			l = idx - nt.L - 1
			ly = nt.skip[l]
		}
		if ly == nil {
			continue
		}
		var s []float32
		if sup != nil && l < nt.L {
			s = sup[l]
		}
		for i := range ly.nOut {
			syn := ly.col[ly.rowPtr[i]:ly.rowPtr[i+1]]
			silent := 0
			if !m.preAll {
				for _, j := range syn {
					if m.pre == nil || !m.pre[j] {
						silent++
					}
				}
			}
			r.channels[0] += int64(silent)
			if m.postAwake(i) {
				continue
			}
			rest := int64(len(syn) - silent)
			if s != nil && s[i] > 0 {
				r.channels[2] += rest
			} else {
				r.channels[1] += rest
			}
		}
	}
}
