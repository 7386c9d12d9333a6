package stages

import (
	"errors"
	"strings"

	"repro/core"
	"repro/core/backprop"
	"repro/presets"
)

// LearnerKind names the learner a train cell runs: pipeline.toml's
// `learner = "..."` and the "learner" of train params and records. Its
// text enters cell keys, so a kind is never renamed.
type LearnerKind string

// The learner kinds (learners registers each).
const (
	LearnerLocal LearnerKind = "local" // the local burst-error learner (core)
	LearnerBP    LearnerKind = "bp"    // the backprop baselines (core/backprop)
)

// Learner is one learner kind's registration: everything the pipeline
// knows of it. Its config lives in the TrainParams field whose TOML name is
// the kind ("local", "bp"), which is also its table in an experiment of
// pipeline.toml and in presets.toml.
type Learner struct {
	Kind LearnerKind
	// KeepsNetwork: a trained network of this learner can be stored
	// (train.keep_network), for the spike conversion.
	KeepsNetwork bool
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
	// train runs the learner (runTrain); nw is nil unless keep is set.
	train func(cfg any, in trainInput, keep bool) (res *core.Result, nw *core.Network, err error)
}

// trainInput is what runTrain hands a learner.
type trainInput struct {
	train, eval *core.Dataset
	tasks       []core.Task
	seed        int64
	hooks       core.Hooks
}

// learners is the registration point of learner kinds: a new learner adds
// its entry here (and its config field to TrainParams).
var learners = []Learner{
	{
		Kind: LearnerLocal, KeepsNetwork: true,
		NewConfig: func() any { c := core.DefaultLocalConfig(); return &c },
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
		train: func(cfg any, in trainInput, keep bool) (*core.Result, *core.Network, error) {
			c := *cfg.(*core.LocalConfig)
			if keep {
				return core.TrainLocalNetwork(c, in.train, in.eval, in.tasks, in.seed, in.hooks)
			}
			res, err := core.TrainLocal(c, in.train, in.eval, in.tasks, in.seed, in.hooks)
			return res, nil, err
		},
	},
	{
		Kind:      LearnerBP,
		NewConfig: func() any { c := backprop.DefaultConfig(); return &c },
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
		train: func(cfg any, in trainInput, _ bool) (*core.Result, *core.Network, error) {
			res, err := backprop.Train(*cfg.(*backprop.Config), in.train, in.eval, in.tasks, in.seed, in.hooks)
			return res, nil, err
		},
	},
}

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

// FieldOf returns the TOML field a learner's validation error names ("" if
// it is not a core.FieldError).
func FieldOf(err error) string {
	var fe *core.FieldError
	if errors.As(err, &fe) {
		return fe.Field
	}
	return ""
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
