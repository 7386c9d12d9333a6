package experiments

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"repro/core"
	"repro/stages"
)

// whyStride is why a stride is bounded. The learners' bounds, and what
// bounds are, are in their registrations (stages.Learner.Bounds).
const whyStride = "keeps at least ~1% of the stream (100 samples of a 10 000-sample task); a larger stride trains on a handful of samples and caches a number that means nothing"

// trainBounds are the upper ends of the train stage's own params.
var trainBounds = map[string]stages.Bound{
	"stream_stride": {Max: 100, Why: whyStride}, // [20]
	"eval_stride":   {Max: 100, Why: whyStride}, // [5]
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
	l, ok := stages.LearnerOf(p.Learner)
	if !ok {
		return nil
	}
	cfg := l.Config(p)
	if cfg == nil {
		return nil
	}
	hidden := l.Footprint(cfg).Hidden
	if len(hidden) > maxLayers {
		return &core.FieldError{Field: "hidden", Msg: fmt.Sprintf("hidden = %v: at most %d layers (a sane maximum: 6x the paper's deepest net)", hidden, maxLayers)}
	}
	return checkFields(cfg, l.Bounds)
}

// checkFields checks every int, float or []int field of the struct v points
// to that has a bound.
func checkFields(v any, bounds map[string]stages.Bound) error {
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
			if x > b.Max {
				return &core.FieldError{Field: name, Msg: fmt.Sprintf("%s = %v: must be <= %s (%s)", name, f.Interface(), strconv.FormatFloat(b.Max, 'f', -1, 64), b.Why)}
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
	l, ok := stages.LearnerOf(p.Learner)
	if !ok || l.Config(p) == nil {
		return 0
	}
	fp := l.Footprint(l.Config(p))
	hidden, batch, buffer, copies, skip := fp.Hidden, fp.Batch, fp.Buffer, fp.Copies, fp.Skip
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
