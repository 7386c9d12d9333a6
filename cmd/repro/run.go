package main

import (
	"context"
	"flag"
	"fmt"
	"path"
	"runtime"
	"sync"
	"time"

	"repro/experiments"
	"repro/internal/buildstamp"
	"repro/pipeline"
	"repro/pipeline/slurm"
	"repro/stages"
)

type runOptions struct {
	g        globalFlags
	flags    *flag.FlagSet
	jobs     int
	executor string
	only     string
	quiet    bool
	slurm    slurm.Options
	poll     time.Duration
}

func cmdRun() *command {
	o := &runOptions{}
	fs := newFlags("run", &o.g)
	o.flags = fs
	fs.IntVar(&o.jobs, "j", runtime.NumCPU(), "cells to run at once (local: worker goroutines, default the core count; slurm: jobs in flight, default 100 or executor.slurm.jobs)")
	nonEmptyVar(fs, &o.executor, "executor", "local", "where cells run: local or slurm (`executor`)")
	fs.Var((*onceString)(&o.only), "only", "run only cells whose ID, or leading segments of it, match this `glob` (and what they need): train/full, train/*/static/*/seed0; given once")
	fs.BoolVar(&o.quiet, "q", false, "no progress line")
	nonEmptyVar(fs, &o.slurm.Partition, "partition", "", "slurm: `partition`")
	nonEmptyVar(fs, &o.slurm.Time, "time", "", "slurm: `time` limit per cell (sbatch --time)")
	nonEmptyVar(fs, &o.slurm.Mem, "mem", "", "slurm: `memory` per cell (sbatch --mem)")
	fs.IntVar(&o.slurm.CPUsPerTask, "cpus-per-task", 0, "slurm: CPUs per cell")
	fs.IntVar(&o.slurm.ArrayLimit, "array-limit", 0, "slurm: most jobs submitted at once (0: -j)")
	fs.IntVar(&o.slurm.Batch, "batch", 0, "slurm: most cells one job runs in turn (0 or 1: one job per cell)")
	nonEmptyVar(fs, &o.slurm.Binary, "binary", "", "slurm: repro `binary` the nodes run (default: this one)")
	return &command{
		name: "run", usage: "[-j N] [--profile P] [--executor local|slurm] [--only GLOB]",
		short: "plan the DAG, execute what is missing, render",
		long: `Run plans every cell of the profile, takes cached cells from the store and
computes the rest on -j workers, each cell once, in dependency order. A cell
that fails records its error and log and blocks only what depends on it; the
exit status is then 1 with a summary. Interrupted (Ctrl-C, kill), a run loses
at most the cells in flight: run again to resume.`,
		flags: fs,
		run:   func(ctx context.Context, e *env, args []string) error { return runRun(ctx, e, o, args) },
	}
}

func runRun(ctx context.Context, e *env, o *runOptions, args []string) error {
	if len(args) > 0 {
		return usageErr("run takes no arguments, got %q", args)
	}
	if o.jobs < 1 {
		return usageErr("-j must be >= 1")
	}
	if o.only != "" {
		if _, err := path.Match(o.only, ""); err != nil {
			return usageErr("--only %q: %v", o.only, err)
		}
	}
	w, err := openWorkspace(e, &o.g)
	if err != nil {
		return err
	}
	if err := w.checkOutputs(); err != nil {
		return err // before any work
	}
	warnUnstamped(e)
	if o.only != "" {
		if err := matchesSome(w, "--only", o.only); err != nil {
			return err
		}
	}
	ex, err := newExecutor(w, o)
	if err != nil {
		return err
	}
	ropt := pipeline.RunOptions{Profile: w.profile, Jobs: o.jobs, Executor: ex, Settings: w.settings}
	if o.only != "" {
		ropt.Only = func(c *pipeline.Cell) bool { return cellMatch(o.only, c.ID) }
	}
	if o.executor == "local" {
		var note string
		if ropt.Jobs, note = capJobs(o.jobs, w.graph, ropt.Only, w.memory); note != "" {
			fmt.Fprintln(e.stderr, note)
		}
	}
	rr, err := w.useRemotes(ctx, e, w.graph, ropt.Only)
	if err != nil {
		return err
	}
	if rr != nil {
		rr.Use(&ropt)
	} else {
		// Without remotes the plan still says which cells the store holds,
		// so that the ETA counts no work for them. The scheduler asks only
		// once a cell is to run: a run with nothing to do (every cell
		// cached) never plans, which kept a no-op run at about twice the
		// cost of repro plan.
		var once sync.Once
		var held *pipeline.Plan
		ropt.Held = func(c *pipeline.Cell) bool {
			once.Do(func() { held, _ = pipeline.MakePlan(w.store, w.graph, w.profile) })
			return held != nil && held.Held(c)
		}
	}
	if ropt.History, err = w.historyRemotes(o.g.noRemote); err != nil {
		return err
	}
	prog := newProgress(e.stderr, o.quiet, ex.Name())
	if lx, ok := ex.(*pipeline.LocalExecutor); ok {
		lx.Progress = func(key, id string, done, total int64) { prog.cell(key, id, done, total) }
		lx.Waiting = func(key, id, holder string) { prog.waiting(id, holder) }
	}
	ropt.Events = prog.event
	rep, err := pipeline.Run(ctx, w.store, w.graph, ropt)
	prog.finish()
	if err != nil {
		if ctx.Err() != nil && rep != nil {
			printInterrupted(e, w, rep)
		}
		return err
	}
	// Rendered outputs are copied into paper/ even when some cells failed:
	// what could be rendered is, and the failures are listed below.
	_, real := absentReleases(w.graph, rep)
	dg, dgRep, err := afterRun(ctx, e, w, o.only != "", len(rep.Failures) > 0, len(real) > 0)
	if err != nil {
		return err
	}
	settleDegraded(rep, dg, dgRep)
	absent, real := absentReleases(w.graph, rep)
	if printRunSummary(e, w, rr, rep, ex.Name()) {
		return nil
	}
	// A release absent from this machine (CIFAR-100 on a mirror without
	// it) is said once, with the cells it blocks; the run fails only for
	// the other failures.
	for _, a := range absent {
		fmt.Fprintln(e.stdout, a.text())
	}
	if len(real) > 0 {
		r := *rep
		r.Failures = real
		return &exitError{code: 1, err: r.Err()}
	}
	return nil
}

