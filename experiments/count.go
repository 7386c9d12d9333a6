package experiments

import (
	"slices"

	"repro/cellid"
	"repro/pipeline"
	"repro/stages"
)

// ScratchConfig is pipeline.toml's [scratch] table: experiments whose runs
// a count cell counts (stage count).
//
//	[scratch]
//	experiments = ["full"]     # [[experiment]] names
//	protocol = "single_pass"   # one of each experiment's protocols
//
// For every experiment of a profile it adds one count cell
// (cellid.Count) over the experiment's train cells of that protocol on its
// first evaluation split, every seed.
type ScratchConfig struct {
	Experiments []string `toml:"experiments"`
	Protocol    string   `toml:"protocol"`
}

// loadScratch decodes and checks [scratch] (its entry in sections).
func (m *Matrix) loadScratch() error {
	cfg := m.cfg
	sec, _ := cfg.Section("scratch")
	sc := &ScratchConfig{}
	if err := cfg.DecodeAt(sec, sc, "scratch"); err != nil {
		return err
	}
	bad := func(key, format string, args ...any) error {
		line := cfg.KeyLine("scratch." + key)
		if line == 0 {
			line = cfg.KeyLine("scratch")
		}
		return cfg.ErrAt(line, "scratch."+key, format, args...)
	}
	if len(sc.Experiments) == 0 {
		return bad("experiments", "missing or empty")
	}
	for _, name := range sc.Experiments {
		e := m.byName[name]
		switch {
		case e == nil:
			return bad("experiments", "%q: no such [[experiment]]", name)
		case !slices.Contains(e.Protocols, sc.Protocol):
			return bad("protocol", "experiment %s has no protocol %q", name, sc.Protocol)
		}
	}
	m.scratch = sc
	return nil
}

// scratchCells adds the count cells of [scratch] to b, on top of the train
// cells they count.
func (m *Matrix) scratchCells(b *builder, profile string, prof *Profile) error {
	sc := m.scratch
	if sc == nil {
		return nil
	}
	for _, name := range sc.Experiments {
		e := m.byName[name]
		if !e.inProfile(profile) {
			continue
		}
		split := e.splits(prof)[0]
		var inputs []pipeline.CellInput
		for s, seed := range e.seeds(prof) {
			tc := m.trainCell(b, profile, e, sc.Protocol, split, seed)
			inputs = append(inputs, pipeline.CellInput{Name: cellid.Input{Seed: s}.String(), Cell: tc})
		}
		tr := cellid.Train{Experiment: name, Protocol: sc.Protocol, Eval: cellid.EvalOf(split)}
		b.cell(cellid.Count(tr.Prefix()), stages.Count, &stages.CountParams{Experiment: name}, inputs...)
	}
	return nil
}
