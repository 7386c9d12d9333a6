package main

import (
	"fmt"
	"strings"

	"repro/pipeline"
	"repro/stages"
)

// degradedGraph returns nil when every table's aggregate cell is cached or
// can be computed in full. Otherwise some train cells failed (or were
// skipped): it returns a graph in which each such table's aggregate reads
// only the train cells that are cached, with the render and reproduction
// cells on top. The aggregate keeps its full list of expected seeds, so the
// missing ones are recorded (n shown in the cell, seeds named in the row's
// comment and in the reproduction report), never dropped silently; the
// plan of the full graph keeps saying why they are missing. notes says,
// per table, which cells are left out.
func degradedGraph(w *workspace) (*pipeline.Graph, []string, error) {
	p, err := w.plan()
	if err != nil {
		return nil, nil, err
	}
	replaced := map[*pipeline.Cell]*pipeline.Cell{}
	var notes []string
	for _, c := range w.graph.Cells {
		if (c.Stage != stages.Aggregate && c.Stage != stages.Figure) || p.Cell(c.ID).State != pipeline.Stale {
			continue
		}
		d := &pipeline.Cell{ID: c.ID, Stage: c.Stage, Params: c.Params, Tables: c.Tables}
		var left []string
		for _, in := range c.Inputs {
			pc := p.Cell(in.Cell.ID)
			if pc.State != pipeline.Stale { // cached, or in a remote
				d.Inputs = append(d.Inputs, in)
				continue
			}
			why := strings.Join(pc.Reasons, "; ")
			left = append(left, fmt.Sprintf("%s (%s)", in.Cell.ID, why))
		}
		replaced[c] = d
		what := "table " + strings.TrimPrefix(c.ID, "aggregate/")
		if c.Stage == stages.Figure {
			what = c.ID
		}
		notes = append(notes, fmt.Sprintf("%s: rendered without %d of %d train cells, shown with their n:\n  %s",
			what, len(left), len(c.Inputs), strings.Join(left, "\n  ")))
	}
	if len(replaced) == 0 {
		return nil, nil, nil
	}
	// Every other cell is kept, its inputs rewired to the replacements;
	// the graph then holds the kept train cells' upstream cells as well.
	var cells []*pipeline.Cell
	for _, c := range w.graph.Cells {
		if d, ok := replaced[c]; ok {
			cells = append(cells, d)
			continue
		}
		rewired := false
		for _, in := range c.Inputs {
			if _, ok := replaced[in.Cell]; ok {
				rewired = true
			}
		}
		if !rewired {
			cells = append(cells, c)
			continue
		}
		cc := *c
		cc.Inputs = nil
		for _, in := range c.Inputs {
			if d, ok := replaced[in.Cell]; ok {
				in.Cell = d
			}
			cc.Inputs = append(cc.Inputs, in)
		}
		replaced[c] = &cc
		cells = append(cells, &cc)
	}
	// Leave out the cells that cannot compute (failed train cells and what
	// only they feed); the run of the graph then takes everything else from
	// the store.
	var keep []*pipeline.Cell
	for _, c := range cells {
		pc := p.Cell(c.ID)
		if c.Stage == stages.Aggregate || c.Stage == stages.Figure || c.Stage == stages.Render || c.Stage == stages.Reproduction || pc.State != pipeline.Stale {
			keep = append(keep, c)
		}
	}
	g, err := pipeline.NewGraph(keep)
	if err != nil {
		return nil, nil, fmt.Errorf("degraded tables: %w", err)
	}
	return g, notes, nil
}
