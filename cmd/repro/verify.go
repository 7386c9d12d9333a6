package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"repro/artifacts"
	"repro/internal/buildstamp"
	"repro/internal/kernelpath"
	"repro/pipeline"
	"repro/stages"
)

func cmdVerify() *command {
	var g globalFlags
	fs := newFlags("verify", &g)
	recompute := &recomputeFlag{}
	fs.Var(recompute, "recompute", "also re-run the cells whose ID matches `GLOB` (--recompute alone: every cell) that the store or a remote holds, and compare their outputs")
	var ro recomputeOptions
	fs.IntVar(&ro.sample, "sample", 0, "with --recompute: only this many of those cells, chosen at random (seeded)")
	fs.Uint64Var(&ro.seed, "seed", 1, "with --sample: the seed of the choice")
	nonEmptyVar(fs, &ro.push, "push", "", "with --recompute: give each cell whose outputs match a record of this run and push it to remote `NAME` at once; skip the cells whose record there already names this binary's build (resumable)")
	nonEmptyVar(fs, &ro.doneBy, "done-by", "", "with --push: also skip the cells whose record there names a clean build of one of these commits (`REV,...`, prefixes): an earlier recompute the ledger keeps")
	fs.BoolVar(&ro.allowDirty, "allow-dirty", false, "with --push: accept a binary built with uncommitted changes (for a scratch remote, never the results ledger)")
	fs.IntVar(&ro.jobs, "j", runtime.NumCPU(), "with --recompute: cells to compute at once")
	return &command{
		name: "verify", usage: "[--store DIR] [--recompute[=GLOB] [--sample N [--seed S]] [--push NAME [--done-by REV,...]] [-j N]]",
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
--sample N picks N of them at random with --seed, and prints the choice.
REPRO_KERNELS=portable recomputes with the vector kernels off (docs/audit.md).

--push NAME makes the recompute the records' new provenance: each cell whose
outputs match gets a record of this run (this binary's commit, host, CPU,
kernel path, times), stored and pushed to remote NAME at once, replacing
the old one there; a cell that differs is reported and keeps its record.
Cells whose record in NAME already names this binary's build are skipped,
so an interrupted recompute resumes where it stopped, on this machine or
another sharing the remote; --done-by REV skips as well the cells an earlier
commit REV already recomputed (a recompute continued after a fix, so that the
ledger names a short list of commits). It needs a binary built by 'make build' from a
clean tree.`,
		flags: fs, maxArgs: 1,
		run: func(ctx context.Context, e *env, args []string) error {
			if recompute.set {
				glob := recompute.glob
				if glob == "" && len(args) == 1 { // --recompute GLOB
					glob, args = args[0], nil
				}
				if glob == "" {
					glob = "*"
				}
				if len(args) > 0 || ro.sample < 0 || ro.jobs < 1 {
					return usageErr("verify takes no arguments but --recompute's GLOB, --sample N >= 0 and -j N >= 1")
				}
				ro.glob = glob
				if err := recomputeCells(ctx, e, &g, &ro); err != nil {
					return err
				}
			} else if len(args) > 0 || ro.sample != 0 || ro.push != "" || ro.doneBy != "" || ro.allowDirty {
				return usageErr("verify takes no arguments; --sample, --push, --done-by and --allow-dirty need --recompute")
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
				printProblem(e, st, p)
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
// it was moved aside (or why not, and what lets it be), then the cells that
// recompute it once it is.
func printProblem(e *env, st *artifacts.Store, p artifacts.Problem) {
	fmt.Fprintf(e.stdout, "%s %s: %v", strings.ToUpper(p.Kind), p.Path, p.Err)
	switch {
	case p.MovedTo != "":
		fmt.Fprintf(e.stdout, "; moved to %s\n", p.MovedTo)
	case p.MoveErr != nil:
		// While it keeps its name no run can recompute it: say what
		// lets it move first.
		fmt.Fprintf(e.stdout, "; could not move it aside: %v\n  %s (repro verify moves it)\n", p.MoveErr, st.StuckAdvice())
		for _, c := range p.Cells {
			fmt.Fprintf(e.stdout, "  needed by %s (key %s): once it is moved aside, repro run --only '%s' recomputes it\n", c.ID, c.Key.Short(), c.ID)
		}
		return
	default:
		fmt.Fprintln(e.stdout)
	}
	for _, c := range p.Cells {
		fmt.Fprintf(e.stdout, "  needed by %s (key %s): repro run --only '%s' recomputes it\n", c.ID, c.Key.Short(), c.ID)
	}
}

// recomputeOptions are verify's --recompute and its flags.
type recomputeOptions struct {
	glob       string
	sample     int
	seed       uint64
	push       string // remote to push restamped records to
	allowDirty bool
	doneBy     string // comma-separated revision prefixes
	jobs       int
}

// recomputeCells re-runs the cells matching o.glob that the store or a
// remote holds (a seeded sample of them if o.sample > 0) and reports any
// whose outputs differ from the record's; with o.push it publishes a
// record of each matching run to that remote as it goes.
func recomputeCells(ctx context.Context, e *env, g *globalFlags, o *recomputeOptions) error {
	if _, err := path.Match(o.glob, ""); err != nil {
		return usageErr("--recompute %q: %v", o.glob, err)
	}
	if o.doneBy != "" && o.push == "" {
		return usageErr("--done-by needs --push")
	}
	stamp := buildstamp.Binary()
	if o.push != "" && !stamp.Clean() && !(o.allowDirty && stamp.Dirty && stamp.Revision != buildstamp.Unknown) {
		return fmt.Errorf("--push: this binary cannot name a clean source (it is %s), so its records would not either; build it with 'make build' from a clean tree (everything committed)", stamp)
	}
	w, err := openWorkspace(e, g)
	if err != nil {
		return err
	}
	if err := matchesSome(w, "--recompute", o.glob); err != nil {
		return err
	}
	var pub *publisher
	if o.push != "" {
		r, rs, err := w.remoteFlag(o.push)
		if err != nil {
			return err
		}
		pub = &publisher{store: w.store, remote: r, settings: rs, stamp: stamp}
		for _, rev := range strings.Split(o.doneBy, ",") {
			if rev = strings.TrimSpace(rev); rev != "" {
				if len(rev) < 7 || strings.Trim(rev, "0123456789abcdef") != "" {
					return usageErr("--done-by %q: want commit hashes (at least 7 hex digits), comma-separated", rev)
				}
				pub.doneBy = append(pub.doneBy, rev)
			}
		}
	}
	p, err := w.plan()
	if err != nil {
		return err
	}
	var cells []*pipeline.PlannedCell
	for _, pc := range p.Cells {
		if cellMatch(o.glob, pc.Cell.ID) && pc.State != pipeline.Stale {
			cells = append(cells, pc)
		}
	}
	if o.sample > 0 {
		from := len(cells)
		cells = sampleCells(cells, o.sample, o.seed)
		ids := make([]string, len(cells))
		for i, pc := range cells {
			ids[i] = pc.Cell.ID
		}
		fmt.Fprintf(e.stdout, "sample of %d (seed %d) from %s: %s\n", len(cells), o.seed, plural(from, "cell"), strings.Join(ids, ", "))
	}
	if pub != nil {
		todo, matched, err := pub.notDone(cells)
		if err != nil {
			return err
		}
		for _, rev := range pub.doneBy {
			if matched[rev] == 0 {
				fmt.Fprintf(e.stderr, "repro verify: --done-by %s: no record in remote %s names a clean build of this commit (a mistyped hash?)\n", rev, o.push)
			}
		}
		if done := len(cells) - len(todo); done > 0 {
			by := stamp.String()
			if len(pub.doneBy) > 0 {
				by += " or " + strings.Join(pub.doneBy, ", ")
			}
			fmt.Fprintf(e.stdout, "%s already recomputed by %s (their records in remote %s say so): skipped\n", plural(done, "cell"), by, o.push)
		}
		cells = todo
	}
	cpu := 0.0
	for _, pc := range cells {
		cpu += pc.Manifest.Provenance.CPUSecs
	}
	fmt.Fprintf(e.stdout, "recomputing %s (%s CPU by their records) with binary %s on %s, %s kernels\n",
		plural(len(cells), "cell"), cpuText(cpu), stamp, kernelpath.CPUModel(), kernelpath.Path())
	if err := w.inputsHere(ctx, e, cells, o.jobs); err != nil {
		return err
	}
	opt := pipeline.ExecOptions{Stages: stages.Stages(), Settings: w.settings, Executor: artifacts.ExecutorRecompute}
	var mu sync.Mutex
	checked, bad, pushed := 0, 0, 0
	err = forEachCell(ctx, cells, o.jobs, func(pc *pipeline.PlannedCell) error {
		var mm []pipeline.Mismatch
		var rec *artifacts.Manifest
		var err error
		t0 := time.Now()
		if pub != nil {
			mm, rec, err = pipeline.Restamp(ctx, w.store, p.Rebound(pc), opt)
		} else {
			mm, err = pipeline.RecomputeRecord(ctx, w.store, p.Rebound(pc), opt)
		}
		if err == nil && rec != nil {
			err = pub.publish(pc, rec)
		}
		mu.Lock()
		defer mu.Unlock()
		if err != nil {
			return err
		}
		checked++
		for _, m := range mm {
			bad++
			fmt.Fprintf(e.stdout, "DIFFERS %s output %s: stored %s, recomputed %s\n", pc.Cell.ID, m.Output, m.Stored.Short(), m.Now.Short())
		}
		switch {
		case rec != nil:
			pushed++
			fmt.Fprintf(e.stdout, "pushed %s: same outputs, recomputed in %s CPU\n", pc.Cell.ID, cpuText(rec.Provenance.CPUSecs))
		case len(mm) == 0:
			fmt.Fprintf(e.stdout, "same    %s (%s)\n", pc.Cell.ID, cpuText(time.Since(t0).Seconds()))
		}
		return nil
	})
	if pub != nil && checked > 0 {
		fmt.Fprintf(e.stdout, "pushed %s naming %s to remote %s\n", plural(pushed, "record"), stamp, o.push)
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(e.stdout, "recomputed %s matching %q: %d differing output(s)\n", plural(checked, "cell"), o.glob, bad)
	if bad > 0 {
		return &exitError{code: 1}
	}
	return nil
}

// forEachCell calls f on every cell, jobs at a time, and returns the first
// error (the cells not started by then are not).
func forEachCell(ctx context.Context, cells []*pipeline.PlannedCell, jobs int, f func(*pipeline.PlannedCell) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan *pipeline.PlannedCell)
	errs := make(chan error, jobs)
	var wg sync.WaitGroup
	for range min(jobs, len(cells)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for pc := range next {
				if err := f(pc); err != nil {
					errs <- err
					cancel()
					return
				}
			}
		}()
	}
feed:
	for _, pc := range cells {
		select {
		case next <- pc:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// publisher stores and pushes the records of verify --recompute --push.
type publisher struct {
	store    *artifacts.Store
	remote   artifacts.Remote
	settings *pipeline.RemoteSettings
	stamp    buildstamp.Stamp
	doneBy   []string // revision prefixes whose clean records count as done
}

// notDone returns the cells whose record in the remote does not already
// name the publisher's build: those left to recompute, the records that
// name no commit (revision unknown, or none in the remote) first, so that an
// interrupted recompute has made the most records name a commit. matched
// counts, for each of doneBy's prefixes, the records it skipped.
func (p *publisher) notDone(cells []*pipeline.PlannedCell) (todo []*pipeline.PlannedCell, matched map[string]int, err error) {
	var named []*pipeline.PlannedCell
	matched = make(map[string]int, len(p.doneBy))
	for _, pc := range cells {
		m, err := p.remote.Manifest(pc.Key)
		switch {
		case err == nil:
			pv := m.Provenance
			if pv.Revision == p.stamp.Revision && pv.Dirty == p.stamp.Dirty && pv.DirtyDiff == p.stamp.Diff {
				continue
			}
			if i := slices.IndexFunc(p.doneBy, func(rev string) bool { return strings.HasPrefix(pv.Revision, rev) }); i >= 0 && !pv.Dirty {
				matched[p.doneBy[i]]++
				continue
			}
			if pv.Revision != "" && pv.Revision != buildstamp.Unknown {
				named = append(named, pc)
				continue
			}
		case !errors.Is(err, artifacts.ErrNotFound) && !errors.Is(err, artifacts.ErrCorrupt):
			return nil, nil, fmt.Errorf("remote %s: %w", p.remote.Name(), err)
		}
		todo = append(todo, pc)
	}
	return append(todo, named...), matched, nil
}

// publish makes rec, the record of a matching recompute of pc, the store's
// and the remote's record of the cell.
func (p *publisher) publish(pc *pipeline.PlannedCell, rec *artifacts.Manifest) error {
	if err := p.store.PutManifest(rec); err != nil {
		return err
	}
	_, wrote, other, err := p.store.PushCell(p.remote, rec, p.settings.KeepsBlobsOf(rec.Stage))
	if err != nil || wrote {
		return err
	}
	if other {
		return fmt.Errorf("%s: remote %s records other outputs for key %s than the record recomputed", pc.Cell.ID, p.remote.Name(), rec.Key.Short())
	}
	_, err = artifacts.RefreshRecord(p.remote, rec)
	return err
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
func (w *workspace) inputsHere(ctx context.Context, e *env, cells []*pipeline.PlannedCell, jobs int) error {
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
	ropt := pipeline.RunOptions{Profile: w.profile, Jobs: jobs, Only: only, Settings: w.settings,
		Executor: &pipeline.LocalExecutor{Store: w.store, Stages: stages.Stages(), Settings: w.settings}}
	if len(w.remotes) > 0 {
		rr, err := pipeline.PrepareRemotes(ctx, w.store, w.graph, w.profile, w.remotes, only, func(c *pipeline.Cell) bool { return need[c] })
		if err != nil {
			return err
		}
		for _, m := range rr.Misses {
			fmt.Fprintf(e.stderr, "remote miss (the cell is computed instead): %s\n", m)
		}
		rr.Use(&ropt)
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
