package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path"
	"runtime"
	"sort"
	"strings"

	"repro/artifacts"
	"repro/pipeline"
	"repro/stages"
)

func cmdVerify() *command {
	var g globalFlags
	fs := newFlags("verify", &g)
	recompute := &recomputeFlag{}
	fs.Var(recompute, "recompute", "also re-run the cells whose ID matches `GLOB` (--recompute alone: every cell) that the store or a remote holds, and compare their outputs")
	sample := fs.Int("sample", 0, "with --recompute: only this many of those cells, chosen at random (seeded)")
	seed := fs.Uint64("seed", 1, "with --sample: the seed of the choice")
	return &command{
		name: "verify", usage: "[--store DIR] [--recompute[=GLOB] [--sample N [--seed S]]]",
		short: "re-hash every stored blob; move corrupt ones aside",
		long: `Verify decompresses and re-hashes every blob of the store, parses every
manifest and checks that every blob a manifest names exists. A blob whose
content does not match its name (a flipped bit, a truncated file), a file in
blobs/ that is not a blob, and a manifest that does not parse are reported
and moved into corrupt/ (on a read-only store: reported, with why they could
not be moved), so the next run recomputes the cells that need them; each
damaged or missing blob is listed with those cells and the command that
recomputes them. Exit status 1 when anything was wrong.

With --recompute GLOB it also re-runs, in memory, every cached cell of the
profile whose ID matches GLOB and compares the outputs with the stored ones
(as Go's GOCACHEVERIFY): a difference means a stage is not deterministic or
its code changed outputs without a Version bump. Cells a remote holds (the
results ledger) are recomputed too, their inputs pulled or rebuilt first;
--sample N picks N of them at random with --seed, and prints the choice.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if recompute.set {
				glob := recompute.glob
				if glob == "" && len(args) == 1 { // --recompute GLOB
					glob, args = args[0], nil
				}
				if glob == "" {
					glob = "*"
				}
				if len(args) > 0 || *sample < 0 {
					return usageErr("verify takes no arguments but --recompute's GLOB, and --sample N >= 0")
				}
				if err := recomputeCells(ctx, e, &g, glob, *sample, *seed); err != nil {
					return err
				}
			} else if len(args) > 0 || *sample != 0 {
				return usageErr("verify takes no arguments; --sample needs --recompute")
			}
			st, err := openStoreOnly(e, &g)
			if err != nil {
				return err
			}
			r, err := st.Verify(ctx, nil)
			if err != nil {
				return err
			}
			for _, p := range r.Problems {
				printProblem(e, p)
			}
			if n := len(r.NoLog); n > 0 {
				fmt.Fprintf(e.stdout, "%s without a log here (taken from a remote, which keeps outputs, not logs; not a problem), e.g. %s\n",
					plural(n, "cell"), r.NoLog[0].ID)
			}
			fmt.Fprintf(e.stdout, "verified %s (%.1f MB) and %s: %d problem(s)\n",
				plural(r.Blobs, "blob"), float64(r.Bytes)/1e6, plural(r.Manifests, "manifest"), len(r.Problems))
			if len(r.Problems) > 0 {
				return &exitError{code: 1}
			}
			return nil
		},
	}
}

// printProblem reports one damaged entry: what is wrong first, then whether
// it was moved aside (or why not), then the cells that recompute it.
func printProblem(e *env, p artifacts.Problem) {
	fmt.Fprintf(e.stdout, "%s %s: %v", strings.ToUpper(p.Kind), p.Path, p.Err)
	switch {
	case p.MovedTo != "":
		fmt.Fprintf(e.stdout, "; moved to %s\n", p.MovedTo)
	case p.MoveErr != nil:
		fmt.Fprintf(e.stdout, "; could not move it aside: %v\n", p.MoveErr)
	default:
		fmt.Fprintln(e.stdout)
	}
	for _, c := range p.Cells {
		fmt.Fprintf(e.stdout, "  needed by %s (key %s): repro run --only '%s' recomputes it\n", c.ID, c.Key.Short(), c.ID)
	}
}

// recomputeCells re-runs the cells matching glob that the store or a
// remote holds (a seeded sample of n of them if n > 0) and reports any whose
// outputs differ from the record's.
func recomputeCells(ctx context.Context, e *env, g *globalFlags, glob string, n int, seed uint64) error {
	if _, err := path.Match(glob, ""); err != nil {
		return usageErr("--recompute %q: %v", glob, err)
	}
	w, err := openWorkspace(e, g)
	if err != nil {
		return err
	}
	if err := matchesSome(w, "--recompute", glob); err != nil {
		return err
	}
	p, err := w.plan()
	if err != nil {
		return err
	}
	var cells []*pipeline.PlannedCell
	for _, pc := range p.Cells {
		if cellMatch(glob, pc.Cell.ID) && pc.State != pipeline.Stale {
			cells = append(cells, pc)
		}
	}
	if n > 0 {
		from := len(cells)
		cells = sampleCells(cells, n, seed)
		ids := make([]string, len(cells))
		for i, pc := range cells {
			ids[i] = pc.Cell.ID
		}
		fmt.Fprintf(e.stdout, "sample of %d (seed %d) from %s: %s\n", len(cells), seed, plural(from, "cell"), strings.Join(ids, ", "))
	}
	if err := w.inputsHere(ctx, e, cells); err != nil {
		return err
	}
	opt := pipeline.ExecOptions{Stages: stages.Stages(), Settings: w.settings, Executor: "verify"}
	checked, bad := 0, 0
	for _, pc := range cells {
		mm, err := pipeline.RecomputeRecord(ctx, w.store, pc.Manifest, opt)
		if err != nil {
			return err
		}
		checked++
		for _, m := range mm {
			bad++
			fmt.Fprintf(e.stdout, "DIFFERS %s output %s: stored %s, recomputed %s\n", pc.Cell.ID, m.Output, m.Stored.Short(), m.Now.Short())
		}
	}
	fmt.Fprintf(e.stdout, "recomputed %s matching %q: %d differing output(s)\n", plural(checked, "cell"), glob, bad)
	if bad > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// recomputeFlag is verify's --recompute: alone it selects every cell,
// --recompute=GLOB (or --recompute GLOB) the cells GLOB matches.
type recomputeFlag struct {
	set  bool
	glob string
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

func (f *recomputeFlag) String() string { return f.glob }

func (f *recomputeFlag) IsBoolFlag() bool { return true }

func (f *recomputeFlag) Set(s string) error {
	if s == "" {
		return fmt.Errorf("empty glob (an unset shell variable?): --recompute alone re-runs every cell")
	}
	f.set = true
	if s != "true" {
		f.glob = s
	}
	return nil
}
