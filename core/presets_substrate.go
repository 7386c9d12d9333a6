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

// appendixPresets are the development-phase cells of the appendix's
// rotation, small-buffer and down-selection studies (the reference's
// run_seq phase-10, 11 and 15 dictionaries), on their 512-256 substrate at
// 5% k-WTA with run_local's defaults: masked Adam at 1e-3, waking batches
// of 16, one replay micro-batch of 16 per batch, K = 1000, refractory
// rotation.
var appendixPresets = map[string]func(c *LocalConfig){
	// 9A: the plain cells of the 5% phase the gate and K = 200 studies
	// compare against: refractory rotation, the unmasked rotation-free
	// control, and at K = 200 the trickle and the pressure-triggered bursts
	// without replay noise.
	"g9a_w512s5_br16":      w512s5(func(c *LocalConfig) {}),
	"g9a_w512s5_none_br16": w512s5(func(c *LocalConfig) { c.Mask = "none" }),
	"g9a_w512s5_br16_K200": w512s5(func(c *LocalConfig) { c.Buffer = 200 }),
	"g9a_w512s5_pburst16_t64_br16_K200": w512s5(func(c *LocalConfig) {
		c.Buffer, c.Gate, c.Theta, c.Burst = 200, "pressure", 6.4, 16
	}),
	// 10A: rotation by accumulated unit pressure.
	"g10_rp05_w512s5": w512s5(func(c *LocalConfig) { c.Mask, c.ThetaR = "refr_press", 0.5 }),
	"g10_rp1_w512s5":  w512s5(func(c *LocalConfig) { c.Mask, c.ThetaR = "refr_press", 1 }),
	"g10_rp2_w512s5":  w512s5(func(c *LocalConfig) { c.Mask, c.ThetaR = "refr_press", 2 }),
	"g10_rp4_w512s5":  w512s5(func(c *LocalConfig) { c.Mask, c.ThetaR = "refr_press", 4 }),
	"g10_rp8_w512s5":  w512s5(func(c *LocalConfig) { c.Mask, c.ThetaR = "refr_press", 8 }),
	"g10_rf25_w512s5": w512s5(func(c *LocalConfig) { c.Mask, c.FracR = "refr_frac", 0.25 }),
	"g10_rf50_w512s5": w512s5(func(c *LocalConfig) { c.Mask, c.FracR = "refr_frac", 0.50 }),
	// 10A3 / 11A: the relative-novelty and per-batch gates (the reference's
	// masks refr_nov and refr_prog are gates of refractory rotation here).
	"g10_nov11_w512s5":  w512s5(func(c *LocalConfig) { c.Gate, c.BetaNov = "refr_nov", 1.1 }),
	"g10_nov13_w512s5":  w512s5(func(c *LocalConfig) { c.Gate, c.BetaNov = "refr_nov", 1.3 }),
	"g10_nov15_w512s5":  w512s5(func(c *LocalConfig) { c.Gate, c.BetaNov = "refr_nov", 1.5 }),
	"g11_prog03_w512s5": w512s5(func(c *LocalConfig) { c.Gate, c.GammaP = "refr_prog", 0.3 }),
	"g11_prog05_w512s5": w512s5(func(c *LocalConfig) { c.Gate, c.GammaP = "refr_prog", 0.5 }),
	// 10B / 11C: the K = 200 study, replay noise sigma = 0.2.
	"g10_n02_w512s5": w512s5(func(c *LocalConfig) { c.ReplayNoise = 0.2 }),
	"g10_k200_n02":   w512s5(func(c *LocalConfig) { c.Buffer, c.ReplayNoise = 200, 0.2 }),
	"g10_k200_pb16_n02": w512s5(func(c *LocalConfig) {
		c.Buffer, c.Gate, c.Theta, c.Burst, c.ReplayNoise = 200, "pressure", 6.4, 16, 0.2
	}),
	"g11_k200_none_g1_n02": w512s5(func(c *LocalConfig) {
		c.Buffer, c.Mask, c.NremGain, c.ReplayNoise = 200, "none", 1, 0.2
	}),
	"g11_k200_combo_n02": w512s5(func(c *LocalConfig) { c.Buffer, c.ReplayNoise, c.Night = 200, 0.2, true }),
	"g11_k200_night_n02": night5(func(c *LocalConfig) { c.Buffer, c.ReplayNoise = 200, 0.2 }),
	"g11_k200_night":     night5(func(c *LocalConfig) { c.Buffer = 200 }),
	// 11D: down-selection anchored to consolidation windows, against the
	// clock at an equal budget.
	"sp11_refr_loc": w512s5(func(c *LocalConfig) { c.SP, c.SPEvery, c.SPRho = "local", 128, 0.0085 }),
	"sp11_refr_ep":  w512s5(func(c *LocalConfig) { c.SP, c.SPRho = "epoch", 0.05 }),
	"sp11_pb_loc": w512s5(func(c *LocalConfig) {
		c.Gate, c.Theta, c.Burst, c.SP, c.SPEvery, c.SPRho = "pressure", 6.4, 16, "local", 16, 0.007
	}),
	"sp11_pb_ep": w512s5(func(c *LocalConfig) {
		c.Gate, c.Theta, c.Burst, c.SP, c.SPRho = "pressure", 6.4, 16, "epoch", 0.05
	}),
	"sp11_night": night5(func(c *LocalConfig) { c.SP, c.SPRho = "night", 0.05 }),
	// 15C: utility-exempt rotation (heavy-ball SGD at 0.02).
	"g15_sgd_util10_w512s5": w512s5(func(c *LocalConfig) { c.Mask, c.UtilQ, c.Opt, c.Eta = "refr_util", 0.10, "sgd", 0.02 }),
	"g15_sgd_util25_w512s5": w512s5(func(c *LocalConfig) { c.Mask, c.UtilQ, c.Opt, c.Eta = "refr_util", 0.25, "sgd", 0.02 }),
}

// w512s5 is run_local's 5%-phase cell on 512-256, then edit.
func w512s5(edit func(c *LocalConfig)) func(c *LocalConfig) {
	return func(c *LocalConfig) {
		c.Hidden, c.ActiveFrac = []int{512, 256}, 0.05
		c.Opt, c.Eta = "adam", 1e-3
		edit(c)
	}
}

// night5 is the reference's run() night at 512-256, 5% k-WTA, then edit.
func night5(edit func(c *LocalConfig)) func(c *LocalConfig) {
	return func(c *LocalConfig) {
		offline(true, 512, 256)(c)
		c.ActiveFrac = 0.05
		edit(c)
	}
}
