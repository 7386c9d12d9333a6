package main

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path"
	"slices"
	"strings"

	"repro/artifacts"
	"repro/pipeline"
	"repro/stages"
)

func parseKey(s string) (artifacts.Key, error) { return artifacts.ParseKey(s) }

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

// openStoreOnly opens the store named by --store, REPRO_STORE or the
// config, without building the graph.
func openStoreOnly(e *env, g *globalFlags) (*artifacts.Store, error) {
	dir, err := storeDir(e, g)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	return artifacts.Open(dir, artifacts.Options{})
}

func cmdGC() *command {
	var g globalFlags
	fs := newFlags("gc", &g)
	apply := fs.Bool("apply", false, "delete (default: dry run)")
	only := fs.Bool("profile-only", false, "keep only what --profile (or the default profile) reaches, not every profile's cells")
	return &command{
		name: "gc", usage: "[--apply] [--profile-only [--profile P]]",
		short: "remove what no profile's plan reaches (dry run unless --apply)",
		long: `Gc keeps every cell that the current plan of any profile of the config
reaches (and their outputs and logs) and removes the rest: cells of old
configurations and old stage versions, and files in blobs/ that are not
blobs. With --profile-only it keeps only what the --profile (or default)
profile reaches, so other profiles' cells go too. Entries younger than an
hour are kept, so a concurrent run is safe. Without --apply it only lists
what it would remove.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			profiles := []string{w.profile}
			if !*only {
				for _, name := range slices.Sorted(maps.Keys(w.matrix.Profiles)) {
					if name != w.profile {
						profiles = append(profiles, name)
					}
				}
			}
			keep := map[artifacts.Key]bool{}
			for _, name := range profiles {
				graph := w.graph
				if name != w.profile {
					if graph, err = w.matrix.Build(name); err != nil {
						return err
					}
				}
				p, err := pipeline.MakePlan(w.store, graph, name)
				if err != nil {
					return err
				}
				for _, pc := range p.Cells {
					if pc.KeyKnown {
						keep[pc.Key] = true
					}
				}
			}
			r, err := w.store.GC(ctx, keep, *apply)
			if err != nil {
				return err
			}
			verb := "would remove"
			if *apply {
				verb = "removed"
			}
			strays := ""
			if r.Strays > 0 {
				strays = ", " + plural(r.Strays, "stray file")
			}
			of := "profile"
			if len(profiles) > 1 {
				of = "profiles"
			}
			fmt.Fprintf(e.stdout, "%s %s, %s, %s, %s%s (%.1f MB); kept %d cells of %s %s\n",
				verb, plural(r.Manifests, "cell record"), plural(r.Specs, "spec"), plural(r.Blobs, "blob"), plural(r.Logs, "log"), strays,
				float64(r.Bytes)/1e6, len(keep), of, strings.Join(profiles, ", "))
			if !*apply && len(r.Paths) > 0 {
				fmt.Fprintln(e.stdout, "run 'repro gc --apply' to delete them")
			}
			return nil
		},
	}
}

func cmdDag() *command {
	var g globalFlags
	fs := newFlags("dag", &g)
	dot := fs.Bool("dot", false, "print Graphviz dot")
	byStage := fs.Bool("stages", false, "one node per stage")
	return &command{
		name: "dag", usage: "[--dot] [--stages]",
		short: "print the DAG (Graphviz with --dot)",
		long: `Dag prints every cell of the profile with its inputs, one line per cell
("cell <- input=cell, ..."), in the order a run resolves them. With --dot it
prints the graph for Graphviz (repro dag --dot | dot -Tsvg > dag.svg);
--stages collapses it to one node per stage.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			if !*dot {
				for _, c := range w.graph.Cells {
					var ins []string
					for _, in := range c.Inputs {
						ins = append(ins, in.Name+"="+in.Cell.ID)
					}
					fmt.Fprintf(e.stdout, "%s <- %s\n", c.ID, strings.Join(ins, ", "))
				}
				return nil
			}
			fmt.Fprintln(e.stdout, "digraph repro {\n  rankdir=LR;\n  node [shape=box, fontsize=10];")
			edges := map[string]bool{}
			for _, c := range w.graph.Cells {
				from := c.ID
				if *byStage {
					from = c.Stage.Name
				}
				for _, in := range c.Inputs {
					to := in.Cell.ID
					if *byStage {
						to = in.Cell.Stage.Name
					}
					edge := fmt.Sprintf("  %q -> %q;", to, from)
					if !edges[edge] {
						edges[edge] = true
						fmt.Fprintln(e.stdout, edge)
					}
				}
				if len(c.Inputs) == 0 && !*byStage {
					fmt.Fprintf(e.stdout, "  %q;\n", c.ID)
				}
			}
			fmt.Fprintln(e.stdout, "}")
			return nil
		},
	}
}

func cmdExecCell() *command {
	var store string
	fs := newFlags("exec-cell", nil)
	fs.StringVar(&store, "store", "", "store directory (required)")
	executor := fs.String("executor", "local", "executor name recorded in provenance")
	return &command{
		name: "exec-cell", usage: "--store DIR <key>...",
		short: "run cells from their specs in the store (what cluster jobs run)",
		long: `Exec-cell runs the cell whose spec is stored under <key> and publishes its
manifest; it exits 0 only when the manifest is in the store. Given several
keys (a Slurm batch) it runs them in turn, goes on after a failed cell, writes
each failure on a line naming its key, and exits 0 only if all succeeded. It is
idempotent (a finished cell returns at once) and waits if another process is
computing the same cell. REPRO_DATA_MIRROR overrides the data mirror.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if store == "" || len(args) == 0 {
				return usageErr("exec-cell needs --store DIR and a key")
			}
			keys := make([]artifacts.Key, len(args))
			for i, a := range args {
				k, err := artifacts.ParseKey(a)
				if err != nil {
					return usageErr("%v", err)
				}
				keys[i] = k
			}
			st, err := artifacts.Open(store, artifacts.Options{})
			if err != nil {
				return err
			}
			settings := map[string]string{"data.mirror": e.getenv("REPRO_DATA_MIRROR")}
			opt := pipeline.ExecOptions{Stages: stages.Stages(), Settings: settings, Executor: *executor}
			if len(keys) == 1 {
				_, err = pipeline.ExecuteCell(ctx, st, keys[0], opt)
				return err
			}
			failed := 0
			for _, k := range keys {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				if _, err := pipeline.ExecuteCell(ctx, st, k, opt); err != nil {
					failed++
					fmt.Fprintf(e.stderr, "repro exec-cell: cell %s: %v\n", k, err)
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d of %d cells failed", failed, len(keys))
			}
			return nil
		},
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
