package stages

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"repro/core"
	"repro/pipeline"
	"repro/presets"
)

// LearnerKind names the learner a train cell runs: pipeline.toml's
// `learner = "..."` and the "learner" of train params and records. Its
// text enters cell keys, so a kind is never renamed.
type LearnerKind string

// The learner kinds (learners registers each).
const (
	LearnerLocal LearnerKind = "local" // the local burst-error learner (core; learner_local.go)
	LearnerBP    LearnerKind = "bp"    // the backprop baselines (core/backprop; learner_bp.go)
)

// DefaultLearner is the kind of train params that name none.
const DefaultLearner = LearnerLocal

// Learner is one learner kind's registration: everything the pipeline
// knows of it. Code outside the registration (the train stage, the
// experiment matrix, the CLI) asks it and never tests a kind. Its config
// lives in the TrainParams field whose TOML name is the kind ("local",
// "bp"), which is also its table in an experiment and a profile of
// pipeline.toml (experiments.Experiment and Profile have a field of that
// name) and in presets.toml.
type Learner struct {
	Kind LearnerKind
	// KeepsNetwork: a trained network of this learner can be stored
	// (train.keep_network), for the spike conversion.
	KeepsNetwork bool
	// DefaultPreset names the preset of presets.toml whose config is
	// NewConfig's (the learner's default system): the site shows a
	// configuration as its difference from that preset's experiment.
	DefaultPreset string
	// NewConfig returns a pointer to the learner's default config.
	NewConfig func() any
	// Config returns p's config of this learner, nil when p has none;
	// SetConfig installs cfg (a pointer NewConfig returned, or a copy).
	Config    func(p *TrainParams) any
	SetConfig func(p *TrainParams, cfg any)
	// Validate checks a config; its errors are core.FieldErrors naming the
	// TOML field.
	Validate func(cfg any) error
	// SetProtocol sets what a protocol ("sequential", "static",
	// "single_pass") changes in a config: single pass runs one epoch per
	// task; the local learner records the static protocol (one task of
	// every class) in its config.
	SetProtocol func(cfg any, protocol string)
	// History is the learner's share of the train stage's version history
	// (Train.History, trainHistory): each entry's Applies is called only
	// with train params of this kind, whose config may be nil only in
	// params Validate refuses.
	History []pipeline.Bump
	// Cost gives the train stage's cost model its terms for a config
	// (trainCost).
	Cost func(cfg any) TrainCost
	// Bounds are the upper ends of the config's sizes, counts and rates,
	// by TOML key, which the experiment matrix checks before anything runs
	// (the learner's Validate checks the lower ends).
	Bounds map[string]Bound
	// Footprint gives the memory model of the experiment matrix its terms
	// for a config (what a train cell holds besides the data set).
	Footprint func(cfg any) Footprint
	// Metrics are the metrics (MetricValue's names, without indices) its
	// results can hold; a table that reads another from a row of this
	// learner is refused when pipeline.toml loads.
	Metrics []string
	// train runs the learner (runTrain); nw is nil unless keep is set.
	train func(cfg any, in trainInput, keep bool) (res *core.Result, nw *core.Network, err error)
}

// TrainCost is a learner's terms of the train stage's cost model before
// any run of an experiment is recorded (trainCost): the CPU seconds of one
// epoch over the full MNIST stream, measured on a 2-core machine and scaled
// by the config's network and options, which the stream stride divides;
// the epochs; and the seconds per epoch the stride does not shrink (an
// offline night's buffer batches).
type TrainCost struct {
	PerEpoch      float64
	Epochs        int
	PerEpochFixed float64
}

// Footprint is what a train cell's memory depends on in a learner's
// config, besides the data set (experiments' trainMem): the hidden widths,
// whether skip synapses join layer l to l+2, the copies kept of every
// weight matrix (weights, feedback twin, velocity or moments, masks,
// anchor), the largest batch, and the replay buffer's items.
type Footprint struct {
	Hidden                []int
	Skip                  bool
	Copies, Batch, Buffer int64
}

