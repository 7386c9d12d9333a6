package stages

import (
	"repro/core"
	"repro/pipeline"
)

// localLearner registers the local burst-error learner (core.TrainLocal):
// its config is TrainParams.Local, its table "local".
var localLearner = Learner{
	Kind: LearnerLocal, KeepsNetwork: true,
	DefaultPreset: "g16_sgd_refr_s10_w512",
	NewConfig:     func() any { c := core.DefaultLocalConfig(); return &c },
	Config: func(p *TrainParams) any {
		if p.Local == nil {
			return nil
		}
		return p.Local
	},
	SetConfig: func(p *TrainParams, cfg any) { p.Local = cfg.(*core.LocalConfig) },
	Validate:  func(cfg any) error { return cfg.(*core.LocalConfig).Validate() },
	SetProtocol: func(cfg any, protocol string) {
		c := cfg.(*core.LocalConfig)
		if protocol == "single_pass" {
			c.Epochs = 1
		}
		c.Static = protocol == "static"
	},
	History:   localHistory,
	Cost:      func(cfg any) TrainCost { return localCost(cfg.(*core.LocalConfig)) },
	Bounds:    localBounds,
	Footprint: localFootprint,
	Metrics: []string{"acc", "forgetting", "task_acc", "replay_updates", "replay_samples", "waking_batches",
		"gate_duty", "synops", "synops_frac", "dense_macs", "rho", "asleep", "overlap", "lambda", "pr", "channel",
		"drift.code_change", "drift.pred_change", "drift.max_logit_mean", "drift.max_logit_p99", "drift.margin"},
	train: func(cfg any, in trainInput, keep bool) (*core.Result, *core.Network, error) {
		c := *cfg.(*core.LocalConfig)
		if keep {
			return core.TrainLocalNetwork(c, in.train, in.eval, in.tasks, in.seed, in.hooks)
		}
		res, err := core.TrainLocal(c, in.train, in.eval, in.tasks, in.seed, in.hooks)
		return res, nil, err
	},
}

// localHistory is the local learner's share of the train stage's version
// history (Learner.History): each change of its outputs for unchanged
// params, the configurations it touched, and why.
var localHistory = []pipeline.Bump{
	{Version: 2, Applies: localIf(func(c *core.LocalConfig) bool { return c.LeakMoments || len(c.Anchor) == 2 }),
		Why: "configurations whose W^1 updates took the general update path, the two-timescale " +
			"anchor and leaking Adam moments: it computed c = W^1 o (the input offset's share of the " +
			"layer-1 drive) from the weights before the update, so the next forward pass saw W^1 one " +
			"update late in that share. Fixed; other configurations never took that path and keep version 1."},
	{Version: 3, Applies: localIf(func(c *core.LocalConfig) bool { return c.Mask == "mirror" }),
		Why: "mirror isolation: its masked waking update counts as a replay call for the burst baseline, " +
			"as the reference's local_update decides by the mask's presence (it had run the waking bookkeeping)."},
	{Version: 4, Applies: localIf(func(c *core.LocalConfig) bool { return c.Opt == "adam" }),
		Why: "every configuration on Adam (masked Adam rows, mirror, soft rotation, the offline " +
			"nights and no replay): the first moment is set to 0 below 1e-30, as the heavy-ball velocity " +
			"is. Without input it had decayed into float32's subnormal range, where each operation costs " +
			"about a hundred times more; the flushed steps are below 1e-29."},
	{Version: 5, Applies: localIf(func(c *core.LocalConfig) bool { return c.Mask == "mirror" }),
		Why: "mirror isolation again runs the waking bookkeeping (burst baseline, controller EMA) on its " +
			"masked waking update, undoing 3: the reference's caller passes replay=False with the " +
			"mirror's mask, which overrides the mask-presence default that 3 had followed."},
	{Version: 6, Applies: localIf(func(c *core.LocalConfig) bool { return c.KPAdapt > 0 }),
		Why: "every configuration under the adaptive decay controller (kp_adapt > 0): its sums of " +
			"|Delta W|, |G| and |W| over a layer are each four float64 partial sums (synapse j of a row " +
			"into partial j mod 4, core's ctrlSums) instead of one running sum in synapse order, which " +
			"let the vector kernel add four synapses at once. The sums round differently in their last " +
			"bits; lambda, taken to float32, almost never moves."},
	{Version: 7, Applies: localIf((*core.LocalConfig).GatedRotation),
		Why: "every configuration whose rotation is gated (the refr_nov, refr_prog and refr_block " +
			"gates, the refr_press and refr_frac masks; core.LocalConfig.GatedRotation), whatever it was " +
			"before: its result records GateDuty, the share of waking batches with rotation on, which " +
			"cf0d2d84 added without a version bump, so records from before it lacked the field under " +
			"the same keys (found by the whole-ledger recompute of issue 37: 14 records). Accuracies " +
			"and every other field are unchanged."},
}

// localIf turns a predicate over the local learner's config into one over
// train params, false when they hold none.
func localIf(f func(*core.LocalConfig) bool) func(params any) bool {
	return func(params any) bool {
		c := params.(*TrainParams).Local
		return c != nil && f(c)
	}
}