// warnUnstamped says loudly when this binary cannot name the source it was
// built from. It still computes (a store is a cache, and `go run` or a
// build without git must work), but its records say "revision unknown"
// and push refuses them.
func warnUnstamped(e *env) {
	if buildstamp.Binary().Revision != buildstamp.Unknown {
		return
	}
	fmt.Fprint(e.stderr, `WARNING: this repro binary cannot name the source it was built from
  (revision unknown: built without 'make build', or outside git). The cells
  it computes record "revision unknown", and repro push refuses them.
  Build with 'make build' in a git checkout (docs/audit.md).
`)
}

// afterRun materialises what a run rendered (the paper's tables) into the
// work tree; partial is true for a run restricted by --only, which then
// says nothing of tables it did not render. failed says a cell of the run
// failed: only then can a table be incomplete, so a run without failures
// does not plan the profile again to look for one. printNotes prints, per table, the
// cells it was rendered without (not needed when the only failures are
// absent releases, which the run names once).
//
// It returns the degraded graph it ran and that run's report (nil, nil when
// every cell computed).
func afterRun(ctx context.Context, e *env, w *workspace, partial, failed, printNotes bool) (*pipeline.Graph, *pipeline.RunReport, error) {
	g := w.graph
	var dgRep *pipeline.RunReport
	if !partial && failed {
		// Tables whose train cells did not all compute are rendered from
		// the seeds that did, showing n and naming the missing seeds.
		p, err := w.plan()
		if err != nil {
			return nil, nil, err
		}
		dg, notes, err := experiments.DegradedGraph(w.graph, p)
		if err != nil {
			return nil, nil, err
		}
		if dg != nil {
			for _, n := range notes {
				if printNotes {
					fmt.Fprintln(e.stderr, n)
				}
			}
			ex := &pipeline.LocalExecutor{Store: w.store, Stages: stages.Stages(), Settings: w.settings}
			ropt := pipeline.RunOptions{Profile: w.profile, Jobs: 1, Executor: ex, Settings: w.settings}
			rr, err := w.useRemotes(ctx, e, dg, nil)
			if err != nil {
				return nil, nil, err
			}
			if rr != nil {
				rr.Use(&ropt)
			}
			// status reports the run the user started, not this one.
			last, _ := w.store.GetLastRun(w.profile)
			rep, err := pipeline.Run(ctx, w.store, dg, ropt)
			if last != nil {
				w.store.PutLastRun(last)
			}
			if err != nil {
				return nil, nil, err
			}
			if err := rep.Err(); err != nil {
				fmt.Fprintf(e.stderr, "rendering the incomplete tables: %v\n", err)
			}
			g, dgRep = dg, rep
		}
	}
	wrote, missing, err := materialise(ctx, w, g)
	if err != nil {
		return nil, nil, err
	}
	for _, f := range wrote {
		fmt.Fprintf(e.stdout, "wrote %s\n", f)
	}
	if !partial {
		for _, m := range missing {
			fmt.Fprintf(e.stderr, "not rendered: %s\n", m)
		}
	}
	if dgRep == nil {
		return nil, nil, nil
	}
	return g, dgRep, nil
}

// settleDegraded makes rep count each cell once, as plan and status do. The
// first pass of a run skips every cell downstream of a failed one,
// aggregates and renders included; afterRun then renders those tables from
// the seeds that did run (the degraded graph dg, its report dgRep). A cell
// skipped by the first pass that the second computed or took from the
// store is no longer skipped: it counts as executed or cached, and what
// stays skipped is exactly what plan calls blocked.
func settleDegraded(rep *pipeline.RunReport, dg *pipeline.Graph, dgRep *pipeline.RunReport) {
	if dg == nil || dgRep == nil {
		return
	}
	failedAgain := map[string]bool{}
	for _, f := range dgRep.Failures {
		failedAgain[f.CellID] = true
	}
	var keep []pipeline.CellFailure
	recovered := 0
	for _, f := range rep.Failures {
		if f.Key.IsZero() && dg.Cell(f.CellID) != nil && !failedAgain[f.CellID] {
			recovered++
			continue
		}
		keep = append(keep, f)
	}
	rep.Failures = keep
	rep.Skipped -= recovered
	ran := min(recovered, dgRep.Executed)
	rep.Executed += ran
	rep.Cached += recovered - ran
}

