package core

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"

	"repro/internal/refdump"
)

// The differential check against the authors' code (make reference-check;
// opt-in, REPRO_REFCHECK=1). For every path below, tools/refcheck/refstep.py
// runs the authors' run_local up to a waking batch and writes the learner
// state, the batches and the random draws; this test loads the state into
// our learner (injectRun), replays the draws (TapeRNG), runs the same steps
// and compares every tensor: after each update call of the first step
// (with the passes' activities and errors), then every --every steps.

// refPath is one learner path: a reference config and the steps recorded.
type refPath struct {
	name   string // the line's label
	ref    string // the authors' config name
	ours   func() (LocalConfig, error)
	step   int // first waking batch recorded (1-based)
	steps  int // batches run
	every  int // state compared every n batches
	trajec bool
	// control: a deliberately wrong port (the check must report it).
	control bool
	// edit, when set, changes our learner after every injection of the
	// reference's state: a wrong port that no config field expresses
	// (the skip controls).
	edit func(r *localRun)
	// ci: in the CI's short set (the disputed rows and the controls).
	ci bool
	// order, when > 0, runs the reference through the data order our
	// learner's seed 0 draws: the first epoch's permutation of order
	// samples (NewRNG(0, StreamRun).Perm, run's first draw), passed to
	// refstep.py as --order instead of torch's own.
	order int
}

func preset(name string) func() (LocalConfig, error) {
	return func() (LocalConfig, error) { return testPreset(name) }
}

func presetWith(name string, edit func(c *LocalConfig)) func() (LocalConfig, error) {
	return func() (LocalConfig, error) {
		c, err := testPreset(name)
		if err != nil {
			return c, err
		}
		edit(&c)
		return c, c.Validate()
	}
}

