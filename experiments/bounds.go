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
	if p.Local != nil {
		if len(p.Local.Hidden) > maxLayers {
			return &core.FieldError{Field: "hidden", Msg: fmt.Sprintf("hidden = %v: at most %d layers (a sane maximum: 6x the paper's deepest net)", p.Local.Hidden, maxLayers)}
		}
		return checkFields(p.Local, localBounds)
	}
	if p.BP != nil {
		if len(p.BP.Hidden) > maxLayers {
			return &core.FieldError{Field: "hidden", Msg: fmt.Sprintf("hidden = %v: at most %d layers (a sane maximum: 6x the paper's deepest net)", p.BP.Hidden, maxLayers)}
		}
		return checkFields(p.BP, bpBounds)
	}
	return nil
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
