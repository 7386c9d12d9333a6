package experiments

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"repro/pipeline"
	"repro/stages"
)

// FieldDiff is one field of an experiment's learner config that differs
// from the learner's default system: its TOML name and both values in
// canonical TOML syntax (pipeline.EncodeParams). A value the config leaves
// out (an omitzero field at zero) is "".
type FieldDiff struct {
	Field, Value, Default string
}

// ConfigDiff is an experiment's learner config under one protocol, as the
// fields that differ from the default system under the same protocol and
// profile.
type ConfigDiff struct {
	Protocol string
	Fields   []FieldDiff
}

// ExperimentConfig is an experiment's resolved configuration, as `repro
// show experiment` prints it.
type ExperimentConfig struct {
	Name    string
	Learner stages.LearnerKind
	Dataset string
	Profile string
	// Preset is the reference config the experiment starts from ("" for
	// the default system); Layers are the presets.toml entries it resolves
	// through, root base first, the preset last.
	Preset string
	Layers []string
	// Protocols are the experiment's protocols in its order.
	Protocols []ConfigDiff
}

// ExperimentConfig returns the named experiment's learner config under a
// profile, per protocol, as a diff from the learner's default system
// (stages.Learner.NewConfig with the protocol and the profile's overrides:
// what the row itself changes). An unknown experiment, or one that does not
// run under the profile, is an error.
func (m *Matrix) ExperimentConfig(profile, name string) (*ExperimentConfig, error) {
	profile, prof, err := m.Profile(profile)
	if err != nil {
		return nil, err
	}
	e, ok := m.byName[name]
	if !ok {
		var near []string
		for _, x := range m.Experiments {
			if strings.Contains(x.Name, name) || strings.Contains(name, x.Name) {
				near = append(near, x.Name)
			}
		}
		msg := fmt.Sprintf("%s: no experiment %q", m.cfg.Path, name)
		if len(near) > 0 {
			msg += fmt.Sprintf(" (similar: %s)", strings.Join(near, ", "))
		}
		return nil, errors.New(msg)
	}
	if e.params[profile] == nil {
		return nil, fmt.Errorf("experiment %s does not run under profile %s (profiles = %q)", name, profile, e.Profiles)
	}
	out := &ExperimentConfig{Name: e.Name, Learner: e.Learner, Dataset: e.Dataset, Profile: profile, Preset: e.Preset}
	table := string(e.Learner)
	if e.Preset != "" {
		if out.Layers, err = m.presets.Layers(table, e.Preset); err != nil {
			return nil, err
		}
	}
	l, _ := stages.LearnerOf(e.Learner)
	for _, protocol := range e.Protocols {
		def := l.NewConfig()
		l.SetProtocol(def, protocol)
		if err := m.cfg.DecodeAt(prof.learnerTable(e.Learner), def, "profile."+profile+"."+table); err != nil {
			return nil, err
		}
		fields, err := diffConfigs(l.Config(e.params[profile][protocol]), def)
		if err != nil {
			return nil, fmt.Errorf("experiment %s, protocol %s: %w", name, protocol, err)
		}
		out.Protocols = append(out.Protocols, ConfigDiff{Protocol: protocol, Fields: fields})
	}
	return out, nil
}

// diffConfigs lists the fields whose canonical values differ, by name.
func diffConfigs(cfg, def any) ([]FieldDiff, error) {
	cur, err := pipeline.EncodeParams("", cfg)
	if err != nil {
		return nil, err
	}
	base, err := pipeline.EncodeParams("", def)
	if err != nil {
		return nil, err
	}
	values := func(ps []pipeline.Param) map[string]string {
		m := map[string]string{}
		for _, p := range ps {
			m[strings.TrimPrefix(p.Name, ".")] = p.Value
		}
		return m
	}
	a, b := values(cur), values(base)
	names := slices.Sorted(maps.Keys(a))
	for n := range b {
		if _, ok := a[n]; !ok {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	var out []FieldDiff
	for _, n := range names {
		if a[n] != b[n] {
			out = append(out, FieldDiff{Field: n, Value: a[n], Default: b[n]})
		}
	}
	return out, nil
}
