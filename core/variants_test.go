package core

import (
	"cmp"
	"math"
	"slices"
	"testing"

	"repro/internal/kernels"
)

// stepN performs n waking steps on random batches of r's train set.
func stepN(r *localRun, n int) {
	cfg := r.cfg
	etaW, etaR := cfg.Eta*float64(cfg.BatchWake)/256, cfg.Eta*cfg.NremGain
	for range n {
		batch := make([]int, cfg.BatchWake)
		for b := range batch {
			batch[b] = r.rng.IntN(r.train.N)
		}
		r.wakingStep(batch, etaW, etaR)
	}
}

func firedSet(nt *net, p *pass, l int) []bool {
	f := make([]bool, nt.sizes[l])
	for _, i := range p.act[l][:p.actPtr[l][p.n]] {
		f[i] = true
	}
	return f
}

func anyTrue(b []bool) bool { return slices.Contains(b, true) }

// TestRotationModes checks the suppression each mask mode sets for the next
// batch and the awake sets it uses for replay.
func TestRotationModes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		mask  string
		noIso bool
	}{{"refractory", false}, {"silent", false}, {"none", false}, {"random", false}, {"soft", false}, {"mirror", false}, {"refractory", true}}
	for _, tc := range tests {
		cfg := tinyConfig()
		cfg.Mask, cfg.NoIso = tc.mask, tc.noIso
		r := newTinyRun(t, cfg, 5, 3)
		stepN(r, 1)
		nt := r.nt
		p := r.wake
		for l := 1; l < nt.L; l++ {
			fired := firedSet(nt, p, l) // the last batch's (pre-update) activity
			switch tc.mask {
			case "refractory", "soft":
				if r.sup == nil {
					t.Fatalf("%s: no suppression after a step", tc.mask)
				}
				want := float32(1)
				if tc.mask == "soft" {
					want = 0.5
				}
				for i, f := range fired {
					if (r.sup[l][i] == want) != f || (r.sup[l][i] != 0 && r.sup[l][i] != want) {
						t.Fatalf("%s: layer %d unit %d suppression %v, fired %v", tc.mask, l, i, r.sup[l][i], f)
					}
				}
			case "random":
				nf, ns := 0, 0
				for i, f := range fired {
					if f {
						nf++
					}
					if r.sup[l][i] == 1 {
						ns++
					}
				}
				if nf != ns {
					t.Fatalf("random: layer %d benches %d units, want the %d that fired", l, ns, nf)
				}
			default:
				if r.sup != nil {
					t.Fatalf("%s: suppression set", tc.mask)
				}
			}
			unmasked := tc.mask == "none" || tc.mask == "mirror" || tc.noIso
			if anyTrue(r.awake[l]) == unmasked {
				t.Fatalf("%s no_iso=%v: awake set non-empty = %v", tc.mask, tc.noIso, anyTrue(r.awake[l]))
			}
			if !unmasked && !slices.Equal(r.awake[l], fired) {
				t.Fatalf("%s: awake set is not the fired set", tc.mask)
			}
		}
	}
}