// refPaths are the step-level paths (70th waking batch: the buffer is full,
// so the reservoir writes draw).
var refPaths = []refPath{
	{name: "control: default system with the decay doubled", ci: true, ref: "g16_sgd_refr_s10_w512", control: true,
		ours: presetWith("g16_sgd_refr_s10_w512", func(c *LocalConfig) { c.KPDecay *= 2 })},
	{name: "control: default system with the burst gate off", ci: true, ref: "g16_sgd_refr_s10_w512", control: true,
		ours: presetWith("g16_sgd_refr_s10_w512", func(c *LocalConfig) { c.NoBurstGate = true })},
	{name: "default system", ci: true, ref: "g16_sgd_refr_s10_w512", ours: preset("g16_sgd_refr_s10_w512")},
	// CIFAR-10 raw (gray, 1,024 inputs): refstep.py rebuilds the pickled
	// archive the authors' loader reads from the data mirror's binary batches.
	{name: "CIFAR-10 raw, default", ci: true, ref: "cif_s10_sgd_refr", ours: preset("cif_s10_sgd_refr")},
	{name: "CIFAR-10 raw, unmasked", ref: "cif_s10_sgd_none", ours: preset("cif_s10_sgd_none")},
	{name: "control: CIFAR-10 raw, default with the decay doubled", ref: "cif_s10_sgd_refr", control: true,
		ours: presetWith("cif_s10_sgd_refr", func(c *LocalConfig) { c.KPDecay *= 2 })},
	{name: "controller (drive)", ci: true, ref: "g19b_mnist", ours: preset("g19b_mnist")},
	{name: "mirror", ci: true, ref: "g17_mirror_s10", ours: preset("g17_mirror_s10")},
	{name: "replay batch 2, isolated", ci: true, ref: "g17_sgd_br2_s10", ours: presetWith("g16_sgd_refr_s10_w512", func(c *LocalConfig) { c.BatchReplay = 2 })},
	{name: "replay batch 2, unmasked with rotation", ci: true, ref: "g26_ctrl_rot_noiso_br2", ours: presetWith("g26_ctrl_rot_noiso", func(c *LocalConfig) { c.BatchReplay = 2 })},
	{name: "silent (no rotation)", ref: "g16_sgd_silent_s10_w512", ours: preset("g16_sgd_silent_s10_w512")},
	{name: "unmasked", ref: "g17_sgd_none_s10", ours: preset("g17_sgd_none_s10")},
	{name: "rotation alone", ref: "g26_ctrl_rot_noiso", ours: preset("g26_ctrl_rot_noiso")},
	{name: "readout-only replay", ref: "g26_ctrl_readout_only", ours: preset("g26_ctrl_readout_only")},
	{name: "random rotation", ref: "g26_ctrl_random_rot", ours: preset("g26_ctrl_random_rot")},
	{name: "soft rotation", ref: "g17_soft_s10", ours: preset("g17_soft_s10")},
	{name: "masked Adam, confined", ref: "g17_adam_refr_s10", ours: preset("g17_adam_refr_s10")},
	{name: "masked Adam, leaking", ref: "g17_adam_leak_s10", ours: preset("g17_adam_leak_s10")},
	{name: "momentum 0", ref: "g22b_sgd0_e2_g03", ours: preset("g22b_sgd0_e2_g03")},
	{name: "per-batch gate", ref: "g17_sgd_prog05_s10", ours: preset("g17_sgd_prog05_s10")},
	{name: "bout gate", ref: "g16_sgd_block2048_s10_w512", ours: preset("g16_sgd_block2048_s10_w512")},
	{name: "pressure gate", ref: "g17_sgd_pburst16_s10", ours: preset("g17_sgd_pburst16_s10")},
	// The rest masks and the gates of tab:rotgates, fig:rotation and the
	// ablation's burst rows (the appendix's development phase: masked Adam
	// at 5% on 512-256, the rows' own presets).
	{name: "rest pressure θ_r = 4 (refr_press)", ci: true, ref: "g10_rp4_w512s5", ours: preset("g10_rp4_w512s5")},
	{name: "control: rest pressure θ_r = 4, the pressure not carried into the step", ci: true, ref: "g10_rp4_w512s5", control: true,
		ours: preset("g10_rp4_w512s5"), edit: clearRestPressure},
	{name: "rest fraction 25% (refr_frac)", ref: "g10_rf25_w512s5", ours: preset("g10_rf25_w512s5")},
	{name: "utility-exempt rotation q = 0.25 (refr_util)", ci: true, ref: "g15_sgd_util25_w512s5", ours: preset("g15_sgd_util25_w512s5")},
	{name: "utility-exempt rotation q = 0.1 (refr_util)", ref: "g15_sgd_util10_w512s5", ours: preset("g15_sgd_util10_w512s5")},
	{name: "control: utility-exempt rotation, the long-term use trace restarted at 0.5", ci: true, ref: "g15_sgd_util25_w512s5", control: true,
		ours: preset("g15_sgd_util25_w512s5"), edit: restartLongUse},
	{name: "novelty gate β = 1.1 (refr_nov)", ci: true, ref: "g10_nov11_w512s5", ours: preset("g10_nov11_w512s5")},
	{name: "control: novelty gate β = 1.1, the averages restarted at the step", ci: true, ref: "g10_nov11_w512s5", control: true,
		ours: preset("g10_nov11_w512s5"), edit: restartNovelty},
	{name: "progress gate γ = 0.5, masked Adam at 5% (refr_prog)", ref: "g11_prog05_w512s5", ours: preset("g11_prog05_w512s5")},
	{name: "surprise gate", ref: "g17_sgd_sburst16_s10", ours: preset("g17_sgd_sburst16_s10")},
	// The isolation-exactness rows (the drift diagnostic on): the readout
	// isolated like the hidden layers, and the awake sets re-inferred
	// after the waking update.
	{name: "isolated readout (drift diagnostic)", ref: "g21_diag_isolated", ours: preset("g21_diag_isolated")},
	{name: "awake sets after the waking update (drift diagnostic)", ref: "g25_diag_postwake_free", ours: preset("g25_diag_postwake_free")},
	{name: "depth 3, controller", ref: "g20_d3_kad", ours: preset("g20_d3_kad")},
	{name: "depth 5, controller", ref: "g20_d5_kad", ours: preset("g20_d5_kad")},
	// Skip synapses (the authors' phase 20B, S^l from a^{l-2} into the
	// hidden layers 3..L-1, with the feedback twin Bs^l): the depth-5 rows
	// with skips, controller and fixed decay.
	{name: "depth 5 with skips, controller", ci: true, ref: "g20b_d5_skip", ours: preset("g20b_d5_skip")},
	{name: "depth 4 with skips, controller", ref: "g20b_d4_skip", ours: preset("g20b_d4_skip")},
	{name: "depth 5 with skips, fixed decay", ref: "g20b_d5_fixskip", ours: preset("g20b_d5_fixskip")},
	{name: "control: depth 5 with skips, controller, the skip feedback Bs left out of the burst", ci: true, ref: "g20b_d5_skip", control: true,
		ours: preset("g20b_d5_skip"), edit: zeroSkipFeedback},
	{name: "control: depth 5 with skips, controller, the skip synapses' velocity reset", ci: true, ref: "g20b_d5_skip", control: true,
		ours: preset("g20b_d5_skip"), edit: resetSkipVelocity},
	{name: "anchor", ref: "g17_sgd_anchor_s10", ours: preset("g17_sgd_anchor_s10")},
	{name: "night reference (waking step)", ref: "g17_night_s10", ours: preset("g17_night_s10"), step: 40},
	{name: "substrate ladder V6, relaxation T = 5 (waking step)", ref: "v6_base", ours: preset("v6_base"), step: 40},
	{name: "substrate ladder V6 with the sweep (waking step)", ref: "v6_sweep", ours: preset("v6_sweep"), step: 40},
	// The rest of the substrate ladder (tab:substrate; run_mnist.fit_cortex,
	// one waking step at batch 40 of the first epoch).
	{name: "substrate ladder, unconstrained (waking step)", ref: "control_w_e3", ours: preset("control_w_e3"), step: 40},
	{name: "substrate ladder, bounded error and Dale (waking step)", ref: "base3_w_e3", ours: preset("base3_w_e3"), step: 40},
	{name: "substrate ladder, k-WTA 10% (waking step)", ref: "kwta10_w_e3", ours: preset("kwta10_w_e3"), step: 40},
	{name: "substrate ladder, k-WTA 5% (waking step)", ref: "kwta05_w_e3", ours: preset("kwta05_w_e3"), step: 40},
	{name: "substrate ladder, k-WTA 2% (waking step)", ref: "kwta02_w_e3", ours: preset("kwta02_w_e3"), step: 40},
	{name: "substrate ladder, relaxation T = 5 (waking step)", ref: "r4_T5", ours: preset("r4_T5"), step: 40},
	{name: "substrate ladder, relaxation T = 1 (waking step)", ref: "r4_T1", ours: preset("r4_T1"), step: 40},
	{name: "substrate ladder V5, 30% distance-dependent connectivity (waking step)", ref: "v5_base", ours: preset("v5_base"), step: 40},
	{name: "substrate ladder, random wiring at 30% (waking step)", ref: "c4_d30_rand", ours: preset("c4_d30_rand"), step: 41},
	{name: "substrate ladder V5 with heavy-ball SGD (waking step)", ref: "v5_sgd02", ours: preset("v5_sgd02"), step: 40},
	{name: "substrate ladder V6 without the KP decay (waking step)", ref: "v6_nokp", ours: preset("v6_nokp"), step: 40},
	{name: "substrate ladder V6 with mirroring (waking step)", ref: "v6_mirror", ours: preset("v6_mirror"), step: 40},
	{name: "substrate ladder V6 with mirroring and the KP decay (waking step)", ref: "v6_mirror_d3", ours: preset("v6_mirror_d3"), step: 40},
	// Across the end of the first epoch (batch 235 of 235, 96 images), for
	// the mirror night: refstep.py tapes its torch.randn draws.
	{name: "substrate ladder V6 with mirroring, across the first epoch end (the mirror night)", ref: "v6_mirror", ours: preset("v6_mirror"), step: 234, steps: 3},
	{name: "substrate ladder V6 with mirroring and the KP decay, across the first epoch end (the mirror night)", ref: "v6_mirror_d3", ours: preset("v6_mirror_d3"), step: 234, steps: 3},
	{name: "control: substrate ladder V6 with mirroring, 10 mirror batches a night instead of 20", ref: "v6_mirror", control: true, step: 234, steps: 3,
		ours: presetWith("v6_mirror", func(c *LocalConfig) { c.Mirror = 10 })},
	{name: "substrate ladder V6, multiplicative burst coding (waking step)", ref: "v6_mult", ours: preset("v6_mult"), step: 41},
	{name: "control: substrate ladder V6, the burst gate in place of multiplicative coding", ref: "v6_mult", control: true, step: 41,
		ours: presetWith("v6_mult", func(c *LocalConfig) { c.BurstMult = false })},
	{name: "no replay (waking step)", ref: "g17_ctx_none_s10", ours: preset("g17_ctx_none_s10"), step: 40},
	{name: "spike-count training, substrate ladder V6, T_s = 8 (waking step)", ci: true, ref: "v6_spiketrain8", ours: preset("v6_spiketrain8"), step: 40},
	{name: "control: spike-count training with the counts' window doubled", ci: true, ref: "v6_spiketrain8", control: true, step: 40,
		ours: presetWith("v6_spiketrain8", func(c *LocalConfig) { c.SpikeTrain *= 2 })},
}

func TestReferenceCheck(t *testing.T) {
	py := refdump.Python(t)
	ref := refdump.EnvOr("REPRO_REFCHECK_REF", "../../shared/spec/reference/src")
	mnist := refdump.EnvOr("REPRO_REFCHECK_MNIST", filepath.Join(os.Getenv("REPRO_DATA"), "mnist"))
	refdump.Need(t, filepath.Join(ref, "run_seq.py"), filepath.Join(mnist, "train-images-idx3-ubyte.gz"))
	only := os.Getenv("REPRO_REFCHECK_ONLY")
	var paths []refPath
	switch refdump.Set(t) {
	case "all":
		paths = append(append(paths, refPaths...), trajectoryPaths...)
	case "step":
		paths = refPaths
	case "ci":
		for _, p := range refPaths {
			if p.ci {
				paths = append(paths, p)
			}
		}
	}
	var tally refdump.Tally
	for _, p := range paths {
		if only != "" && !strings.Contains(p.name, only) && p.ref != only {
			continue
		}
		line := runRefPath(t, py, ref, mnist, p)
		tally.Line(line, p.control)
	}
	if tally.Failed > 0 {
		t.Errorf("%d paths differ from the authors' code (lines above)", tally.Failed)
	}
}