// Bound is the largest value a size, count or rate of pipeline.toml may
// take, and why. The learners' own Validate checks the lower ends (a width
// >= 1, a rate > 0); these are the upper ends, which the learners leave
// open. Each maximum is far above anything pipeline.toml uses (the largest
// value any profile uses is in the comment) and far below what breaks a
// run: a size that allocates beyond memory or overflows an int, a count
// that runs for weeks. A configuration that passes them can still ask for
// more memory than a machine has: the matrix's memory estimate refuses
// that per cell.
type Bound struct {
	Max float64
	Why string
}

// Why of the learners' bounds.
const (
	whyWidth  = "a sane maximum: a layer 128x the paper's widest (512); memory grows with its square"
	whyBatch  = "a sane maximum: more than any data set's training samples (60 000), so a batch could never fill"
	whyBuffer = "a sane maximum: 200x the paper's largest buffer (5000), and 20x the largest training set; the buffer is allocated whole when the run starts"
	whyEpochs = "a sane maximum: 33x the paper's longest run (30 epochs); more runs for weeks"
	whyRate   = "a sane maximum: 50x the largest rate the paper uses; larger diverges at the first updates"
	whyCount  = "a sane maximum: 50x the paper's largest; a cell's time grows with it"
	whyGain   = "a sane maximum: 100x the largest the paper uses"
)

// trainInput is what runTrain hands a learner.
type trainInput struct {
	train, eval *core.Dataset
	tasks       []core.Task
	seed        int64
	hooks       core.Hooks
}

// learners is the registration point of learner kinds: a new learner adds
// its entry here, from its own file (learner_<kind>.go), and its config
// field to TrainParams.
var learners = []Learner{localLearner, bpLearner}

// Learners returns every registered learner, in registration order.
func Learners() []Learner { return learners }

// LearnerOf returns the registration of a kind, and whether it exists.
func LearnerOf(k LearnerKind) (Learner, bool) {
	for _, l := range learners {
		if l.Kind == k {
			return l, true
		}
	}
	return Learner{}, false
}

// LearnerKinds lists the kinds for messages: "local or bp".
func LearnerKinds() string {
	var names []string
	for _, l := range learners {
		names = append(names, string(l.Kind))
	}
	return strings.Join(names, " or ")
}

// Records reports whether the learner's results can hold metric (a name
// MetricValue knows, with or without its indices).
func (l *Learner) Records(metric string) bool {
	name := metric
	if m := metricRe.FindStringSubmatch(metric); m != nil {
		name = m[1]
	}
	for _, x := range l.Metrics {
		if x == name {
			return true
		}
	}
	return false
}

// FieldOf returns the TOML field a learner's validation error names ("" if
// it is not a core.FieldError).
func FieldOf(err error) string {
	var fe *core.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
}

// Clone returns a copy of p that shares no config with it: the learner
// configs it holds are copied (their slices stay shared; nothing changes
// them in place).
func (p *TrainParams) Clone() *TrainParams {
	c := *p
	for _, l := range learners {
		if cfg := l.Config(p); cfg != nil {
			v := reflect.ValueOf(cfg).Elem()
			cp := reflect.New(v.Type())
			cp.Elem().Set(v)
			l.SetConfig(&c, cp.Interface())
		}
	}
	return &c
}

// trainHistory is the train stage's version history after version 1: every
// learner's History, each entry applying only to the cells of its kind. A
// cell's version is the largest that applies (pipeline.Stage.CellVersion),
// so neither the entries' order nor the learners' matters.
func trainHistory() []pipeline.Bump {
	var out []pipeline.Bump
	for _, l := range learners {
		for _, b := range l.History {
			kind, applies := l.Kind, b.Applies
			out = append(out, pipeline.Bump{
				Version: b.Version,
				Applies: func(params any) bool { return params.(*TrainParams).Learner == kind && applies(params) },
				Why:     fmt.Sprintf("%s learner: %s", kind, b.Why),
			})
		}
	}
	return out
}

// PresetLearners are the learner tables of presets.toml: one per
// registered kind, its presets checked by the learner's Validate.
func PresetLearners() []presets.Learner {
	var out []presets.Learner
	for _, l := range learners {
		validate := l.Validate
		out = append(out, presets.Learner{
			Table: string(l.Kind),
			New:   l.NewConfig,
			Check: func(cfg any) (string, error) {
				err := validate(cfg)
				return FieldOf(err), err
			},
		})
	}
	return out
}