// TestRotationResetAtTaskBoundary: the suppression is cleared after each
// task, not between epochs.
func TestRotationResetAtTaskBoundary(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Epochs = 2
	train := tinyData(1, 10, 4, 4, 5)
	eval := tinyData(2, 5, 4, 4, 5)
	r, err := newLocalRun(&cfg, train, eval, pairTasks(4), 0, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	// 20 samples per task, batches of 4: 5 per epoch, 10 per task.
	supAt := map[int]bool{}
	r.hooks.Progress = func(done, total int) { supAt[done] = r.supWake != nil }
	if _, err := r.run(); err != nil {
		t.Fatal(err)
	}
	if !supAt[5] || !supAt[6] {
		t.Error("rotation reset between epochs")
	}
	if supAt[11] || supAt[1] {
		t.Error("the first batch of a task ran under suppression")
	}
	if !supAt[12] {
		t.Error("rotation not running within a task")
	}
}

// TestReadoutOnlyReplay: a replay update leaves every hidden synapse and bias
// untouched and moves the readout; skip synapses keep the
// pre-or-post-asleep mask and move, as the reference's replay loop gives
// them (it does not look at replay_readout_only for S^l).
func TestReadoutOnlyReplay(t *testing.T) {
	t.Parallel()
	for _, skip := range []bool{false, true} {
		cfg := tinyConfig()
		cfg.ReplayReadoutOnly = true
		if skip {
			cfg.Hidden, cfg.Skip = []int{24, 20, 16, 12}, true
		}
		r := newTinyRun(t, cfg, 2, 8)
		nt := r.nt
		masks, p := settledReplay(r, 4, NewRNG(1, StreamRun))
		before := make([]layerState, nt.L+1)
		skips := make([][]float32, nt.L+1)
		for l := 1; l <= nt.L; l++ {
			before[l] = saveLayer(nt.lay[l])
			if sk := nt.skip[l]; sk != nil {
				skips[l] = slices.Clone(sk.w)
			}
		}
		nt.update(&cfg, p, 0.06, masks, masks != nil)
		for l := 1; l < nt.L; l++ {
			if !bitsEqual(before[l].w, nt.lay[l].w) || !bitsEqual(before[l].bias, nt.lay[l].bias) || !bitsEqual(before[l].v, nt.lay[l].m1) {
				t.Errorf("skip=%v: hidden layer %d moved under readout-only replay", skip, l)
			}
		}
		if bitsEqual(before[nt.L].w, nt.lay[nt.L].w) {
			t.Errorf("skip=%v: readout did not move", skip)
		}
		moved := false
		for l := range skips {
			if skips[l] != nil && !bitsEqual(skips[l], nt.skip[l].w) {
				moved = true
			}
		}
		if skip && !moved {
			t.Error("no skip synapse moved under readout-only replay")
		}
	}
}

// TestMirrorMasksWakingUpdate: after a replay, the next waking update leaves
// synapses between replay-active units (input always active) unchanged.
func TestMirrorMasksWakingUpdate(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Mask = "mirror"
	r := newTinyRun(t, cfg, 4, 3)
	nt := r.nt
	if !r.haveRact {
		t.Fatal("no replay-active sets after replay")
	}
	ract := make([][]bool, nt.L)
	for l := 1; l < nt.L; l++ {
		ract[l] = slices.Clone(r.ractive[l])
	}
	before := make([]layerState, nt.L+1)
	for l := 1; l <= nt.L; l++ {
		before[l] = saveLayer(nt.lay[l])
	}
	ebar := make([][]float32, nt.L)
	for l := 1; l < nt.L; l++ {
		ebar[l] = slices.Clone(nt.ebar[l])
	}
	cfg2 := cfg
	cfg2.Buffer = 0 // no replay after this waking update
	r.cfg = &cfg2
	stepN(r, 1)
	// The masked waking call is still a waking call: it moves the burst
	// baseline (the reference's caller passes replay=False with the mask).
	for l := 1; l < nt.L; l++ {
		if bitsEqual(ebar[l], nt.ebar[l]) {
			t.Errorf("layer %d: the masked waking call left the burst baseline alone", l)
		}
	}
	blocked, moved := 0, 0
	for l := 1; l < nt.L; l++ {
		ly := nt.lay[l]
		for i := range ly.nOut {
			for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
				j := ly.col[s]
				if ract[l][i] && (l == 1 || ract[l-1][j]) {
					blocked++
					if ly.w[s] != before[l].w[s] || ly.m1[s] != before[l].v[s] {
						t.Fatalf("layer %d synapse (%d,%d) between replay-active units moved", l, i, j)
					}
				} else if ly.w[s] != before[l].w[s] {
					moved++
				}
			}
		}
	}
	if blocked == 0 || moved == 0 {
		t.Errorf("degenerate: %d blocked, %d moved", blocked, moved)
	}
}

// TestMaskPostWake: the awake sets come from a re-inference after the waking
// update.
func TestMaskPostWake(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Mask = "silent"
	cfg.MaskPostWake = true
	cfg.Buffer = 0
	r := newTinyRun(t, cfg, 6, 5)
	nt := r.nt
	q := newPass(nt, cfg.BatchWake)
	q.n = r.wake.n
	copy(q.x, r.wake.x)
	nt.forward(q, nil)
	for l := 1; l < nt.L; l++ {
		if !slices.Equal(r.awake[l], firedSet(nt, q, l)) {
			t.Errorf("layer %d: awake set is not the post-update fired set", l)
		}
	}
}