// trajectoryPaths run a few hundred batches from the same state, compared
// every 50 (REPRO_REFCHECK_TRAJECTORY=1).
var trajectoryPaths = []refPath{
	{name: "default system, trajectory", ref: "g16_sgd_refr_s10_w512", ours: preset("g16_sgd_refr_s10_w512"), steps: 300, every: 50, trajec: true},
	{name: "controller (drive), trajectory", ref: "g19b_mnist", ours: preset("g19b_mnist"), steps: 300, every: 50, trajec: true},
	{name: "mirror, trajectory", ref: "g17_mirror_s10", ours: preset("g17_mirror_s10"), steps: 300, every: 50, trajec: true},
	{name: "replay batch 2, isolated, trajectory", ref: "g17_sgd_br2_s10", ours: presetWith("g16_sgd_refr_s10_w512", func(c *LocalConfig) { c.BatchReplay = 2 }), steps: 300, every: 50, trajec: true},
	{name: "combo night, trajectory across an epoch start", ref: "g17_sgd_br16_night_s10", ours: preset("g17_sgd_br16_night_s10"), step: 781, steps: 20, every: 10, trajec: true},
	{name: "night, batch 16, trajectory across an epoch start", ref: "g17_night_nb16_s10", ours: preset("g17_night_nb16_s10"), step: 40, steps: 20, every: 5, trajec: true},
	{name: "night reference, trajectory across an epoch start", ref: "g17_night_s10", ours: preset("g17_night_s10"), step: 40, steps: 20, every: 5, trajec: true},
	{name: "narrow night, trajectory across an epoch start", ref: "ctx_nrem_rand_1000", ours: preset("ctx_nrem_rand_1000"), step: 40, steps: 20, every: 5, trajec: true},
	{name: "controller (drive), trajectory across the first task boundary", ref: "g19b_mnist", ours: preset("g19b_mnist"), step: 3901, steps: 200, every: 50, trajec: true},
	{name: "default system, trajectory across the first task boundary", ref: "g16_sgd_refr_s10_w512", ours: preset("g16_sgd_refr_s10_w512"), step: 3901, steps: 200, every: 50, trajec: true},
	{name: "CIFAR-10 raw, unmasked, trajectory", ref: "cif_s10_sgd_none", ours: preset("cif_s10_sgd_none"), steps: 300, every: 50, trajec: true},
	{name: "CIFAR-10 raw, default, trajectory", ref: "cif_s10_sgd_refr", ours: preset("cif_s10_sgd_refr"), steps: 300, every: 50, trajec: true},
	{name: "depth 5 with skips, controller, trajectory", ref: "g20b_d5_skip", ours: preset("g20b_d5_skip"), steps: 300, every: 50, trajec: true},
	{name: "depth 5 with skips, controller, trajectory across the first task boundary", ref: "g20b_d5_skip", ours: preset("g20b_d5_skip"), step: 3901, steps: 200, every: 50, trajec: true},
	{name: "replay batch 2, unmasked with rotation, trajectory", ref: "g26_ctrl_rot_noiso_br2", ours: presetWith("g26_ctrl_rot_noiso", func(c *LocalConfig) { c.BatchReplay = 2 }), steps: 300, every: 50, trajec: true},
	// From the first batch: the buffer filling and the first replays from
	// a short buffer, which the paths above (from batch 70) leave out.
	{name: "default system, trajectory from the first batch", ref: "g16_sgd_refr_s10_w512", ours: preset("g16_sgd_refr_s10_w512"), step: 1, steps: 100, every: 5, trajec: true},
	// The η rows (docs/disputed.md): at η = 0.1 some seeds of both codes
	// blow up. Through our seed 0's data order, whose outlier sample at
	// batch 12 (a pixel 244 s.d. from its mean) sends W1 from 0.17 to
	// about 1.2 within ten batches in both codes and W3 to about 14 by
	// batch 100: the unstable regime, compared. (Past about 110 batches
	// of it float32 rounding, amplified, outgrows the tolerance.)
	{name: "η = 0.1 static, trajectory through our seed 0's data order", ref: "static_g23_sgd_refr_e1_s10", ours: presetWith("g16_sgd_refr_s10_w512", func(c *LocalConfig) { c.Eta, c.Static = 0.1, true }), step: 1, steps: 100, every: 5, trajec: true, order: 60000},
	{name: "η = 0.1 sequential, trajectory", ref: "g23_sgd_refr_e1_s10", ours: presetWith("g16_sgd_refr_s10_w512", func(c *LocalConfig) { c.Eta = 0.1 }), steps: 300, every: 50, trajec: true},
	// The gates and the rest masks along 1,500 batches (GateTrajectoryMin:
	// three time constants of the novelty gate's slow average), their
	// state compared after every step (the gates' scalars, the replay
	// count, the rotation decisions, the next batch's suppression) and
	// every tensor every 100 steps. The rotation gates close within the
	// first task once it is learnt; the window 2801-4300 holds the first
	// task's end, the task switch at batch 3961 (step 1160), where the
	// novelty opens them, and their closing again.
	{name: "novelty gate β = 1.1 (refr_nov), 1,500-batch trajectory across the first task boundary", ref: "g10_nov11_w512s5", ours: preset("g10_nov11_w512s5"), step: 2801, steps: 1500, every: 100, trajec: true},
	{name: "control: novelty gate, 1,500-batch trajectory, β = 1.2 against the reference's 1.1", ref: "g10_nov11_w512s5", control: true, trajec: true,
		ours: presetWith("g10_nov11_w512s5", func(c *LocalConfig) { c.BetaNov = 1.2 }), step: 2801, steps: 1500, every: 100},
	{name: "progress gate γ = 0.5 (refr_prog), 1,500-batch trajectory across the first task boundary", ref: "g11_prog05_w512s5", ours: preset("g11_prog05_w512s5"), step: 2801, steps: 1500, every: 100, trajec: true},
	{name: "bout gate (refr_block), 1,500-batch trajectory across the first task boundary", ref: "g16_sgd_block2048_s10_w512", ours: preset("g16_sgd_block2048_s10_w512"), step: 2801, steps: 1500, every: 100, trajec: true},
	// The bout armed by the warm-up at batch 1 ends after batch 2091 (step
	// 90) and the OFF refractory (4,096 batches) follows: 1,410 of the
	// window's batches, in which the trigger fires at 30 steps (the first
	// at step 878) and must be ignored. A k-WTA near-tie at batch 2034
	// (step 33) leaves the network check blind until the checkpoint at
	// step 100, and the re-synchronisation there injects the reference's
	// counters, so the control's OFF counter (one short, from step 90) is
	// caught by checkGateAlong, which follows the gate through every step.
	{name: "bout gate with the OFF refractory (refr_block, M_off = 4096), 1,500-batch trajectory through the bout's end", ref: "g13_sgd_flip4096_w512s5", ours: preset("g13_sgd_flip4096_w512s5"), step: 2001, steps: 1500, every: 100, trajec: true},
	{name: "control: bout gate, 1,500-batch trajectory, the OFF refractory one batch shorter", ref: "g13_sgd_flip4096_w512s5", control: true, trajec: true,
		ours: presetWith("g13_sgd_flip4096_w512s5", func(c *LocalConfig) { c.BlockOff-- }), step: 2001, steps: 1500, every: 100},
	{name: "pressure gate, 1,500-batch trajectory", ref: "g17_sgd_pburst16_s10", ours: preset("g17_sgd_pburst16_s10"), steps: 1500, every: 100, trajec: true},
	// The surprise gate's θ = 10 is far above the batch error (at most
	// about 1.3, at the start): it never opens in either code, so the
	// path starts at batch 1, where the error is largest; the control
	// shows that a θ the error crosses would be seen.
	{name: "surprise gate, 1,500-batch trajectory from the first batch", ref: "g17_sgd_sburst16_s10", ours: preset("g17_sgd_sburst16_s10"), step: 1, steps: 1500, every: 100, trajec: true},
	{name: "control: surprise gate, 1,500-batch trajectory from the first batch, θ = 0.5 against the reference's 10", ref: "g17_sgd_sburst16_s10", control: true, trajec: true,
		ours: presetWith("g17_sgd_sburst16_s10", func(c *LocalConfig) { c.Theta = 0.5 }), step: 1, steps: 1500, every: 100},
	{name: "rest pressure θ_r = 4 (refr_press), 1,500-batch trajectory", ref: "g10_rp4_w512s5", ours: preset("g10_rp4_w512s5"), steps: 1500, every: 100, trajec: true},
	{name: "utility-exempt rotation q = 0.25 (refr_util), 1,500-batch trajectory", ref: "g15_sgd_util25_w512s5", ours: preset("g15_sgd_util25_w512s5"), steps: 1500, every: 100, trajec: true},
	// Batch 2 collapses on some seeds of both codes (docs/disputed.md); a
	// task boundary is where a collapse would start.
	{name: "replay batch 2, isolated, trajectory across the first task boundary", ref: "g17_sgd_br2_s10", ours: presetWith("g16_sgd_refr_s10_w512", func(c *LocalConfig) { c.BatchReplay = 2 }), step: 3901, steps: 200, every: 50, trajec: true},
	{name: "replay batch 2, unmasked with rotation, trajectory across the first task boundary", ref: "g26_ctrl_rot_noiso_br2", ours: presetWith("g26_ctrl_rot_noiso", func(c *LocalConfig) { c.BatchReplay = 2 }), step: 3901, steps: 200, every: 50, trajec: true},
}

