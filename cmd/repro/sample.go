package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sort"

	"repro/pipeline"
	"repro/stages"
)

// recomputeFlag is verify's --recompute: alone it selects every cell,
// --recompute=GLOB (or --recompute GLOB) the cells GLOB matches.
type recomputeFlag struct {
	set  bool
	glob string
}

func (f *recomputeFlag) String() string   { return f.glob }
func (f *recomputeFlag) IsBoolFlag() bool { return true }

func (f *recomputeFlag) Set(s string) error {
	f.set = true
	if s != "true" {
		f.glob = s
	}
	return nil
}

// sampleCells picks n of cells at random, seeded, kept in plan order.
func sampleCells(cells []*pipeline.PlannedCell, n int, seed uint64) []*pipeline.PlannedCell {
	if n >= len(cells) {
		return cells
	}
	idx := rand.New(rand.NewPCG(seed, 0x7665726966792d73)).Perm(len(cells))[:n]
	sort.Ints(idx)
	out := make([]*pipeline.PlannedCell, n)
	for i, j := range idx {
		out[i] = cells[j]
	}
	return out
}

// inputsHere makes the inputs of cells available in the store, as a run
// would before computing them: pulled from a remote that holds them, or
// computed (a ledger keeps no data outputs).
func (w *workspace) inputsHere(ctx context.Context, e *env, cells []*pipeline.PlannedCell) error {
	need := map[*pipeline.Cell]bool{}
	inputs := map[*pipeline.Cell]bool{}
	for _, pc := range cells {
		need[pc.Cell] = true
		for _, in := range pc.Cell.Inputs {
			inputs[in.Cell] = true
		}
	}
	if len(inputs) == 0 {
		return nil
	}
	only := func(c *pipeline.Cell) bool { return inputs[c] }
	ropt := pipeline.RunOptions{Profile: w.profile, Jobs: runtime.NumCPU(), Only: only, Settings: w.settings,
		Executor: &pipeline.LocalExecutor{Store: w.store, Stages: stages.Stages(), Settings: w.settings}}
	if len(w.remotes) > 0 {
		rr, err := pipeline.PrepareRemotes(ctx, w.store, w.graph, w.profile, w.remotes, only, func(c *pipeline.Cell) bool { return need[c] })
		if err != nil {
			return err
		}
		for _, m := range rr.Misses {
			fmt.Fprintf(e.stderr, "remote miss (the cell is computed instead): %s\n", m)
		}
		ropt.Remote = rr.Take
	}
	rep, err := pipeline.Run(ctx, w.store, w.graph, ropt)
	if err != nil {
		return err
	}
	if err := rep.Err(); err != nil {
		return fmt.Errorf("inputs of the cells to recompute: %w", err)
	}
	if rep.Executed > 0 {
		fmt.Fprintf(e.stdout, "computed %s the recomputed cells read\n", plural(rep.Executed, "input cell"))
	}
	return nil
}
