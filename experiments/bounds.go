package experiments

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"repro/core"
	"repro/stages"
)

// bound is the largest value a size, count or rate of pipeline.toml may
// take, and why. The learners' own Validate checks the lower ends (a width
// >= 1, a rate > 0); these are the upper ends, which the learners leave
// open. Each maximum is far above anything pipeline.toml uses (the largest
// value any profile uses is in the comment) and far below what breaks a
// run: a size that allocates beyond memory or overflows an int, a count
// that runs for weeks, a stride that leaves a handful of samples. A
// configuration that passes them can still ask for more memory than a
// machine has: Mem estimates that per cell, and the plan refuses it there.
type bound struct {
	max float64
	why string
}

const (
	whyWidth  = "a sane maximum: a layer 128x the paper's widest (512); memory grows with its square"
	whyBatch  = "a sane maximum: more than any data set's training samples (60 000), so a batch could never fill"
	whyBuffer = "a sane maximum: 200x the paper's largest buffer (5000), and 20x the largest training set; the buffer is allocated whole when the run starts"
	whyEpochs = "a sane maximum: 33x the paper's longest run (30 epochs); more runs for weeks"
	whyRate   = "a sane maximum: 50x the largest rate the paper uses; larger diverges at the first updates"
	whyCount  = "a sane maximum: 50x the paper's largest; a cell's time grows with it"
	whyStride = "keeps at least ~1% of the stream (100 samples of a 10 000-sample task); a larger stride trains on a handful of samples and caches a number that means nothing"
	whyGain   = "a sane maximum: 100x the largest the paper uses"
)