// zeroSkipFeedback clears the skip twins Bs^l: a port whose backward
// burst leaves out the skip path (the authors' cortex.py sweep_errors,
// eps^l += f'(x^l) (g e^{l+2}) Bs^{l+2}).
func zeroSkipFeedback(r *localRun) {
	for _, sk := range r.nt.skip {
		if sk != nil {
			clear(sk.fb)
		}
	}
}

// clearRestPressure clears the rest pressure of refr_press and refr_frac:
// a port that does not carry it from batch to batch.
func clearRestPressure(r *localRun) {
	for _, p := range r.ext.restP {
		clear(p)
	}
}

// restartLongUse sets refr_util's long-term use trace back to its start
// (0.5 for every unit): a port that does not carry it.
func restartLongUse(r *localRun) {
	for _, u := range r.ext.longUse {
		for i := range u {
			u[i] = 0.5
		}
	}
}

// restartNovelty drops the novelty gate's averages: a port that restarts
// them (fast = slow = the batch's error) instead of carrying them.
func restartNovelty(r *localRun) { r.emaInit = false }

// resetSkipVelocity clears the skip synapses' heavy-ball velocity: a port
// that does not carry S^l's optimiser state.
func resetSkipVelocity(r *localRun) {
	for _, sk := range r.nt.skip {
		if sk != nil {
			clear(sk.m1)
		}
	}
}

