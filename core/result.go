package core

// Result is what one training run (one config, one seed) reports. Every
// learner, local or backprop, fills the fields it has; the rest stay zero.
// Accuracies and forgetting are fractions in [0, 1]; tables multiply by 100.
type Result struct {
	// Acc[i][j] is the accuracy after task i on the evaluation samples of
	// task j's classes (j <= i), argmax over all outputs.
	Acc [][]float64
	// FinalAcc is the accuracy on the whole evaluation set after the last task.
	FinalAcc float64
	// Forgetting is mean_{j < T-1} (Acc[j][j] - Acc[T-1][j]); 0 when T = 1.
	Forgetting float64

	WakingBatches int // waking (incoming) batches seen
	ReplayUpdates int // replay micro-batches applied (and night batches where counted)
	ReplaySamples int // samples replayed in total

	// Per hidden layer (index 0 = first hidden layer).
	Rho        []float64 // isolated-channel width, mean over replay steps
	AsleepFrac []float64 // asleep fraction at replay, mean over replay steps
	Overlap    []float64 // mean pairwise Jaccard of task-active sets
	// PR holds the participation ratio of the input (index 0) and each
	// hidden layer, on the first 3,000 evaluation samples.
	PR     []float64
	SynOps float64 // synaptic events per sample of the last forward pass
	// DenseMACs is the multiply-accumulates per sample of one forward pass
	// of the dense MLP with the same layer sizes (skip synapses included),
	// and SynOpsFrac = SynOps / DenseMACs, the "Syn. ops" column of the
	// substrate table. Omitted when zero, so records written before they
	// existed keep their bytes.
	DenseMACs  float64 `json:",omitempty"`
	SynOpsFrac float64 `json:",omitempty"`
	// GateDuty is the fraction of waking batches after which rotation ran
	// (its gate open, or pressure benching some unit), for gated rotation
	// only (gate refr_nov, refr_prog, refr_block; mask refr_press,
	// refr_frac); omitted otherwise.
	GateDuty float64 `json:",omitempty"`

	// MaskChannels (diagnostic DiagChannels) is the share of the masked
	// synapse entries that enter the replay mask through each of the
	// paper's three consolidation channels: [0] presynaptic silent, [1]
	// postsynaptic naturally asleep with the presynaptic unit active, [2]
	// postsynaptic suppressed with the presynaptic unit active. An entry is
	// one stored synapse in the mask of one replay event (the waking batch
	// whose mask a burst reuses). The shares sum to 1; nil when off or when
	// nothing replayed.
	MaskChannels []float64 `json:",omitempty"`

	// KPLambda is the realised Kolen-Pollack decay per layer >= 2 (adaptive
	// controller; EMA 0.99), nil for fixed decay.
	KPLambda []float64

	// Drift diagnostic (optional): hidden-code change rate, prediction change
	// rate, margin-violation rate per hidden layer, max |delta z^L| per replay
	// update (mean and 99th percentile), number of replay steps measured.
	Drift *Drift
}

// Drift is the exactness diagnostic of the paper.
type Drift struct {
	CodeChange     float64
	PredChange     float64
	MarginViolated []float64
	MaxLogitMean   float64
	MaxLogitP99    float64
	Steps          int
}

// Forgetting returns mean_{j < T-1} (acc[j][j] - acc[T-1][j]), 0 for T <= 1.
func Forgetting(acc [][]float64) float64 {
	T := len(acc)
	if T <= 1 {
		return 0
	}
	s := 0.0
	for j := 0; j < T-1; j++ {
		s += acc[j][j] - acc[T-1][j]
	}
	return s / float64(T-1)
}

// Hooks lets a caller follow and stop a long run without core doing I/O.
type Hooks struct {
	// Progress is called after every waking batch with the batches done and
	// the run's total; it may be nil.
	Progress func(done, total int)
	// Stop is polled between epochs; returning true ends the run early with
	// ErrStopped. It may be nil.
	Stop func() bool
}

// DenseMACs returns the multiply-accumulates per sample of one forward pass
// of a dense MLP with layer sizes sizes ([d, hidden..., C]): sum_l
// n_{l-1} n_l, the reference's dense_macs.
func DenseMACs(sizes []int) float64 {
	var m float64
	for l := 1; l < len(sizes); l++ {
		m += float64(sizes[l-1]) * float64(sizes[l])
	}
	return m
}

// SetSynOps records synops against the dense MLP's dense MACs.
func (r *Result) SetSynOps(synops, dense float64) {
	r.SynOps, r.DenseMACs = synops, dense
	if dense > 0 {
		r.SynOpsFrac = synops / dense
	}
}