func TestSchedules(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		edit        func(*LocalConfig)
		steps, want int
	}{
		{"cadence 1", func(c *LocalConfig) {}, 12, 12},
		{"cadence 4", func(c *LocalConfig) { c.Cadence = 4 }, 12, 3},
		{"cadence 5", func(c *LocalConfig) { c.Cadence = 5 }, 12, 2},
		{"burst 3", func(c *LocalConfig) { c.Burst = 3 }, 12, 36},
		{"clocked burst", func(c *LocalConfig) { c.Cadence = 6; c.Burst = 4 }, 12, 8},
		{"no buffer", func(c *LocalConfig) { c.Buffer = 0 }, 12, 0},
		{"surprise never", func(c *LocalConfig) { c.Gate = "surprise"; c.Theta = 1e9 }, 12, 0},
		{"surprise always", func(c *LocalConfig) { c.Gate = "surprise"; c.Theta = 0 }, 12, 12},
		{"pressure never", func(c *LocalConfig) { c.Gate = "pressure"; c.Theta = 1e9 }, 12, 0},
	}
	for _, tc := range tests {
		cfg := tinyConfig()
		tc.edit(&cfg)
		r := newTinyRun(t, cfg, 1, tc.steps)
		if r.res.ReplayUpdates != tc.want || r.res.ReplaySamples != tc.want*cfg.BatchReplay {
			t.Errorf("%s: %d replay updates (%d samples), want %d", tc.name, r.res.ReplayUpdates, r.res.ReplaySamples, tc.want)
		}
	}
}

// TestPressureDischarge: the pressure trigger fires when the mean pressure
// of the asleep units reaches theta, and each micro-batch discharges only
// the asleep units.
func TestPressureDischarge(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Gate = "pressure"
	cfg.Theta = 0.3
	r := newTinyRun(t, cfg, 3, 1)
	fired := 0
	for range 40 {
		before := make([][]float64, r.nt.L)
		for l := 1; l < r.nt.L; l++ {
			before[l] = slices.Clone(r.pressure[l])
		}
		n0 := r.res.ReplayUpdates
		stepN(r, 1)
		if r.res.ReplayUpdates == n0 {
			continue
		}
		fired++
		for l := 1; l < r.nt.L; l++ {
			for i, a := range r.awake[l] {
				switch {
				case !a && r.pressure[l][i] != 0:
					t.Fatalf("asleep unit %d of layer %d not discharged: %g", i, l, r.pressure[l][i])
				case a && r.pressure[l][i] < before[l][i]:
					t.Fatalf("awake unit %d of layer %d discharged", i, l)
				}
			}
		}
	}
	if fired == 0 || fired == 40 {
		t.Errorf("pressure gate fired %d of 40 times", fired)
	}
}

// gateTrace feeds a sequence of batch errors to the rotation gate.
func gateTrace(cfg LocalConfig, sb []float64) []bool {
	r := &localRun{cfg: &cfg, nt: &net{mode: cfg.modes()}}
	out := make([]bool, len(sb))
	for i, v := range sb {
		out[i] = r.rotationGate(v)
	}
	return out
}

// TestRotationGates: the per-batch gate's warm-up (batches 1-19 rotate), its
// clauses, and the bout gate staying on for M batches after the last
// trigger, then an OFF refractory.
func TestRotationGates(t *testing.T) {
	t.Parallel()
	// Error high for the warm-up, low for a long stretch, a spike, low again.
	var sb []float64
	for i := range 300 {
		switch {
		case i < 20:
			sb = append(sb, 1)
		case i >= 150 && i < 153:
			sb = append(sb, 50)
		default:
			sb = append(sb, 0.01)
		}
	}
	cfg := tinyConfig()
	cfg.Gate = "refr_prog"
	cfg.GammaP = 0.5
	prog := gateTrace(cfg, sb)
	for i := range 19 {
		if !prog[i] {
			t.Fatalf("per-batch gate closed at warm-up batch %d", i+1)
		}
	}
	if prog[100] || !prog[150] {
		t.Errorf("per-batch gate: open at a quiet batch (%v) or closed at the spike (%v)", prog[100], prog[150])
	}
	// Bout gate: on for exactly M batches after each trigger.
	cfg.Gate, cfg.Block = "refr_block", 16
	bout := gateTrace(cfg, sb)
	last := -1
	for i, trig := range prog {
		if trig {
			last = i
		}
		want := last >= 0 && i-last < cfg.Block
		if bout[i] != want {
			t.Fatalf("bout gate at batch %d = %v, want %v (last trigger %d, M %d)", i, bout[i], want, last, cfg.Block)
		}
	}
	// OFF refractory: after a bout ends, triggers are ignored for block_off.
	cfg.BlockOff = 1000
	off := gateTrace(cfg, sb)
	if off[150] {
		t.Error("bout gate re-armed during its OFF refractory")
	}
	// Novelty only.
	cfg.Gate = "refr_nov"
	nov := gateTrace(cfg, sb)
	if nov[100] || !nov[151] {
		t.Errorf("novelty gate: quiet %v, spike %v", nov[100], nov[151])
	}
}