// writeOrder writes perm as refstep.py's --order reads it: little-endian
// int64s.
func writeOrder(name string, perm []int) error {
	b := make([]byte, 0, 8*len(perm))
	for _, v := range perm {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	return os.WriteFile(name, b, 0o644)
}

// recordings holds the refstep.py outputs of this test run by their
// arguments: a control reuses its path's recording.
var recordings = map[string]string{}

// runRefPath records the reference and runs ours; it returns the path's
// line.
func runRefPath(t *testing.T, py, ref, mnist string, p refPath) string {
	step, steps, every := p.step, max(p.steps, 1), max(p.every, 1)
	if step == 0 {
		step = 70
	}
	args := []string{"--config", p.ref, "--step", strconv.Itoa(step), "--steps", strconv.Itoa(steps), "--every", strconv.Itoa(every)}
	if p.order > 0 {
		f := filepath.Join(t.TempDir(), "order")
		if err := writeOrder(f, NewRNG(0, StreamRun).Perm(p.order)); err != nil {
			return fmt.Sprintf("%s: not run: %v", p.name, err)
		}
		args = append(args, "--order", f)
	}
	key := strings.Join(args, " ")
	dir, ok := recordings[key]
	if keep := os.Getenv("REPRO_REFCHECK_KEEP"); !ok && keep != "" {
		// A kept recording of the same arguments is reused (the long
		// trajectories take minutes to record); a new one is kept.
		dir = filepath.Join(keep, strings.NewReplacer(" ", "_", "/", "_", "-", "").Replace(key))
		if _, err := os.Stat(filepath.Join(dir, "index.json")); err == nil {
			recordings[key], ok = dir, true
		} else if err := os.RemoveAll(dir); err != nil {
			return fmt.Sprintf("%s: not run: %v", p.name, err)
		}
	}
	if !ok {
		if dir == "" {
			dir = filepath.Join(t.TempDir(), "dump")
		}
		cifar := filepath.Join(filepath.Dir(mnist), "cifar-10-batches-bin")
		cmd := exec.Command(py, append([]string{"../tools/refcheck/refstep.py", "--ref", ref, "--mnist", mnist, "--cifar", cifar, "--out", dir}, args...)...)
		cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1")
		if out, err := cmd.CombinedOutput(); err != nil {
			return fmt.Sprintf("%s: not run: refstep.py: %v: %s", p.name, err, refdump.LastLine(string(out)))
		}
		recordings[key] = dir
	}
	d, err := loadRefDump(dir)
	if err != nil {
		return fmt.Sprintf("%s: not run: %v", p.name, err)
	}
	if n, _ := d.meta["ordered"].(float64); p.order > 0 && int(n) != p.order {
		return fmt.Sprintf("%s: not run: refstep.py did not run the first epoch in our order (meta ordered = %v)", p.name, d.meta["ordered"])
	}
	cfg, err := p.ours()
	if err != nil {
		return fmt.Sprintf("%s: not run: our config: %v", p.name, err)
	}
	return p.name + ": " + d.check(&cfg, p.edit)
}

// refDump is one refstep.py output.
type refDump struct {
	ts   Tensors
	meta map[string]any
}

// loadRefDump reads one refstep.py output (refdump.Load) as our tensors.
func loadRefDump(dir string) (*refDump, error) {
	rd, err := refdump.Load(dir)
	if err != nil {
		return nil, err
	}
	d := &refDump{ts: Tensors{}, meta: rd.Meta}
	for name, t := range rd.Tensors {
		d.ts[name] = Tensor(t)
	}
	// The run loop's scalars (meta[tag]) become tensors tag/name.
	for tag, v := range rd.Meta {
		m, ok := v.(map[string]any)
		if !ok || (tag != "pre" && !strings.HasPrefix(tag, "post") && !strings.HasPrefix(tag, "s0/u")) {
			continue
		}
		for k, x := range m {
			if f, ok := x.(float64); ok {
				d.ts[tag+"/"+k] = Tensor{Shape: []int{1}, F64: []float64{f}}
			}
		}
	}
	return d, nil
}

func (d *refDump) num(key string) float64 {
	f, _ := d.meta[key].(float64)
	return f
}

// check runs our learner from the dump's pre-state and returns the verdict.
// edit, when non-nil, changes our learner after every injection.
func (d *refDump) check(cfg *LocalConfig, edit func(r *localRun)) string {
	steps := int(d.num("steps"))
	every := 1
	if a, ok := d.meta["args"].(map[string]any); ok {
		every = int(a["every"].(float64))
	}
	// Configuration: the rates and batch the reference's loop used.
	etaW, etaR := cfg.rates()
	checks := []struct {
		name      string
		ours, ref float64
	}{{"config.eta_wake", etaW, d.num("eta_wake")}, {"config.eta_replay", etaR, d.num("eta_replay")}}
	if _, ok := d.meta["relax"]; ok {
		rx := d.meta["relax"].([]any)
		checks = checks[:1]
		checks = append(checks, []struct {
			name      string
			ours, ref float64
		}{{"config.batch_wake", float64(cfg.BatchWake), d.num("batch_wake")},
			{"config.relax_T", float64(cfg.RelaxT), rx[0].(float64)}, {"config.relax_gamma", cfg.RelaxGamma, rx[1].(float64)}}...)
	} else if _, offline := d.meta["night_batch"]; offline {
		checks = append(checks, []struct {
			name      string
			ours, ref float64
		}{{"config.batch_wake", float64(cfg.BatchWake), d.num("batch_wake")},
			{"config.night_batch", float64(cfg.NightBatch), d.num("night_batch")},
			{"config.night_batches", float64(cfg.NightBatches), d.num("night_batches")}}...)
	} else {
		checks = append(checks, struct {
			name      string
			ours, ref float64
		}{"config.batch_replay", float64(cfg.BatchReplay), d.num("batch_replay")})
	}
	for _, c := range checks {
		if math.Abs(c.ours-c.ref) > 1e-12*math.Abs(c.ref) {
			return fmt.Sprintf("differs at step 0, tensor %s: ours %g, reference %g", c.name, c.ours, c.ref)
		}
	}
	// A data set of the recorded batches; step s is rows [16s, 16s+n_s).
	// Its width is the recording's (784 for MNIST, 1,024 for gray CIFAR-10).
	x0, y0 := d.ts["s0/X"], d.ts["s0/y"]
	if len(y0.I32) == 0 || len(x0.F32)%len(y0.I32) != 0 {
		return "not run: step 0: the recorded batch is missing or malformed"
	}
	D := len(x0.F32) / len(y0.I32)
	side := int(math.Sqrt(float64(D)))
	if side*side != D {
		return fmt.Sprintf("not run: %d inputs are not a square sheet", D)
	}
	train := &Dataset{D: D, Classes: 10, Height: side, Width: side}
	var batches [][]int
	for s := range steps {
		x, y := d.ts[fmt.Sprintf("s%d/X", s)], d.ts[fmt.Sprintf("s%d/y", s)]
		var idx []int
		for range y.I32 {
			idx = append(idx, train.N)
			train.N++
		}
		train.X = append(train.X, x.F32...)
		train.Y = append(train.Y, y.I32...)
		batches = append(batches, idx)
	}
	var draws []Draw
	perStep := make([]int, steps)
	for s := range steps {
		for j := 0; ; j++ {
			key := fmt.Sprintf("s%d/d%d", s, j)
			if v, ok := d.ts[key+"/randint"]; ok {
				info := d.meta["draws"].(map[string]any)[key].(map[string]any)
				for _, x := range v.I32 {
					draws = append(draws, Draw{int(x), int(info["high"].(float64))})
				}
			} else if v, ok := d.ts[key+"/randperm"]; ok {
				draws = append(draws, permDraws(v.I32)...)
			} else {
				break
			}
		}
		perStep[s] = len(draws)
	}
	// The sizes come from the recorded W's.
	hidden := []int{}
	for l := 1; ; l++ {
		w, ok := d.ts[fmt.Sprintf("pre/W%d", l)]
		if !ok {
			break
		}
		if _, next := d.ts[fmt.Sprintf("pre/W%d", l+1)]; next {
			hidden = append(hidden, w.Shape[0])
		}
	}
	c := *cfg
	c.Hidden = hidden
	r, err := injectRun(&c, d.ts, "pre", train)
	if err != nil {
		return "not run: " + err.Error()
	}
	if edit != nil {
		edit(r)
	}
	done := 0
	r.rng = TapeRNG(draws, &done)
	// Spike-count training's Poisson counts (s<s>/q<j>/poisson, one
	// (batch, width) tensor per call), row by row in call order. The
	// reference's forward pass also draws counts for the readout (its
	// act(L)), a value nothing reads (the readout's error uses its drive,
	// the updates the rates below it); our port does not draw it, so those
	// calls are left out of the tape.
	var spikes [][]float32
	spikeInfo, _ := d.meta["spikes"].(map[string]any)
	for s := range steps {
		for j := 0; ; j++ {
			key := fmt.Sprintf("s%d/q%d", s, j)
			q, ok := d.ts[key+"/poisson"]
			if !ok {
				break
			}
			info, _ := spikeInfo[key].(map[string]any)
			layer, _ := info["layer"].(float64)
			if layer < 1 {
				return fmt.Sprintf("not run: %s: the layer of the spike counts is not recorded", key)
			}
			if int(layer) == len(c.Hidden)+1 {
				continue
			}
			w := q.Shape[len(q.Shape)-1]
			for i := 0; i < len(q.F32); i += w {
				spikes = append(spikes, q.F32[i:i+w])
			}
		}
	}
	// The mirror night's normal draws (s<s>/n<j>/randn, in call order;
	// consumed by our mirrorPhase under mirroring only).
	var normals []float32
	for s := range steps {
		for j := 0; ; j++ {
			q, ok := d.ts[fmt.Sprintf("s%d/n%d/randn", s, j)]
			if !ok {
				break
			}
			normals = append(normals, q.F32...)
		}
	}
	normalsDone := 0
	spikesDone := 0
	attachSpikes := func(r *localRun) {
		if c.Mirror > 0 {
			r.nt.sub.mirrorTape = func(n int) []float32 {
				if normalsDone+n > len(normals) {
					panic(fmt.Sprintf("mirror night: %d normal draws asked after %d, the reference drew %d", n, normalsDone, len(normals)))
				}
				normalsDone += n
				return normals[normalsDone-n : normalsDone]
			}
		}
		if len(spikes) == 0 {
			return
		}
		r.nt.sub.spikeTape = func(n int) []float32 {
			if spikesDone >= len(spikes) || len(spikes[spikesDone]) != n {
				panic(fmt.Sprintf("spike counts: row %d of %d units asked, the reference drew %d rows", spikesDone, n, len(spikes)))
			}
			spikesDone++
			return spikes[spikesDone-1]
		}
	}
	attachSpikes(r)
	var verdict string
	var ties []string
	step, calls, tied, tieStep := 0, 0, false, 0
	probe := func(stage string) {
		if verdict != "" || tied {
			return
		}
		p := r.wake
		if stage == "replay" {
			p = r.rep
		}
		pt := r.nt.passTensors(p)
		tag := fmt.Sprintf("s%d/p%d", step, calls)
		calls++
		// Activities first: a k-WTA set that differs is either a near-tie
		// (the runs part as two thread counts do) or a difference.
		for l := 1; l < r.nt.L; l++ {
			name := fmt.Sprintf("a%d", l)
			if rt, ok := d.ts[tag+"/"+name]; ok {
				if v, tie := refdump.CompareActivity(name, refdump.Tensor(pt[name]), refdump.Tensor(rt)); v != "" {
					if tie {
						tied, tieStep = true, step
						ties = append(ties, fmt.Sprintf("step %d, %s pass: %s", step, stage, v))
					} else {
						verdict = fmt.Sprintf("differs at step %d (%s pass), tensor %s", step, stage, v)
					}
					return
				}
			}
		}
		if step > 0 {
			return
		}
		if v := compareTensors(pt, d.ts, tag); v != "" {
			verdict = fmt.Sprintf("differs at step 0 (%s pass), tensor %s", stage, v)
			return
		}
		if v := compareTensors(refState(r), d.ts, fmt.Sprintf("s0/u%d", calls-1)); v != "" {
			verdict = fmt.Sprintf("differs at step 0 (after the %s update), tensor %s", stage, v)
		}
	}
	r.probe = probe
	starts, _ := d.meta["starts"].(map[string]any)
	// The gates' record (run_local only): loopBase is the reference's
	// record where our run's state was injected, loopPrev the last step's.
	loopBase := loopRecord(d.meta, "pre")
	loopPrev, gateSteps, gateEvents := loopBase, 0, 0
	offTape := false
	for s := 0; ; s++ {
		if s > 0 {
			// What the reference's loop ran before batch s: the end of an
			// epoch, of a task.
			if st, ok := starts[fmt.Sprintf("s%d", s)].(map[string]any); ok && st["epoch"] == true {
				var msg any
				func() {
					defer func() { msg = recover() }()
					r.endEpoch(etaR)
				}()
				if msg != nil {
					return fmt.Sprintf("differs at step %d (the end of the epoch): %v", s-1, msg)
				}
				if st["task"] == true {
					r.endTask()
				}
			}
			// After a near-tie our run may part from the reference's (a gate
			// decision, a replay count): its draws go unchecked until the
			// next checkpoint.
			if done != perStep[s-1] && !tied {
				return fmt.Sprintf("differs at step %d, tensor random draws: ours %d, reference %d", s-1, done, perStep[s-1])
			}
			// The gates, every step: their scalars after step s-1.
			if rec := loopRecord(d.meta, fmt.Sprintf("s%d", s-1)); rec != nil && !tied {
				if v := checkLoop(r, rec, loopPrev, loopBase); v != "" {
					return fmt.Sprintf("differs at step %d (the gates), %s%s", s-1, v, tieNote(ties))
				}
				if gateEvent(c.modes().gate, loopPrev, rec) {
					gateEvents++
				}
				loopPrev = rec
				gateSteps++
			}
			if s%every == 0 {
				tag := fmt.Sprintf("post%d", s)
				if !tied {
					if v := compareTensors(refState(r), d.ts, tag); v != "" {
						return fmt.Sprintf("differs at step %d, tensor %s%s", s-1, v, tieNote(ties))
					}
				} else if s < steps {
					// After a near-tie: continue from the reference's state
					// at this checkpoint (the steps since the tie go unchecked).
					if r, err = injectRun(&c, d.ts, tag, train); err != nil {
						return "not run: " + err.Error()
					}
					loopBase = loopRecord(d.meta, fmt.Sprintf("s%d", s-1))
					loopPrev = loopBase
					if edit != nil {
						edit(r)
					}
					// The tape restarts at the checkpoint's draw: draws and
					// perStep are cut there, so that a later re-synchronisation
					// counts from this one.
					done = 0
					base := perStep[s-1]
					draws = draws[base:]
					r.rng = TapeRNG(draws, &done)
					for k := range perStep {
						perStep[k] -= base
					}
					r.probe, tied, offTape = probe, false, false
					attachSpikes(r)
				}
			}
		}
		if s == steps {
			break
		}
		if offTape {
			continue
		}
		step, calls = s, 0
		var msg any
		func() {
			defer func() { msg = recover() }()
			r.wakingStep(batches[s], etaW, etaR)
		}()
		if msg != nil && tied {
			// Parted after a near-tie, our run asked for draws the
			// reference's tape does not hold: it waits for the next
			// checkpoint.
			offTape = true
			continue
		}
		if msg != nil {
			return fmt.Sprintf("differs at step %d: the draws: %v", s, msg)
		}
		if verdict != "" {
			return verdict + tieNote(ties)
		}
		if s == 0 && !tied {
			if n := countPrefix(d.meta["updates"], "s0/u"); calls != n {
				return fmt.Sprintf("differs at step 0, tensor update calls: ours %d, reference %d", calls, n)
			}
		}
	}
	if c.Mirror > 0 && normalsDone != len(normals) && !tied && len(ties) == 0 {
		return fmt.Sprintf("differs at step %d, tensor mirror normal draws: ours %d, reference %d", steps-1, normalsDone, len(normals))
	}
	if spikesDone != len(spikes) && len(spikes) > 0 && !tied && len(ties) == 0 {
		return fmt.Sprintf("differs at step %d, tensor spike counts: ours %d rows drawn, reference %d", steps-1, spikesDone, len(spikes))
	}
	crossed := ""
	for s := 1; s < steps; s++ { // in step order
		if st, ok := starts[fmt.Sprintf("s%d", s)].(map[string]any); ok && st["epoch"] == true {
			what := "an epoch start"
			if st["task"] == true {
				what = "a task start"
			}
			crossed += fmt.Sprintf(", across %s at step %d", what, s)
		}
	}
	gates := gateSummary(&c, d.meta, steps, gateSteps, gateEvents)
	if v, n := checkGateAlong(&c, d.meta, steps); v != "" {
		return v + tieNote(ties)
	} else if n > 0 {
		gates += fmt.Sprintf("; the gate fed the reference's error identical after each of the %d steps", n)
	}
	if len(ties) > 0 {
		// A near-tie after the last checkpoint leaves the rest unchecked:
		// there is no later reference state to continue from.
		unchecked := ""
		if tied {
			unchecked = fmt.Sprintf("; unchecked from the last near-tie (step %d) on: no checkpoint follows it", tieStep)
		}
		return fmt.Sprintf("identical through %d steps%s, re-synchronised at the next checkpoint after %d k-WTA near-tie(s) within float32 rounding (first: %s)%s%s", steps, crossed, len(ties), ties[0], unchecked, gates)
	}
	return fmt.Sprintf("identical through %d steps%s%s", steps, crossed, gates)
}

// gateSummary says, for a config with a gate or a rest mask, at how many
// steps the gates' state was compared and what the gates did over the
// recorded steps (the reference's record; identical to ours where
// compared): the steps after which rotation ran and the gate's switches
// (rotation gates), the steps that replayed (replay gates), each with how
// many of them fell on compared steps (checked counts them).
func gateSummary(c *LocalConfig, meta map[string]any, steps, compared, checked int) string {
	m := c.modes()
	if m.gate == gateAlways && m.mask != maskRefrPress && m.mask != maskRefrFrac && m.mask != maskRefrUtil {
		return ""
	}
	out := fmt.Sprintf("; gate state compared after %d of %d steps", compared, steps)
	pre := loopRecord(meta, "pre")
	last := loopRecord(meta, fmt.Sprintf("s%d", steps-1))
	if pre == nil || last == nil || m.gate == gateAlways {
		return out
	}
	events, prev := 0, pre
	for s := range steps {
		rec := loopRecord(meta, fmt.Sprintf("s%d", s))
		if rec == nil {
			break
		}
		if gateEvent(m.gate, prev, rec) {
			events++
		}
		prev = rec
	}
	if m.gate.gatesRotation() {
		a0, _ := pre["ach_on"].(float64)
		a1, _ := last["ach_on"].(float64)
		return out + fmt.Sprintf(" (rotation on after %d; %d switches, %d of them compared)", int(a1-a0), events, checked)
	}
	return out + fmt.Sprintf(" (replay at %d, %d of them compared)", events, checked)
}

// checkGateAlong drives our gate with the reference's own error, step by
// step. For the rotation gates (refr_nov, refr_prog, refr_block) our
// rotationGate starts from the reference's gate state before the first
// step and is fed each step's error sb as the reference computed it (meta
// loop s<s>.sb); its averages, warm-up, bout and OFF counters and its
// decision (the next batch rotates: the reference's ach_on) must equal the
// reference's after every step. For the surprise gate our replayDue fed
// sb must decide as the reference did (a replay or none). The network
// check compares the same state, but not in the steps a k-WTA near-tie
// leaves unchecked (and a re-synchronisation injects the reference's
// counters); this follows the gate's own mechanics through every step.
// The averages are float64 arithmetic on the same inputs in the same
// order (equal within 1e-12 relative). It returns the difference as
// "differs at step S (the gate along the reference's error), tensor ...",
// or "" with, in n, the steps compared.
func checkGateAlong(c *LocalConfig, meta map[string]any, steps int) (verdict string, n int) {
	m := c.modes()
	if !m.gate.gatesRotation() && m.gate != gateSurprise {
		return "", 0
	}
	pre := loopRecord(meta, "pre")
	if pre == nil {
		return "", 0
	}
	r := &localRun{cfg: c, nt: &net{mode: m}}
	num := func(rec map[string]any, k string) float64 { v, _ := rec[k].(float64); return v }
	if v, ok := pre["surprise_ema"].(float64); ok {
		r.fast, r.slow, r.emaInit = v, num(pre, "surprise_slow"), true
	}
	r.e0Sum, r.e0N = num(pre, "err0_sum"), int(num(pre, "err0_n"))
	r.blockCtr, r.offCtr = int(num(pre, "block_ctr")), int(num(pre, "off_ctr"))
	prev := pre
	for s := range steps {
		rec := loopRecord(meta, fmt.Sprintf("s%d", s))
		sb, ok := rec["sb"].(float64)
		if !ok {
			return fmt.Sprintf("not run: step %d: the reference's record has no error sb", s), n
		}
		bad := func(name string, ours, ref float64, tol float64) string {
			if math.Abs(ours-ref) > tol*math.Abs(ref) {
				return fmt.Sprintf("differs at step %d (the gate along the reference's error), tensor loop.%s: ours %.12g, reference %.12g", s, name, ours, ref)
			}
			return ""
		}
		if m.gate == gateSurprise {
			replayed := num(rec, "replay_used") > num(prev, "replay_used")
			if open := r.replayDue(sb); open != replayed {
				return fmt.Sprintf("differs at step %d (the gate along the reference's error), tensor replay: ours %v, reference %v (sb %.9g, theta %g)", s, open, replayed, sb, c.Theta), n
			}
		} else {
			open := r.rotationGate(sb)
			checks := []struct {
				name      string
				ours, ref float64
				tol       float64
			}{{"surprise_ema", r.fast, num(rec, "surprise_ema"), 1e-12}, {"surprise_slow", r.slow, num(rec, "surprise_slow"), 1e-12},
				{"err0_sum", r.e0Sum, num(rec, "err0_sum"), 1e-12}, {"err0_n", float64(r.e0N), num(rec, "err0_n"), 0},
				{"block_ctr", float64(r.blockCtr), num(rec, "block_ctr"), 0}, {"off_ctr", float64(r.offCtr), num(rec, "off_ctr"), 0}}
			for _, ck := range checks {
				if v := bad(ck.name, ck.ours, ck.ref, ck.tol); v != "" {
					return v, n
				}
			}
			// The reference logs each decision (ach_on: 1 open, 0 closed);
			// its suppression itself is cleared at a task's end.
			if refOpen := num(rec, "ach_on") > num(prev, "ach_on"); open != refOpen || num(rec, "ach_n") != num(prev, "ach_n")+1 {
				return fmt.Sprintf("differs at step %d (the gate along the reference's error), tensor rotation: ours %v, reference %v (fast %.9g, slow %.9g)", s, open, refOpen, r.fast, r.slow), n
			}
		}
		prev = rec
		n++
	}
	return "", n
}

// gateEvent reports whether the step from record prev to rec is one the
// gate acts on: a rotation gate switching on or off (the next batch's
// suppression appears or goes), a replay gate replaying.
func gateEvent(g gateMode, prev, rec map[string]any) bool {
	if g.gatesRotation() {
		a, _ := prev["sup_n"].(float64)
		b, _ := rec["sup_n"].(float64)
		return (a < 0) != (b < 0)
	}
	if g == gatePressure || g == gateSurprise {
		a, _ := prev["replay_used"].(float64)
		b, _ := rec["replay_used"].(float64)
		return b > a
	}
	return false
}

// tieNote says, on a difference found after k-WTA near-ties, how many
// came before it and where the first was ("" when none).
func tieNote(ties []string) string {
	if len(ties) == 0 {
		return ""
	}
	return fmt.Sprintf(" (after %d k-WTA near-tie(s) re-synchronised at checkpoints, the first: %s)", len(ties), ties[0])
}

// loopRecord returns the reference's gate record meta["loop"][key] (nil
// when the recording has none: run() and the substrate ladder).
func loopRecord(meta map[string]any, key string) map[string]any {
	lp, _ := meta["loop"].(map[string]any)
	rec, _ := lp[key].(map[string]any)
	return rec
}

// checkLoop compares the gates' state of our run after a waking step with
// the reference's record rec of the same step: the novelty averages (fast
// and slow EMA) and the chance-level error sum within the float32
// tolerance, the warm-up count and the bout counters exactly, the replay
// micro-batches and (rotation gates) the batches after which rotation ran,
// both counted since the injection (base, the reference's record there),
// exactly; the replay gate's signal, on the steps the reference logged one
// (prev: its record of the step before), within the tolerance; and the
// size of the suppression the next batch runs under (-1: none) exactly.
// It returns "tensor loop.<name>: ours x, reference y", or "".
func checkLoop(r *localRun, rec, prev, base map[string]any) string {
	num := func(m map[string]any, k string) (float64, bool) {
		v, ok := m[k].(float64)
		return v, ok
	}
	diff := func(name string, ours, ref float64, exact bool) string {
		v := refdump.Compare("loop."+name, refdump.Tensor{Shape: []int{1}, F64: []float64{ours}}, refdump.Tensor{Shape: []int{1}, F64: []float64{ref}}, exact, nil)
		if v != "" {
			v = "tensor " + v
		}
		return v
	}
	fast, okF := num(rec, "surprise_ema")
	if okF != r.emaInit {
		return fmt.Sprintf("tensor loop.surprise_ema: ours set %v, reference set %v", r.emaInit, okF)
	}
	if okF {
		slow, _ := num(rec, "surprise_slow")
		if v := diff("surprise_ema", r.fast, fast, false); v != "" {
			return v
		}
		if v := diff("surprise_slow", r.slow, slow, false); v != "" {
			return v
		}
	}
	e0, _ := num(rec, "err0_sum")
	e0n, _ := num(rec, "err0_n")
	bc, _ := num(rec, "block_ctr")
	oc, _ := num(rec, "off_ctr")
	for _, c := range []struct {
		name      string
		ours, ref float64
		exact     bool
	}{{"err0_sum", r.e0Sum, e0, false}, {"err0_n", float64(r.e0N), e0n, true},
		{"block_ctr", float64(r.blockCtr), bc, true}, {"off_ctr", float64(r.offCtr), oc, true}} {
		if v := diff(c.name, c.ours, c.ref, c.exact); v != "" {
			return v
		}
	}
	ru, _ := num(rec, "replay_used")
	ru0, _ := num(base, "replay_used")
	if v := diff("replay_used (since the injection)", float64(r.res.ReplayUpdates), ru-ru0, true); v != "" {
		return v
	}
	achN, _ := num(rec, "ach_n")
	achN0, _ := num(base, "ach_n")
	if achN > achN0 {
		ach, _ := num(rec, "ach_on")
		ach0, _ := num(base, "ach_on")
		if v := diff("ach_on (rotation gate open, since the injection)", float64(r.ext.gateOn), ach-ach0, true); v != "" {
			return v
		}
	}
	gn, _ := num(rec, "gate_n")
	gnPrev, _ := num(prev, "gate_n")
	if gn > gnPrev {
		sig, _ := num(rec, "gate_signal")
		if v := diff("gate_signal", r.gateSignal, sig, false); v != "" {
			return v
		}
	}
	supN, _ := num(rec, "sup_n")
	ours := -1.0
	if r.sup != nil {
		ours = 0
		for l := 1; l < r.nt.L; l++ {
			for _, x := range r.sup[l] {
				ours += float64(x)
			}
		}
	}
	return diff("sup_n (units the next batch suppresses)", ours, supN, true)
}

// refState is our state as the reference holds it: under weight transport
// the reference's twins B and their optimiser state are never updated nor
// read (its feedback is W), so ours (a copy of W) are left out.
func refState(r *localRun) Tensors {
	ts := r.exportState()
	if r.cfg.Transport {
		for n := range ts {
			if strings.HasPrefix(n, "B") || strings.HasPrefix(n, "mB") || strings.HasPrefix(n, "vB") {
				delete(ts, n)
			}
		}
	}
	return ts
}

func countPrefix(m any, prefix string) int {
	mm, _ := m.(map[string]any)
	n := 0
	for k := range mm {
		if strings.HasPrefix(k, prefix) {
			n++
		}
	}
	return n
}

// permDraws returns the bounded draws that make Go's Perm (a Fisher-Yates
// shuffle from the top) return perm.
func permDraws(perm []int32) []Draw {
	n := len(perm)
	cur := make([]int32, n)
	pos := make([]int, n)
	for i := range cur {
		cur[i], pos[i] = int32(i), i
	}
	var ds []Draw
	for i := n - 1; i > 0; i-- {
		j := pos[perm[i]]
		ds = append(ds, Draw{j, i + 1})
		cur[i], cur[j] = cur[j], cur[i]
		pos[cur[i]], pos[cur[j]] = i, j
	}
	return ds
}

// exactNames are compared bit for bit (counts, labels, copies, masks).
var exactNames = []string{"X", "y", "t", "gstep", "bufSeen", "bufY", "bufX", "sup", "mirrorAct", "err0_n", "block_ctr", "off_ctr"}

// compareTensors compares every tensor of ours with ref's tensor
// tag/name, in a fixed order, and returns the first difference beyond the
// tolerance as "name[i]: ours x, reference y", or "". Optimiser state is
// compared where our layer stores the synapse (stored<l>).
func compareTensors(ours, ref Tensors, tag string) string {
	names := make([]string, 0, len(ours))
	for n := range ours {
		if !strings.HasPrefix(n, "stored") {
			names = append(names, n)
		}
	}
	sort.Slice(names, func(i, j int) bool {
		pi, pj := namePriority(names[i]), namePriority(names[j])
		if pi != pj {
			return pi < pj
		}
		return names[i] < names[j]
	})
	for _, n := range names {
		o := ours[n]
		rt, ok := ref[tag+"/"+n]
		if !ok {
			if strings.HasPrefix(n, "sup") || strings.HasPrefix(n, "mirrorAct") || n == "bufX" || n == "bufY" ||
				strings.HasPrefix(n, "surprise") || strings.HasPrefix(n, "gema") || strings.HasPrefix(n, "kpeff") || strings.HasPrefix(n, "Wslow") ||
				strings.HasPrefix(n, "restP") || strings.HasPrefix(n, "longUse") || isSkipName(n) {
				return fmt.Sprintf("%s: ours present, reference absent", n)
			}
			continue
		}
		var stored []float32
		// Optimiser state and the anchor's slow copies exist in the
		// reference for absent synapses too (phantom values, never read by
		// a present one); we keep them for the synapses we store.
		if matrixState(n) {
			if l := layerIndex(n); l > 0 {
				if strings.Contains(n, "B") {
					l++
				}
				stored = ours[fmt.Sprintf("stored%d", l)].F32
			}
		}
		if v := compareOne(n, o, rt, stored); v != "" {
			return v
		}
	}
	for n := range ref {
		if rest, ok := strings.CutPrefix(n, tag+"/"); ok && !strings.Contains(rest, "/") {
			if _, have := ours[rest]; !have && (strings.HasPrefix(rest, "sup") || strings.HasPrefix(rest, "mirrorAct") ||
				strings.HasPrefix(rest, "gema") || rest == "bufX" || strings.HasPrefix(rest, "surprise_ema") || strings.HasPrefix(rest, "Wslow") ||
				strings.HasPrefix(rest, "restP") || strings.HasPrefix(rest, "longUse") ||
				isSkipName(rest) && rest[0] != 'v') { // vS, vBs: Adam only
				return fmt.Sprintf("%s: ours absent, reference present", rest)
			}
		}
	}
	return ""
}

// isSkipName reports whether n names a skip synapse tensor (S<l>, Bs<l>
// and their optimiser state).
func isSkipName(n string) bool {
	for _, p := range []string{"S", "Bs", "mS", "mBs", "vS", "vBs"} {
		if rest, ok := strings.CutPrefix(n, p); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			return true
		}
	}
	return false
}

