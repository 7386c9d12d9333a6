package experiments

import (
	"fmt"
	"slices"

	"repro/cellid"
	"repro/pipeline"
	"repro/stages"
)

// SpikeConfig is pipeline.toml's [spike] table: the trained networks that
// are converted to spiking inference (stage spike) and priced (stage
// energy), the paper's Energy section.
//
//	[spike]
//	experiments = ["full", "silent"]  # [[experiment]] names: local learner on mnist, held-out evaluation
//	protocol = "static"               # their networks trained under this protocol
//	steps = [4, 8, 16, 32]            # time budgets T_s, one spike cell each
//	calibration = 2000                # optional, spike.calibration
//	percentile = 0.999                # optional, spike.percentile
//	ac_pj = 0.9                       # optional, energy.ac_pj
//	mac_pj = 4.6                      # optional, energy.mac_pj
//
// For every experiment, held-out split and seed of a profile it adds one
// spike cell per budget (cellid.Spike; inputs network, data, split) and an
// energy cell (cellid.Energy; inputs rate and spike_t<T>), and sets
// keep_network on the train cell they read: the DAG decides which networks
// are stored.
type SpikeConfig struct {
	Experiments []string `toml:"experiments"`
	Protocol    string   `toml:"protocol"`
	Steps       []int    `toml:"steps"`
	Calibration int      `toml:"calibration"`
	Percentile  float64  `toml:"percentile"`
	ACPJ        float64  `toml:"ac_pj"`
	MACPJ       float64  `toml:"mac_pj"`
}

// loadSpike decodes and checks [spike] (its entry in sections).
func (m *Matrix) loadSpike() error {
	cfg := m.cfg
	sec, ok := cfg.Section("spike")
	if !ok {
		return nil
	}
	sp, ep := stages.Spike.NewParams().(*stages.SpikeParams), stages.Energy.NewParams().(*stages.EnergyParams)
	sc := &SpikeConfig{Calibration: sp.Calibration, Percentile: sp.Percentile, ACPJ: ep.ACPJ, MACPJ: ep.MACPJ}
	if err := cfg.DecodeAt(sec, sc, "spike"); err != nil {
		return err
	}
	bad := func(key, format string, args ...any) error {
		line := cfg.KeyLine("spike." + key)
		if line == 0 {
			line = cfg.KeyLine("spike")
		}
		return cfg.ErrAt(line, "spike."+key, format, args...)
	}
	if len(sc.Steps) == 0 {
		return bad("steps", "missing or empty")
	}
	for i, s := range sc.Steps {
		if s < 1 {
			return bad("steps", "T_s = %d: every time budget must be >= 1", s)
		}
		if s > spikeMaxSteps {
			return bad("steps", "T_s = %d: must be <= %d (a sane maximum: 300x the paper's largest budget, 32; a spike cell's time grows with T_s)", s, spikeMaxSteps)
		}
		if slices.Contains(sc.Steps[:i], s) {
			return bad("steps", "T_s = %d listed twice", s)
		}
	}
	switch {
	case sc.Calibration < 1:
		return bad("calibration", "%d: want >= 1 calibration images", sc.Calibration)
	case sc.Calibration > spikeMaxCalibration:
		return bad("calibration", "%d: want <= %d calibration images (no training set holds more)", sc.Calibration, spikeMaxCalibration)
	case !(sc.Percentile > 0 && sc.Percentile <= 1):
		return bad("percentile", "%g: want a fraction in (0, 1]", sc.Percentile)
	case !(sc.ACPJ > 0):
		return bad("ac_pj", "%g: want a positive price", sc.ACPJ)
	case !(sc.MACPJ > 0):
		return bad("mac_pj", "%g: want a positive price", sc.MACPJ)
	case len(sc.Experiments) == 0:
		return bad("experiments", "missing or empty")
	}
	for _, name := range sc.Experiments {
		e := m.byName[name]
		switch {
		case e == nil:
			return bad("experiments", "%q: no such [[experiment]]", name)
		case !keepsNetwork(e.Learner) || e.Dataset != "mnist":
			return bad("experiments", "%q: spike conversion needs a kept network (the local learner's) on mnist (raw pixel intensities), not %s on %s", name, e.Learner, e.Dataset)
		case e.Eval == "test":
			return bad("experiments", "%q evaluates on the test set; spike conversion evaluates on the held-out tenth", name)
		case !slices.Contains(e.Protocols, sc.Protocol):
			return bad("protocol", "experiment %s has no protocol %q", name, sc.Protocol)
		}
	}
	m.spike = sc
	return nil
}

// spikeCells adds the spike and energy cells of [spike] to b, on top of
// its train cells, and marks the train cells they read with keep_network.
func (m *Matrix) spikeCells(b *builder, profile string, prof *Profile) error {
	sc := m.spike
	if sc == nil {
		return nil
	}
	byID := b.byID
	for _, name := range sc.Experiments {
		e := m.byName[name]
		if !e.inProfile(profile) {
			continue // not in this profile: nothing to convert
		}
		for _, split := range e.splits(prof) {
			data, splitCell := byID[cellid.Prepare("mnist")], byID[cellid.Split("mnist", split)]
			for _, seed := range e.seeds(prof) {
				tr := cellid.Train{Experiment: name, Protocol: sc.Protocol, Eval: cellid.EvalOf(split), Seed: seed}
				tc := byID[tr.String()]
				if tc == nil || data == nil || splitCell == nil {
					return fmt.Errorf("%s: [spike]: no cell %s and its data", m.cfg.Path, tr)
				}
				tp := tc.Params.(*stages.TrainParams)
				tp.KeepNetwork = true
				inputs := []pipeline.CellInput{{Name: "rate", Cell: tc}}
				for _, steps := range sc.Steps {
					c := b.cell(cellid.Spike{Train: tr, Steps: steps}.String(), stages.Spike,
						&stages.SpikeParams{Steps: steps, Calibration: sc.Calibration, Percentile: sc.Percentile, Seed: seed, EvalStride: tp.EvalStride},
						pipeline.CellInput{Name: "network", Cell: tc}, pipeline.CellInput{Name: "data", Cell: data}, pipeline.CellInput{Name: "split", Cell: splitCell})
					inputs = append(inputs, pipeline.CellInput{Name: stages.EnergyInput(steps), Cell: c})
				}
				b.cell(cellid.Energy(tr), stages.Energy, &stages.EnergyParams{ACPJ: sc.ACPJ, MACPJ: sc.MACPJ}, inputs...)
			}
		}
	}
	return nil
}

// keepsNetwork reports whether a learner kind's trained network can be
// kept for the spike conversion (stages.Learner.KeepsNetwork).
func keepsNetwork(k stages.LearnerKind) bool {
	l, ok := stages.LearnerOf(k)
	return ok && l.KeepsNetwork
}
