package stages

import (
	"fmt"

	"repro/pipeline"
)

// paperCells builds the paper's cells: data, training runs, tables.
func paperCells(cfg *pipeline.Config, profile string) ([]*pipeline.Cell, error) {
	if len(cfg.Experiments) > 0 {
		return nil, fmt.Errorf("%s:%d: experiments are not wired into the DAG yet", cfg.Path, cfg.Experiments[0].Line())
	}
	return nil, nil
}