// localBounds are the upper ends of core.LocalConfig's sizes, counts and
// rates, by TOML key (largest value pipeline.toml uses in brackets).
var localBounds = map[string]bound{
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

// bpBounds are the upper ends of backprop.Config's.
var bpBounds = map[string]bound{
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

// trainBounds are the upper ends of the train stage's own params.
var trainBounds = map[string]bound{
	"stream_stride": {100, whyStride}, // [20]
	"eval_stride":   {100, whyStride}, // [5]
}

// maxLayers is the most hidden layers a network may have.
const maxLayers = 32 // [5]

// spikeMaxSteps and spikeMaxCalibration bound [spike]'s budgets: the
// paper's largest T_s is 32; a spike simulation's time grows linearly with
// T_s, and calibration reads at most a whole training set.
const (
	spikeMaxSteps       = 10_000
	spikeMaxCalibration = 60_000
)

// checkBounds reports the first field of p above its bound, as a
// core.FieldError naming the field (so that fieldErr finds its line).
func checkBounds(p *stages.TrainParams) error {
	if err := checkFields(p, trainBounds); err != nil {
		return err
	}
	var hidden []int
	var cfg any
	var bounds map[string]bound
	switch {
	case p.Local != nil:
		hidden, cfg, bounds = p.Local.Hidden, p.Local, localBounds
	case p.BP != nil:
		hidden, cfg, bounds = p.BP.Hidden, p.BP, bpBounds
	default:
		return nil
	}
	if len(hidden) > maxLayers {
		return &core.FieldError{Field: "hidden", Msg: fmt.Sprintf("hidden = %v: at most %d layers (a sane maximum: 6x the paper's deepest net)", hidden, maxLayers)}
	}
	return checkFields(cfg, bounds)
}

// checkFields checks every int, float or []int field of the struct v points
// to that has a bound.
func checkFields(v any, bounds map[string]bound) error {
	rv := reflect.Indirect(reflect.ValueOf(v))
	t := rv.Type()
	for i := 0; i < t.NumField(); i++ {
		name, _, _ := strings.Cut(t.Field(i).Tag.Get("toml"), ",")
		b, ok := bounds[name]
		if !ok {
			continue
		}
		f := rv.Field(i)
		var xs []float64
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			xs = []float64{float64(f.Int())}
		case reflect.Float64:
			xs = []float64{f.Float()}
		case reflect.Slice:
			for j := 0; j < f.Len(); j++ {
				if e := f.Index(j); e.Kind() == reflect.Int {
					xs = append(xs, float64(e.Int()))
				}
			}
		}
		for _, x := range xs {
			if x > b.max {
				return &core.FieldError{Field: name, Msg: fmt.Sprintf("%s = %v: must be <= %s (%s)", name, f.Interface(), strconv.FormatFloat(b.max, 'f', -1, 64), b.why)}
			}
		}
	}
	return nil
}

// shape is what a train cell's memory depends on in its data set: the
// samples held in memory (training and evaluation), the features of one,
// and the classes.
type shape struct{ samples, features, classes int64 }

// shapes bounds each data set's (an upper bound for the V1 features:
// 1,024 per CIFAR image, counted as the 3,072 pixels).
var shapes = map[string]shape{
	"mnist":     {70_000, 784, 10},
	"cifar10":   {60_000, 3072, 10},
	"cifar10f":  {60_000, 3072, 10},
	"cifar100":  {60_000, 3072, 100},
	"cifar100f": {60_000, 3072, 100},
}

// trainMem estimates from its shapes the most memory a train cell needs,
// in bytes: the data set as float32; every weight matrix (and skip matrix)
// in float32 times the copies a learner keeps of it (weights, feedback
// twin, velocity or Adam moments, masks, anchor: 8 for the local learner,
// 6 for backprop); a batch's activations through every layer, about 16
// arrays each; and the replay buffer (features, label and logits per
// item). The paper's default system comes to about 0.24 GB, as measured
// (about 0.3 GB per train cell in flight). It is an estimate for refusing
// a cell that cannot fit, not a reservation.
func trainMem(p *stages.TrainParams, dataset string) int64 {
	sh, ok := shapes[dataset]
	if !ok {
		return 0
	}
	var hidden []int
	var batch, buffer, copies int64
	skip := false
	switch {
	case p.Local != nil:
		l := p.Local
		hidden, buffer, copies, skip = l.Hidden, int64(l.Buffer), 8, l.Skip
		batch = int64(max(l.BatchWake, l.BatchReplay, l.NightBatch))
	case p.BP != nil:
		b := p.BP
		hidden, buffer, copies = b.Hidden, int64(b.K), 6
		batch = int64(max(b.Batch, b.ReplayBatch))
	default:
		return 0
	}
	dims := append(append([]int64{sh.features}, toInt64(hidden)...), sh.classes)
	var weights, units int64
	for i := 0; i+1 < len(dims); i++ {
		weights += dims[i] * dims[i+1]
		if skip && i+2 < len(dims) {
			weights += dims[i] * dims[i+2]
		}
		units += dims[i+1]
	}
	const f32 = 4
	return f32 * (sh.samples*sh.features + copies*weights + 16*batch*(units+sh.features) + buffer*(sh.features+sh.classes+1))
}

func toInt64(xs []int) []int64 {
	out := make([]int64, len(xs))
	for i, x := range xs {
		out[i] = int64(x)
	}
	return out
}

// CheckMemory refuses, before anything runs, a profile with a train cell
// whose estimated memory (trainMem) exceeds limit bytes (the memory of the
// machine that runs it; 0 = no check). The error names the experiment's
// line: the cell would not fit, and a run would die of it with every other
// cell in flight.
func (m *Matrix) CheckMemory(profile string, limit int64) error {
	if limit <= 0 {
		return nil
	}
	for _, e := range m.Experiments {
		for _, protocol := range e.Protocols {
			p := e.params[profile][protocol]
			if p == nil {
				continue
			}
			need := trainMem(p, e.Dataset)
			if need <= limit {
				continue
			}
			at := fmt.Sprintf("experiment[%d]", e.index)
			key, line := "experiment "+e.Name, m.cfg.KeyLine(at)
			for _, k := range []string{"hidden", "buffer", "k"} {
				if l := m.cfg.KeyLine(at + "." + string(e.Learner) + "." + k); l > 0 {
					key, line = "experiment "+e.Name+"."+string(e.Learner)+"."+k, l
					break
				}
			}
			return m.cfg.ErrAt(line, key, "a train cell would need about %s of memory (estimated from its shapes: data, weights, batches, buffer), more than the %s this machine has (protocol %s, profile %s)",
				GiB(need), GiB(limit), protocol, profile)
		}
	}
	return nil
}

// GiB formats a byte count for messages.
func GiB(b int64) string { return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30)) }