func namePriority(n string) int {
	for i, p := range []string{"X", "y", "t", "gstep", "bufSeen", "bufY", "bufX", "sup", "mirrorAct", "surprise", "err0", "block", "off", "a", "eps", "ebar", "b", "mb", "vb", "W", "B", "mW", "mB", "vW", "vB", "S", "Bs", "mS", "mBs", "vS", "vBs", "gema", "kpeff", "pressure", "restP", "longUse"} {
		if strings.HasPrefix(n, p) && (len(n) == len(p) || n[len(p)] >= '0' && n[len(p)] <= '9' || p == "surprise" || p == "err0" || p == "block" || p == "off" || p == "buf") {
			return i
		}
	}
	return 100
}

func layerIndex(n string) int {
	i := len(n)
	for i > 0 && n[i-1] >= '0' && n[i-1] <= '9' {
		i--
	}
	l, _ := strconv.Atoi(n[i:])
	return l
}

// compareOne compares one tensor with the reference's (refdump.Compare):
// bit for bit when exactNames names it, and only where stored (when
// non-nil) keeps a synapse.
func compareOne(name string, ours, ref Tensor, stored []float32) string {
	exact := slices.ContainsFunc(exactNames, func(e string) bool {
		return strings.HasPrefix(name, e) && (len(name) == len(e) || name[len(e)] >= '0' && name[len(e)] <= '9')
	})
	var skip []bool
	if stored != nil {
		skip = make([]bool, len(stored))
		for i, x := range stored {
			skip[i] = x == 0
		}
	}
	return refdump.Compare(name, refdump.Tensor(ours), refdump.Tensor(ref), exact, skip)
}

// matrixState reports whether n names a per-synapse state that we keep
// for stored synapses only (the skip synapses' mS, mBs, vS and vBs are
// dense: every one is stored).
func matrixState(n string) bool {
	for _, p := range []string{"mW", "vW", "mB", "vB", "Wslow", "Bslow"} {
		if rest, ok := strings.CutPrefix(n, p); ok && rest != "" && rest[0] >= '0' && rest[0] <= '9' {
			return true
		}
	}
	return false
}
