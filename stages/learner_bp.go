package stages

import (
	"repro/core"
	"repro/core/backprop"
	"repro/pipeline"
)

// bpLearner registers the backprop baselines (backprop.Train): its config
// is TrainParams.BP, its table "bp".
var bpLearner = Learner{
	Kind:          LearnerBP,
	DefaultPreset: "bp_er_1000",
	NewConfig:     func() any { c := backprop.DefaultConfig(); return &c },
	Config: func(p *TrainParams) any {
		if p.BP == nil {
			return nil
		}
		return p.BP
	},
	SetConfig: func(p *TrainParams, cfg any) { p.BP = cfg.(*backprop.Config) },
	Validate:  func(cfg any) error { return cfg.(*backprop.Config).Validate() },
	SetProtocol: func(cfg any, protocol string) {
		if protocol == "single_pass" {
			cfg.(*backprop.Config).Epochs = 1
		}
	},
	History:   bpHistory,
	Cost:      func(cfg any) TrainCost { return bpCost(cfg.(*backprop.Config)) },
	Bounds:    bpBounds,
	Footprint: bpFootprint,
	// backprop.Train's Result; rho and asleep for the local schedule's
	// k-WTA suppression (MethodLocal) only.
	Metrics: []string{"acc", "forgetting", "task_acc", "replay_updates", "replay_samples", "waking_batches",
		"synops", "synops_frac", "dense_macs", "rho", "asleep"},
	train: func(cfg any, in trainInput, _ bool) (*core.Result, *core.Network, error) {
		res, err := backprop.Train(*cfg.(*backprop.Config), in.train, in.eval, in.tasks, in.seed, in.hooks)
		return res, nil, err
	},
}

// bpHistory is the backprop learner's share of the train stage's version
// history (Learner.History).
var bpHistory = []pipeline.Bump{
	{Version: 2, Applies: func(any) bool { return true },
		Why: "every configuration: on training data with a per-pixel background (standardised MNIST: " +
			"at most a third of the entries differ from their column's majority value) the input layer " +
			"computes W^T x as W^T o + W^T (x - o) and its weight gradient as o (sum of the rows' " +
			"gradients) + the sparse rows (core/backprop, offset.go): the same mathematics, summed in " +
			"another order, so the results differ in float32 rounding. Data without such a background " +
			"(CIFAR's luminance and V1 features) keep the dense path and the same bits; they share the " +
			"version because a cell's version cannot see its data."},
	{Version: 3, Applies: func(params any) bool {
		p := params.(*TrainParams)
		return p.BP != nil && p.BP.Method == backprop.MethodLocal && p.BP.Rotate && p.Protocol != "static"
	},
		Why: "the k-WTA learner on the local schedule with rotation over more than one task " +
			"(protocols other than static): its suppression is kept across task boundaries, as the " +
			"reference's run_bp_local sets it once before its task loop (run_seq.py:1493) and only its " +
			"waking steps rewrite it (1512-1513). It had been cleared at every task, so the first waking " +
			"batch of each task ran unsuppressed. A static run has one task and keeps version 2."},
}

// bpCost is the backprop learner's terms of the cost model: seconds per
// epoch by method (the local schedule 6.7, DER++ 5.4, A-GEM 3.4, the
// others 1.5).
func bpCost(c *backprop.Config) TrainCost {
	perEpoch := 1.5
	switch c.Method {
	case backprop.MethodLocal:
		perEpoch = 6.7
	case "derpp":
		perEpoch = 5.4
	case "agem":
		perEpoch = 3.4
	}
	return TrainCost{PerEpoch: perEpoch, Epochs: c.Epochs}
}

// bpFootprint: backprop keeps 6 copies of a weight matrix.
func bpFootprint(cfg any) Footprint {
	c := cfg.(*backprop.Config)
	return Footprint{Hidden: c.Hidden, Copies: 6, Batch: int64(max(c.Batch, c.ReplayBatch)), Buffer: int64(c.K)}
}

// bpBounds are the upper ends of backprop.Config's sizes, counts and rates.
var bpBounds = map[string]Bound{
	"hidden":       {65536, whyWidth},                                       // [512]
	"epochs":       {1000, whyEpochs},                                       // [30]
	"batch":        {65536, whyBatch},                                       // [256]
	"replay_batch": {65536, whyBatch},                                       // [256]
	"k":            {1_000_000, whyBuffer},                                  // [5000]
	"lr":           {10, whyRate},                                           // [1e-3]
	"weight_decay": {1, "a decay above 1 per step flips the weights' sign"}, // [1e-3]
	"replay_gain":  {1000, whyGain},                                         // [1]
	"alpha":        {1000, whyGain},                                         // [1]
	"beta":         {1000, whyGain},                                         // [1]
}