// TestAdamMasks: masked Adam confines both moments to the mask; with leaking
// moments they advance everywhere while weights stay masked.
func TestAdamMasks(t *testing.T) {
	t.Parallel()
	for _, leak := range []bool{false, true} {
		cfg := tinyConfig()
		cfg.Opt, cfg.Eta, cfg.LeakMoments = "adam", 1e-3, leak
		r := newTinyRun(t, cfg, 8, 6)
		nt := r.nt
		masks, p := settledReplay(r, 4, NewRNG(3, StreamRun))
		ly := nt.lay[2]
		m1, m2, w := slices.Clone(ly.m1), slices.Clone(ly.m2), slices.Clone(ly.w)
		nt.update(&cfg, p, 3e-3, masks, masks != nil)
		outsideMoved, weightMoved := 0, 0
		for i := range ly.nOut {
			for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
				if masks[2].synFree(i, int(ly.col[s])) {
					continue
				}
				if ly.m1[s] != m1[s] || ly.m2[s] != m2[s] {
					outsideMoved++
				}
				if ly.w[s] != w[s] {
					weightMoved++
				}
			}
		}
		if weightMoved != 0 {
			t.Errorf("leak=%v: %d masked-out weights moved", leak, weightMoved)
		}
		if leak != (outsideMoved > 0) {
			t.Errorf("leak=%v: %d moments moved outside the mask", leak, outsideMoved)
		}
	}
}

// TestMomentumZero: with mu = 0 the velocity is the current gradient only.
func TestMomentumZero(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Momentum, cfg.Eta, cfg.NremGain = 0, 0.2, 0.3
	cfg.Buffer = 0
	r := newTinyRun(t, cfg, 1, 3)
	nt := r.nt
	ly := nt.lay[nt.L]
	p := randomBatchPass(r, 4, NewRNG(5, StreamRun))
	nt.forward(p, nil)
	nt.sweep(p, 1)
	nt.update(&cfg, p, 0.01, nil, false)
	// Readout: v = G = eps^T a / n exactly as accumulated.
	C := ly.nOut
	for i := range C {
		for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
			var g float64
			for b := range p.n {
				g += float64(p.eps[nt.L][b*C+i]) * float64(p.a[nt.L-1][b*ly.nIn+int(ly.col[s])]) / float64(p.n)
			}
			if math.Abs(float64(ly.m1[s])-g) > 1e-6 {
				t.Fatalf("readout velocity %g, want the gradient %g", ly.m1[s], g)
			}
		}
	}
}

// TestAnchor: with mu_a = 0 and lambda_a = 1 the slow copy stays at the
// first waking call's weights and pulls W^1 back to them on every waking
// call.
func TestAnchor(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Anchor = []float64{1, 0}
	cfg.Buffer = 0
	r := newTinyRun(t, cfg, 2, 1)
	w1 := slices.Clone(r.nt.lay[1].w)
	stepN(r, 5)
	if !bitsEqual(w1, r.nt.lay[1].w) {
		t.Error("anchored W^1 left its slow copy")
	}
	cfg.Anchor = []float64{3e-4, 3e-4}
	r = newTinyRun(t, cfg, 2, 1)
	w1 = slices.Clone(r.nt.lay[1].w)
	stepN(r, 5)
	if bitsEqual(w1, r.nt.lay[1].w) {
		t.Error("weakly anchored W^1 did not move")
	}
}

