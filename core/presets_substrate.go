package core

// substratePresets are the substrate ladder's configurations (the
// appendix's table "Substrate ablation"), named as the reference's
// run_mnist dictionaries. They run its fit_cortex protocol on the local
// learner (on the static protocol, which the caller selects: one all-class
// task, as LocalPreset's "_static" names): 30 epochs of batches of 256, masked
// Adam at 1e-3 with the coupled L2 1e-3 (weight_decay) on W^1, Kolen-Pollack
// decay 1e-3, no buffer, no rotation, 256-128 hidden. Until the phase-5
// base the reference settles T = 20 steps of gamma = 0.1 (fit_cortex's
// defaults) and has neither burst gate nor burst baseline; CortexNet's
// default connectivity is dense.
var substratePresets = map[string]func(c *LocalConfig){
	// Upper block, cumulative.
	// "local burst-error learner, unconstrained": ALL_OFF (transport, no
	// bound, no k-WTA, no Dale, no homeostasis) on the wide core with Adam's
	// eps 1e-3, the dictionary the ladder's later rows also use.
	"control_w_e3": ladder(func(c *LocalConfig) {
		c.Transport, c.Unbounded, c.NoKWTA, c.NoDale = true, true, true, true
	}),
	// "+ bounded error, Dale's law, sign-concordant feedback": NT + bounded,
	// k-WTA off.
	"base3_w_e3": ladder(func(c *LocalConfig) { c.NoKWTA = true }),
	// "+ k-WTA 10%" (and the 5% / 2% replacements).
	"kwta10_w_e3": ladder(func(c *LocalConfig) {}),
	"kwta05_w_e3": ladder(func(c *LocalConfig) { c.ActiveFrac = 0.05 }),
	"kwta02_w_e3": ladder(func(c *LocalConfig) { c.ActiveFrac = 0.02 }),
	// "+ relaxation T = 5": r4_T5 (V4 at T = 5, gamma = 0.4; the rows above
	// settle for T = 20, gamma = 0.1). "one settling step": r4_T1.
	"r4_T5": ladder(relaxSteps(5, 0.4)),
	"r4_T1": ladder(relaxSteps(1, 1)),
	// "+ 30% distance-dependent connectivity": the phase-5 base V5 (v5_base
	// without its spiking-inference flag, which only adds an evaluation).
	"v5_base": v5(func(c *LocalConfig) {}),
	// "random wiring, equal density": c4_d30_rand, the only reference
	// dictionary with random wiring at 30%. It settles for T = 20 (it
	// predates V5), while the row it replaces (V5) settles for T = 5.
	"c4_d30_rand": ladder(func(c *LocalConfig) { c.ConnDensity, c.ConnMode = 0.30, "random" }),
	"c4_d30_dist": ladder(func(c *LocalConfig) { c.ConnDensity = 0.30 }),
	// "heavy-ball SGD instead of Adam (eta = 0.02)": v5_sgd02.
	"v5_sgd02": v5(func(c *LocalConfig) { c.Opt, c.Eta = "sgd", 0.02 }),
	// "+ burst gate and burst baseline": the phase-6 base V6.
	"v6_base": v6(func(c *LocalConfig) {}),
	// "+ single-phase burst sweep replacing relaxation (final substrate)".
	"v6_sweep": v6(func(c *LocalConfig) { c.RelaxT, c.RelaxGamma = 0, 0 }),
	// Lower block on V6: weight mirroring without and with the decay, the
	// decay removed, multiplicative burst coding, spike-count training.
	"v6_mirror":      v6(func(c *LocalConfig) { c.Mirror, c.KPDecay = 20, 0 }),
	"v6_mirror_d3":   v6(func(c *LocalConfig) { c.Mirror = 20 }),
	"v6_nokp":        v6(func(c *LocalConfig) { c.KPDecay = 0 }),
	"v6_mult":        v6(func(c *LocalConfig) { c.BurstMult = true }),
	"v6_spiketrain8": v6(func(c *LocalConfig) { c.SpikeTrain = 8 }),
}

// ladder returns a run_mnist dictionary on the fit_cortex protocol: the
// NT + bounded base (no transport, Dale on weights and feedback, decay
// 1e-3) at 10% k-WTA, dense, settling T = 20 with gamma = 0.1, no burst
// gate or baseline, then edit.
func ladder(edit func(c *LocalConfig)) func(c *LocalConfig) {
	return func(c *LocalConfig) {
		c.Hidden, c.ActiveFrac, c.ConnDensity = []int{256, 128}, 0.10, 1
		c.Schedule, c.Epochs, c.BatchWake, c.Buffer, c.Mask = "offline", 30, 256, 0, "none"
		c.Opt, c.Eta, c.AdamEps, c.KPDecay, c.InputL2 = "adam", 1e-3, 1e-3, 1e-3, 1e-3
		c.RelaxT, c.RelaxGamma = 20, 0.1
		c.NoBurstGate, c.BaselineEMA = true, 0
		edit(c)
	}
}

func relaxSteps(t int, gamma float64) func(c *LocalConfig) {
	return func(c *LocalConfig) { c.RelaxT, c.RelaxGamma = t, gamma }
}

// v5 is V5 = V4 + T = 5 settling (gamma 0.4) + 30% distance-dependent
// connectivity, then edit.
func v5(edit func(c *LocalConfig)) func(c *LocalConfig) {
	return ladder(func(c *LocalConfig) {
		c.RelaxT, c.RelaxGamma, c.ConnDensity, c.ConnMode = 5, 0.4, 0.30, "dist"
		edit(c)
	})
}

// v6 is V6 = V5 + burst gate + burst baseline (EMA 0.01), then edit.
func v6(edit func(c *LocalConfig)) func(c *LocalConfig) {
	return v5(func(c *LocalConfig) {
		c.NoBurstGate, c.BaselineEMA = false, 0.01
		edit(c)
	})
}