// newExecutor builds the executor --executor names; the Slurm executor's
// options come from its flags, else from [executor.slurm] in the config
// (and -j, unless given, becomes the jobs in flight on the cluster).
func newExecutor(w *workspace, o *runOptions) (pipeline.Executor, error) {
	switch o.executor {
	case "local":
		return &pipeline.LocalExecutor{Store: w.store, Stages: stages.Stages(), Settings: w.settings}, nil
	case "slurm":
		so := o.slurm
		set := map[string]bool{}
		o.flags.Visit(func(f *flag.Flag) { set[f.Name] = true })
		cs := w.cfg.Executor.Slurm
		for _, d := range []struct {
			flag string
			dst  *string
			val  string
		}{{"partition", &so.Partition, cs.Partition}, {"time", &so.Time, cs.Time}, {"mem", &so.Mem, cs.Mem}, {"binary", &so.Binary, cs.Binary}} {
			if !set[d.flag] && d.val != "" {
				*d.dst = d.val
			}
		}
		if !set["cpus-per-task"] && cs.CPUsPerTask > 0 {
			so.CPUsPerTask = cs.CPUsPerTask
		}
		if !set["array-limit"] && cs.ArrayLimit > 0 {
			so.ArrayLimit = cs.ArrayLimit
		}
		if !set["batch"] && cs.Batch > 0 {
			so.Batch = cs.Batch
		}
		if !set["j"] {
			// Jobs in flight on a cluster, not local cores.
			o.jobs = 100
			if cs.Jobs > 0 {
				o.jobs = cs.Jobs
			}
		}
		store := w.store
		so.Check = func(ctx context.Context, job *pipeline.Job) (bool, error) {
			_, err := store.Lookup(job.Key)
			return err == nil, nil
		}
		return slurm.New(so)
	default:
		return nil, usageErr("--executor %q: want local or slurm", o.executor)
	}
}

// printRunSummary prints the run's one-line summary; it reports true when
// there was nothing to do (every cell cached or taken from a remote).
func printRunSummary(e *env, w *workspace, rr *pipeline.RemoteRun, rep *pipeline.RunReport, executor string) (nothingToDo bool) {
	fromRemote := remoteSummary(rr, rep)
	if rr != nil {
		rep.Cached -= rr.Prefetched // counted under remotes
	}
	if rep.Executed == 0 && rep.Elsewhere == 0 && rep.Failed == 0 && rep.Skipped == 0 {
		fmt.Fprintf(e.stdout, "nothing to do: %s cached%s (profile %s)\n", plural(rep.Cached, "cell"), fromRemote, w.profile)
		return true
	}
	elsewhere := ""
	if rep.Elsewhere > 0 {
		elsewhere = fmt.Sprintf(", %d computed by another process", rep.Elsewhere)
	}
	damaged := ""
	if rep.Damaged > 0 {
		damaged = fmt.Sprintf(" (%d over a damaged stored output)", rep.Damaged)
	}
	// "blocked", as plan and status name a cell that waits for a failed one.
	fmt.Fprintf(e.stdout, "ran %s%s, %d cached%s%s, %d failed, %d blocked in %s (profile %s, %s executor)\n",
		plural(rep.Executed, "cell"), damaged, rep.Cached, fromRemote, elsewhere, rep.Failed, rep.Skipped, rep.Wall.Round(time.Millisecond), w.profile, executor)
	return false
}

// printInterrupted is the summary of a run stopped by a signal: what
// finished (and stays: every finished cell is in the store), what was
// running and what is left, for the rerun that resumes it.
func printInterrupted(e *env, w *workspace, rep *pipeline.RunReport) {
	finished := rep.Executed + rep.Elsewhere + rep.Cached + rep.Remote
	fmt.Fprintf(e.stdout, "interrupted after %s: %s finished (%d ran, %d cached), %d running (stopped), %d left, %d failed; run again to resume (profile %s)\n",
		rep.Wall.Round(time.Millisecond), plural(finished, "cell"), rep.Executed, rep.Cached+rep.Remote, rep.Stopped, rep.Left, rep.Failed, w.profile)
}

// onceString is a string flag that refuses a second value: flag's own
// string flag keeps the last, so "--only A --only B" would silently run B
// alone.
type onceString string

func (v *onceString) String() string { return string(*v) }

func (v *onceString) Set(s string) error {
	if s == "" {
		return fmt.Errorf("empty glob (an unset shell variable?): leave --only out to run the whole profile")
	}
	if *v != "" {
		return fmt.Errorf("given twice (%q, then %q): one glob per run; a glob such as 'render/*' selects several cells", string(*v), s)
	}
	*v = onceString(s)
	return nil
}