// localCost is the local learner's terms of the cost model: 3.5 s per
// epoch for the default system (17.5 s for its 5 epochs), 9 with a
// two-timescale anchor, 5 on Adam, 1 without waking replay (no buffer, or
// the offline schedule); scaled by the network's weights against the
// default system's and by the controller and the relaxation.
func localCost(c *core.LocalConfig) TrainCost {
	perEpoch := 3.5
	switch {
	case len(c.Anchor) > 0:
		perEpoch = 9
	case c.Opt == "adam":
		perEpoch = 5
	case c.Buffer == 0, c.Schedule == "offline":
		perEpoch = 1 // no waking replay
	}
	// The update and the forward product scale with the weights: deeper or
	// wider nets (and skip synapses) cost more per sample, and the
	// adaptive controller stores its layers densely and sums them in
	// synapse order (about 1.17x on the default widths).
	perEpoch *= localWeights(c) / localWeights(&defaultLocal)
	if c.KPAdapt > 0 {
		perEpoch *= 1.17
	}
	// Relaxation settles every batch over T steps: a T = 5 cell of the
	// substrate ladder takes about 2.85x the CPU of its single-pass sweep,
	// and T = 20 more again, so the ladder's longest cells (13-15 min) are
	// not ranked with its shortest.
	if t := c.RelaxT; t > 0 {
		perEpoch *= 1 + 0.37*float64(t)
	}
	tc := TrainCost{PerEpoch: perEpoch, Epochs: c.Epochs}
	if c.Night {
		tc.PerEpochFixed = 0.6 // a night of buffer batches after every epoch
	}
	return tc
}

// defaultLocal is the default system, the cost model's unit.
var defaultLocal = core.DefaultLocalConfig()

// localWeights is the cost model's size of a local learner's network: its
// dense weight count on MNIST's 784 inputs and 10 classes, with the skip
// synapses into hidden layers 3 and up.
func localWeights(c *core.LocalConfig) float64 {
	sizes := append(append([]int{784}, c.Hidden...), 10)
	n := 0
	for l := 1; l < len(sizes); l++ {
		n += sizes[l-1] * sizes[l]
		if c.Skip && l >= 3 && l < len(sizes)-1 {
			n += sizes[l-2] * sizes[l]
		}
	}
	return float64(max(n, 1))
}

// localFootprint: the local learner keeps 8 copies of a weight matrix
// (weights, feedback twin, velocity or Adam moments, masks, anchor).
func localFootprint(cfg any) Footprint {
	c := cfg.(*core.LocalConfig)
	return Footprint{Hidden: c.Hidden, Skip: c.Skip, Copies: 8,
		Batch: int64(max(c.BatchWake, c.BatchReplay, c.NightBatch)), Buffer: int64(c.Buffer)}
}

// localBounds are the upper ends of core.LocalConfig's sizes, counts and
// rates, by TOML key (largest value pipeline.toml uses in brackets).
var localBounds = map[string]Bound{
	"hidden":        {65536, whyWidth},                                                              // [512]
	"epochs":        {1000, whyEpochs},                                                              // [30]
	"batch_wake":    {65536, whyBatch},                                                              // [256]
	"batch_replay":  {65536, whyBatch},                                                              // [256]
	"night_batch":   {65536, whyBatch},                                                              // [256]
	"buffer":        {1_000_000, whyBuffer},                                                         // [5000]
	"cadence":       {65536, whyBatch},                                                              // [128]
	"burst":         {1024, whyCount},                                                               // [16]
	"mirror":        {1000, whyCount},                                                               // [20]
	"relax_t":       {1000, whyCount},                                                               // [20]
	"spike_train":   {1000, whyCount},                                                               // [8]
	"night_batches": {1000, whyCount},                                                               // [20]
	"pr_samples":    {100_000, whyBatch},                                                            // [3000]
	"block":         {10_000_000, whyCount},                                                         // [2048]
	"block_off":     {10_000_000, whyCount},                                                         // [0]
	"sp_every":      {10_000_000, whyCount},                                                         // [0: 128]
	"eta":           {10, whyRate},                                                                  // [0.2]
	"nrem_gain":     {1000, whyGain},                                                                // [10]
	"input_l2":      {1, "an L2 coefficient above 1 shrinks W^1 by more than its size each update"}, // [1e-3]
	"kp_adapt":      {100, whyGain},                                                                 // [0.25]
	"adam_eps":      {1, whyGain},                                                                   // [1e-3]
	"tgt_scale":     {1000, whyGain},                                                                // [3]
	"kappa":         {1000, whyGain},                                                                // [1]
	"conn_lambda":   {100, whyGain},                                                                 // [0.15]
	"relax_gamma":   {100, whyGain},                                                                 // [1]
	"replay_noise":  {100, whyGain},                                                                 // [0.2]
	"theta":         {1_000_000, whyGain},                                                           // [10]
	"theta_r":       {1_000_000, whyGain},                                                           // [8]
	"beta_nov":      {1000, whyGain},                                                                // [1.5]
	"gamma_p":       {1000, whyGain},                                                                // [0.5]
}