// TestNightAndStatic: the combo night adds NightBatches replay updates per
// epoch; static runs one task with forgetting 0; single pass is one epoch.
func TestNightAndStatic(t *testing.T) {
	t.Parallel()
	train := tinyData(1, 10, 4, 4, 5)
	eval := tinyData(2, 5, 4, 4, 5)
	cfg := tinyConfig()
	cfg.Night, cfg.NightBatches, cfg.NightBatch, cfg.Epochs = true, 3, 8, 2
	res, err := TrainLocal(cfg, train, eval, pairTasks(4), 0, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	// 2 tasks x 2 epochs x 5 batches, each with one replay, plus 4 nights of 3.
	if res.WakingBatches != 20 || res.ReplayUpdates != 20+12 || res.ReplaySamples != 20*4+12*8 {
		t.Errorf("night: %d waking, %d replay, %d samples", res.WakingBatches, res.ReplayUpdates, res.ReplaySamples)
	}
	cfg = tinyConfig()
	cfg.Static = true
	res, err = TrainLocal(cfg, train, eval, pairTasks(4), 0, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Acc) != 1 || res.Forgetting != 0 || res.WakingBatches != 10 {
		t.Errorf("static: %d rows, F %g, %d batches", len(res.Acc), res.Forgetting, res.WakingBatches)
	}
}

// TestControllerLambda: the drive-referenced controller's lambda is
// min(0.02, rho * ubar / |W|), with the EMA over waking calls only, and the
// decay it applies matches.
func TestControllerLambda(t *testing.T) {
	t.Parallel()
	for _, rho := range []float64{0.25, 1e6} {
		cfg := tinyConfig()
		cfg.KPAdapt = rho
		r := newTinyRun(t, cfg, 3, 4)
		ly := r.nt.lay[2]
		uBefore := ly.uEMA
		w := slices.Clone(ly.w)
		op := optim{eta: 0.01}
		sumD, sumW := 0.5, 40.0
		r.nt.controllerDecay(&cfg, ly, nil, &op, &kernels.CtrlSums{D: [4]float64{sumD}, W: [4]float64{sumW}}, false, false)
		total := float64(ly.nIn * ly.nOut)
		ub := 0.98*uBefore + 0.02*sumD/total
		want := min(0.02, rho*ub/(sumW/total+1e-12))
		for s := range w {
			exp := w[s] - float32(want)*w[s]
			if sg := ly.sign[ly.col[s]]; sg*exp < 0 || ly.absent[s] {
				exp = 0
			}
			if math.Abs(float64(ly.w[s]-exp)) > 1e-7 {
				t.Fatalf("rho=%g: w[%d] = %g, want %g (lambda %g)", rho, s, ly.w[s], exp, want)
			}
		}
		if rho > 1 && want != 0.02 {
			t.Errorf("clip not reached: %g", want)
		}
		// Replay calls leave the EMA alone.
		u := ly.uEMA
		r.nt.controllerDecay(&cfg, ly, nil, &op, &kernels.CtrlSums{D: [4]float64{5}, W: [4]float64{sumW}}, true, false)
		if ly.uEMA != u {
			t.Error("replay call moved the controller's EMA")
		}
	}
}

// TestDeepNet: three hidden layers run and keep Proposition 1.
func TestDeepNet(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Hidden = []int{24, 16, 12}
	r := newTinyRun(t, cfg, 1, 6)
	nt := r.nt
	if nt.L != 4 || r.res.ReplayUpdates != 6 {
		t.Fatalf("L = %d, %d replays", nt.L, r.res.ReplayUpdates)
	}
	p := randomBatchPass(r, 3, NewRNG(1, StreamRun))
	nt.forward(p, r.sup)
	before := snapshot(nt, p)
	aw := awakeOf(nt, p)
	perturb(nt, NewRNG(2, StreamRun), 1e3, func(l, _, j int) bool { return l >= 2 && !aw[l-1][j] }, nil)
	nt.forward(p, r.sup)
	after := snapshot(nt, p)
	for l := 1; l <= nt.L; l++ {
		if !bitsEqual(before[l], after[l]) {
			t.Errorf("layer %d changed", l)
		}
	}
}

// TestSkipSynapses: with skips (4 hidden layers, S^3 and S^4) the skip path
// carries drive, Dale's signs of layer l-2 hold after training steps, replay
// masks two layers apart keep S^l's masked synapses frozen, and Proposition
// 1 stays exact across the skip.
func TestSkipSynapses(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Hidden = []int{24, 20, 16, 12}
	cfg.Skip = true
	r := newTinyRun(t, cfg, 2, 8)
	nt := r.nt
	if nt.skip[3] == nil || nt.skip[4] == nil || nt.skip[2] != nil || nt.skip[nt.L] != nil {
		t.Fatal("skip synapses not where they belong (l = 3..L-1)")
	}
	for l := 3; l < nt.L; l++ {
		sk := nt.skip[l]
		for s, j := range sk.col {
			if sg := nt.types[l-2][j]; sg*sk.w[s] < 0 || sg*sk.fb[s] < 0 {
				t.Fatalf("S^%d synapse %d violates Dale", l, s)
			}
		}
	}
	// Masked replay step: S^l moves only where post asleep or pre silent.
	masks := r.replayMasks()
	sk := nt.skip[3]
	w := slices.Clone(sk.w)
	p := randomBatchPass(r, 4, NewRNG(9, StreamRun))
	nt.forward(p, nil)
	nt.sweep(p, 1)
	nt.update(&cfg, p, 0.06, masks, masks != nil)
	m := masks[nt.L+1+3]
	if m == nil {
		t.Fatal("no skip mask")
	}
	frozen, moved := 0, 0
	for i := range sk.nOut {
		for s := sk.rowPtr[i]; s < sk.rowPtr[i+1]; s++ {
			if !m.synFree(i, int(sk.col[s])) {
				frozen++
				if sk.w[s] != w[s] {
					t.Fatalf("masked skip synapse (%d,%d) moved", i, sk.col[s])
				}
			} else if sk.w[s] != w[s] {
				moved++
			}
		}
	}
	if frozen == 0 || moved == 0 {
		t.Errorf("degenerate skip mask: %d frozen, %d moved", frozen, moved)
	}
	// Proposition 1 across two layers.
	nt.forward(p, r.sup)
	before := snapshot(nt, p)
	aw := awakeOf(nt, p)
	rng := NewRNG(4, StreamRun)
	n := 0
	for l := 3; l < nt.L; l++ {
		sk := nt.skip[l]
		for s, j := range sk.col {
			if !aw[l-2][j] {
				sk.w[s] += float32(rng.NormFloat64() * 1e4)
				n++
			}
		}
		sk.syncT()
	}
	nt.forward(p, r.sup)
	after := snapshot(nt, p)
	for l := 1; l <= nt.L; l++ {
		if !bitsEqual(before[l], after[l]) {
			t.Errorf("layer %d changed after a pre-silent skip update of %d synapses", l, n)
		}
	}
	// The skip path carries drive: zeroing S changes some activity.
	for l := 3; l < nt.L; l++ {
		clear(nt.skip[l].w)
		nt.skip[l].syncT()
	}
	nt.forward(p, r.sup)
	if gone := snapshot(nt, p); bitsEqual(before[3], gone[3]) && bitsEqual(before[4], gone[4]) {
		t.Error("removing the skip synapses changed nothing")
	}
}

// TestKeepLargest checks the connectivity draw's selection against the
// full sort it replaces (indices by key descending, then index ascending),
// with many equal keys and with none.
func TestKeepLargest(t *testing.T) {
	t.Parallel()
	rng := NewRNG(15, StreamRun)
	for trial := range 40 {
		total := 1 + rng.IntN(300)
		keys := make([]float64, total)
		for s := range keys {
			if trial%2 == 0 {
				keys[s] = float64(rng.IntN(5)) // ties everywhere
			} else {
				keys[s] = math.Log(rng.Float64()) / rng.Float64()
			}
		}
		n := rng.IntN(total + 1)
		idx := make([]int, total)
		for s := range idx {
			idx[s] = s
		}
		slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(keys[b], keys[a]) })
		want := make([]bool, total)
		for _, s := range idx[:n] {
			want[s] = true
		}
		got := make([]bool, total)
		keepLargest(got, keys, n)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d (%d keys, keep %d): selection differs from the sort", trial, total, n)
		}
	}
}
