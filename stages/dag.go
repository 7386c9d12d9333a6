package stages

import (
	"fmt"

	"repro/pipeline"
)

// Stages returns every stage this binary knows, by name (what exec-cell
// needs to run a spec from the store).
func Stages() map[string]*pipeline.Stage {
	m := map[string]*pipeline.Stage{}
	for _, st := range all() {
		m[st.Name] = st
	}
	return m
}

// Build turns a config and a profile into the DAG of cells.
func Build(cfg *pipeline.Config, profile string) (*pipeline.Graph, error) {
	var cells []*pipeline.Cell
	if cfg.IsDefined("synthetic") {
		sc := &SynthConfig{}
		if err := cfg.Decode(cfg.Synthetic, sc); err != nil {
			return nil, err
		}
		cs, err := synthCells(sc)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", cfg.Path, err)
		}
		cells = append(cells, cs...)
	}
	cs, err := paperCells(cfg, profile)
	if err != nil {
		return nil, err
	}
	cells = append(cells, cs...)
	if cs, err = tableCells(cfg, profile, cells); err != nil {
		return nil, err
	}
	cells = append(cells, cs...)
	if err := cfg.Finish(); err != nil {
		return nil, err
	}
	return pipeline.NewGraph(cells)
}
