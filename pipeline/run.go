package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"runtime/debug"
	"sort"
	"strings"
	"time"

	"repro/artifacts"
)

// RunOptions configure Run.
type RunOptions struct {
	Profile  string
	Jobs     int // concurrent cells (>= 1)
	Executor Executor
	// Settings are host-local settings recorded in specs (not in keys).
	Settings map[string]string
	// Only, if set, restricts the run to the cells it accepts and the cells
	// they need.
	Only func(*Cell) bool
	// LazyCheckAbove is the output size (uncompressed bytes) above which a
	// cached output that cells of the run read is re-hashed only when one
	// of them is about to run, not whenever the run meets it; 0 means
	// DefaultLazyCheckAbove. See scheduler.resolve.
	LazyCheckAbove int64
	// Events, if set, receives progress events (from one goroutine).
	Events func(Event)
	// Remote, if set, is asked for a cell the store lacks before it is
	// computed; a manifest it returns satisfies the cell (RemoteRun.Take).
	Remote func(c *Cell, k artifacts.Key) (*artifacts.Manifest, bool)
	// Held, if set, says which cells the plan expects the store or a
	// remote to hold: the ETA counts no work for them before the run
	// meets them (RemoteRun.Held).
	Held func(*Cell) bool
	// History are remotes whose records' CPU times, with the store's,
	// give the cells' expected costs, and so the order they start in
	// (see the scheduler). Only the order: a cell's result never comes
	// from them unless Remote says so.
	History []artifacts.Remote
}

// EventKind says what happened to a cell.
type EventKind int

// The events of a run.
const (
	EventStart EventKind = iota
	EventDone
	EventCached
	EventFailed
	EventSkipped
	EventRemote // satisfied from a remote
	// EventDamaged: the cell's record is in the store but an output does
	// not hash to its digest (Err says which); the blob is moved aside and
	// the cell is computed again in this run.
	EventDamaged
)

// Event is a progress event.
type Event struct {
	Kind EventKind
	Cell *Cell
	Key  artifacts.Key
	Err  error
	Wall time.Duration
	// Totals after this event.
	Done, Total, Running, Failed int
	// The run's work in CPU seconds: WorkDone is what the cells it computed
	// took (their records), WorkLeft an estimate of what the cells it has
	// yet to finish will take (queued, running or waiting on inputs; one
	// found cached takes nothing), and Cost the estimate for this event's
	// cell; see workTracker. All are 0 until the first cell must be
	// computed. WorkDone per second of the run is its throughput, whatever
	// the executor, so WorkLeft over it is an ETA, which longest-first
	// order does not skew as a count of cells would.
	WorkDone, WorkLeft, Cost float64
}

// CellFailure is a cell that failed (or was skipped because an input failed).
type CellFailure struct {
	CellID string
	Key    artifacts.Key
	Err    error
}

// RunReport summarises a run.
type RunReport struct {
	// Executed cells were computed by this run; Elsewhere cells were
	// computed meanwhile by another process sharing the store.
	Executed, Elsewhere, Cached, Failed, Skipped int
	// Damaged counts cells whose stored output did not hash to its digest
	// and which the run therefore computed again (EventDamaged).
	Damaged  int
	Failures []CellFailure
	Wall     time.Duration

	// Remote cells were taken from a remote (RunOptions.Remote).
	Remote int
	// Stopped and Left are set when the run was interrupted (its context
	// cancelled): the cells running then, whose work is lost unless they
	// finished meanwhile, and the cells wanted but not yet done, failed or
	// skipped (Stopped included). A rerun resumes with them.
	Stopped, Left int
	// Busy sums the wall time of every job from dispatch to result: Wall x
	// Jobs - Busy is the capacity the run left idle.
	Busy time.Duration
}

// Err is non-nil when any cell failed or was skipped; it lists them.
func (r *RunReport) Err() error {
	if len(r.Failures) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d cell(s) failed, %d skipped:", r.Failed, r.Skipped)
	for i, f := range r.Failures {
		if i == 20 {
			fmt.Fprintf(&b, "\n  ... and %d more", len(r.Failures)-20)
			break
		}
		fmt.Fprintf(&b, "\n  %s: %v", f.CellID, f.Err)
	}
	return errors.New(b.String())
}

// RunID names a run of a graph under a profile: the hash of the cell IDs.
// It is stable across restarts of the same plan (so a Slurm executor can
// find the jobs a dead driver submitted).
func RunID(g *Graph, profile string) string {
	h := sha256.New()
	h.Write([]byte(profile))
	for _, c := range g.Cells {
		h.Write([]byte{0})
		h.Write([]byte(c.ID))
	}
	return hex.EncodeToString(h.Sum(nil))[:8]
}

// result is what a worker reports for one job.
type result struct {
	key artifacts.Key
	ran bool
	err error
	dur time.Duration
}

// Run computes every cell of g that is not cached, on opt.Jobs workers
// through opt.Executor. A failed cell records its error, caches nothing and
// blocks only the cells that depend on it; the others go on. The run ends
// when nothing more can run; the report's Err lists failures.
func Run(ctx context.Context, st *artifacts.Store, g *Graph, opt RunOptions) (*RunReport, error) {
	if opt.Jobs < 1 {
		opt.Jobs = 1
	}
	s := newScheduler(st, g, opt)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	s.startWorkers(ctx)
	defer close(s.jobs)
	defer func() {
		if s.dispatched {
			recordRun(st, opt, s.runID, s.t0, s.rep, s.cpu)
		}
	}()
	err := s.loop(ctx)
	s.rep.Wall = time.Since(s.t0)
	return s.rep, err
}

// scheduler is the state of one Run: which cells wait on how many inputs,
// which are ready, queued or running, and what the report says so far. It
// lives on Run's goroutine; only the workers run elsewhere, talking to it
// over jobs and results.
type scheduler struct {
	st    *artifacts.Store
	g     *Graph
	opt   RunOptions
	runID string
	t0    time.Time
	rep   *RunReport

	want      map[*Cell]bool // the cells this run covers (selectCells)
	manifests map[*Cell]*artifacts.Manifest
	failed    map[*Cell]bool            // failed, or skipped for a failed input
	waiting   map[*Cell]int             // inputs not finished yet
	users     map[*Cell][]*Cell         // the cells reading each cell
	ready     []*Cell                   // inputs finished, key not resolved yet
	cellOf    map[artifacts.Key][]*Cell // queued or running key -> the cells waiting on it (equal cells share a key)
	// Verify on read (repairInputs): cached cells whose outputs no one has
	// re-hashed yet; the repair jobs of damaged ones, by key, with the
	// cells waiting on each and the cell each recomputes; and how many
	// repairs each waiting cell needs.
	unverified map[*Cell]bool
	repairs    map[artifacts.Key][]*Cell
	repairOf   map[artifacts.Key]*Cell
	repairing  map[*Cell]int
	queue      *jobQueue         // resolved cells to run, longest path first
	rank       map[*Cell]float64 // queue priorities, computed when the first cell must run
	work       *workTracker      // the CPU seconds done and left (Event), made with rank

	total, done, running int
	dispatched           bool    // a job was sent: the run is recorded
	cpu                  float64 // CPU seconds of the cells this run computed

	jobs    chan *Job
	results chan result
}

func newScheduler(st *artifacts.Store, g *Graph, opt RunOptions) *scheduler {
	s := &scheduler{
		st: st, g: g, opt: opt, runID: RunID(g, opt.Profile), t0: time.Now(), rep: &RunReport{},
		want:       selectCells(g, opt.Only),
		manifests:  make(map[*Cell]*artifacts.Manifest),
		failed:     make(map[*Cell]bool),
		waiting:    make(map[*Cell]int),
		users:      make(map[*Cell][]*Cell),
		cellOf:     make(map[artifacts.Key][]*Cell),
		unverified: make(map[*Cell]bool),
		repairs:    make(map[artifacts.Key][]*Cell),
		repairOf:   make(map[artifacts.Key]*Cell),
		repairing:  make(map[*Cell]int),
		queue:      new(jobQueue),
		jobs:       make(chan *Job),
		results:    make(chan result),
	}
	for _, c := range g.Cells {
		if !s.want[c] {
			continue
		}
		s.total++
		for _, in := range c.Inputs {
			s.waiting[c]++
			s.users[in.Cell] = append(s.users[in.Cell], c)
		}
		if s.waiting[c] == 0 {
			s.ready = append(s.ready, c)
		}
	}
	return s
}

// startWorkers starts opt.Jobs workers, each executing one job at a time
// until jobs is closed.
func (s *scheduler) startWorkers(ctx context.Context) {
	for i := 0; i < s.opt.Jobs; i++ {
		go func() {
			for j := range s.jobs {
				t := time.Now()
				err := s.execute(ctx, j)
				if err == nil {
					// Success means the manifest is in the store, whatever
					// the executor says.
					if _, lerr := s.st.Lookup(j.Key); lerr != nil {
						err = fmt.Errorf("executor reported success but: %w", lerr)
					}
				}
				s.results <- result{j.Key, j.Ran, err, time.Since(t)}
			}
		}()
	}
}

// execute runs one job; a panic outside a stage (the stage's own is caught
// by runStage) fails that job alone: its deferred unlocks have run.
func (s *scheduler) execute(ctx context.Context, j *Job) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("cell %s: %w", j.CellID, &PanicError{Value: r, Stack: debug.Stack()})
		}
	}()
	return s.opt.Executor.Execute(ctx, j)
}

// loop resolves ready cells, dispatches queued jobs and collects results
// until every wanted cell is done, failed or skipped, or ctx is cancelled.
func (s *scheduler) loop(ctx context.Context) error {
	for s.done < s.total {
		s.resolveReady()
		if s.done >= s.total {
			break
		}
		var send chan *Job
		var next *Job
		if s.queue.Len() > 0 && s.running < s.opt.Jobs {
			send, next = s.jobs, s.queue.peek()
		}
		if send == nil && s.running == 0 {
			return fmt.Errorf("scheduler stalled with %d of %d cells done", s.done, s.total)
		}
		select {
		case send <- next:
			s.queue.pop()
			s.running++
			s.dispatched = true
			s.emit(EventStart, s.jobCell(next.Key), artifacts.Key{}, nil, 0)
		case r := <-s.results:
			s.running--
			s.rep.Busy += r.dur
			if r.err != nil && ctx.Err() != nil {
				s.running++ // counted among the cells it stopped
				return s.interrupted(ctx)
			}
			s.collect(r)
		case <-ctx.Done():
			return s.interrupted(ctx)
		}
	}
	return nil
}

// interrupted ends a cancelled run: it counts what stopped and what is
// left, and waits for the workers to return, so that executors clean up
// (scancel) and release their cells' locks before the process exits.
func (s *scheduler) interrupted(ctx context.Context) error {
	s.rep.Stopped = s.running
	s.rep.Left = s.total - s.done
	for s.running > 0 {
		r := <-s.results
		s.running--
		s.rep.Busy += r.dur
	}
	return ctx.Err()
}

// resolveReady computes the keys of the ready cells (in ID order), takes
// cache and remote hits at once and queues the rest; finishing a hit may
// make more cells ready, which this handles too.
func (s *scheduler) resolveReady() {
	for len(s.ready) > 0 {
		batch := s.ready
		s.ready = nil
		sort.Slice(batch, func(i, j int) bool { return batch[i].ID < batch[j].ID })
		for _, c := range batch {
			s.resolve(c)
		}
	}
}

// resolve handles one ready cell: a key it cannot resolve fails it, a
// stored or remote manifest finishes it, an equal cell queued or running
// takes it along, and otherwise it is queued.
func (s *scheduler) resolve(c *Cell) {
	k, err := resolveCell(s.st, c, s.manifests, s.opt)
	if err != nil {
		s.fail(c, k, err, 0)
		return
	}
	// Verify on read: a cached output is re-hashed before the run counts
	// it, so a damaged one is never served; the cell is computed again
	// here, before any consumer resolves. One exception keeps a no-op run
	// cheap: an output above LazyCheckAbove (a data set, features) that a
	// cell of the run reads is re-hashed only when such a cell is about to
	// run (repairInputs); while every reader is cached nothing reads it.
	m, err := s.st.Lookup(k)
	lazy := false
	if err == nil {
		lazy, err = s.checkOutputs(m, len(s.users[c]) == 0)
	}
	if err == nil {
		if lazy {
			s.unverified[c] = true
		}
		s.rep.Cached++
		s.settle(c, false, 0)
		s.finish(c, m)
		s.emit(EventCached, c, k, nil, 0)
		return
	}
	if errors.Is(err, artifacts.ErrStuck) {
		// It cannot be recomputed while the damaged blob keeps its name:
		// a failure with the cause and its remedy, never a false success.
		s.fail(c, k, stuckError(s.st, err), 0)
		return
	}
	if errors.Is(err, artifacts.ErrCorrupt) {
		s.rep.Damaged++
		s.emit(EventDamaged, c, k, err, 0)
	}
	if s.opt.Remote != nil {
		if m, ok := s.opt.Remote(c, k); ok {
			s.rep.Remote++
			s.settle(c, false, 0)
			s.finish(c, m)
			s.emit(EventRemote, c, k, nil, 0)
			return
		}
	}
	if waiters, busy := s.cellOf[k]; busy {
		s.cellOf[k] = append(waiters, c) // an equal cell is queued or running
		return
	}
	if s.rank == nil {
		cost, shape := expectedCosts(s.want, loadHistory(s.st, s.opt.History, s.g.Stages))
		s.rank = rankCells(s.g.Cells, s.want, s.users, func(c *Cell) float64 { return cost[c] })
		pending := map[*Cell]bool{}
		for c := range s.want {
			if s.manifests[c] == nil && !s.failed[c] && (s.opt.Held == nil || !s.opt.Held(c)) {
				pending[c] = true
			}
		}
		s.work = newWorkTracker(cost, shape, pending)
	}
	if s.repairInputs(c) {
		return // c is resolved again once its inputs are recomputed
	}
	s.cellOf[k] = []*Cell{c}
	s.queue.push(&Job{Key: k, CellID: c.ID, StoreDir: s.st.Root(), LogPath: s.st.LogPath(k), RunID: s.runID}, s.rank[c])
}

// stuckError is the failure of a cell whose stored output is damaged and
// could not be moved aside (err wraps artifacts.ErrStuck), with the remedy.
func stuckError(st *artifacts.Store, err error) error {
	return fmt.Errorf("its stored output is damaged and stays in place, so it cannot be recomputed: %w; %s", err, st.StuckAdvice())
}

// DefaultLazyCheckAbove is RunOptions.LazyCheckAbove's default: 16 MiB,
// which re-hashes in about 0.05 s (zstd decoding and SHA-256 at ~300 MB/s).
// Results, records and trained networks (1.6 MB for a 784x512 layer) are
// below it; prepared data sets and features (hundreds of MB) above.
const DefaultLazyCheckAbove = 16 << 20

// checkOutputs re-hashes the outputs of a stored cell (CheckBlob moves a
// damaged one aside): all of them, or with all false only those up to
// LazyCheckAbove, reporting whether it left any.
func (s *scheduler) checkOutputs(m *artifacts.Manifest, all bool) (lazy bool, err error) {
	limit := s.opt.LazyCheckAbove
	if limit <= 0 {
		limit = DefaultLazyCheckAbove
	}
	for _, o := range m.Outputs {
		if !all && o.Size > limit {
			lazy = true
			continue
		}
		if err := s.st.CheckBlob(o.Digest); err != nil {
			return lazy, fmt.Errorf("cell %s: output %s: %w", m.CellID, o.Name, err)
		}
	}
	return lazy, nil
}

// repairInputs re-hashes the large outputs (LazyCheckAbove) of the cached
// cells c reads, before c runs. A damaged (or meanwhile deleted) one is moved aside and its
// producer queued again under its key, as a repair; c waits for every
// repair it needs and is then resolved again (its key stands: the producer
// is deterministic, and if it is not, c's new key says so). It reports
// whether c must wait.
func (s *scheduler) repairInputs(c *Cell) bool {
	for _, in := range c.Inputs {
		p := in.Cell
		if !s.unverified[p] {
			continue
		}
		m := s.manifests[p]
		_, err := s.checkOutputs(m, true)
		if err == nil {
			delete(s.unverified, p)
			continue
		}
		if errors.Is(err, artifacts.ErrStuck) {
			s.fail(c, artifacts.Key{}, fmt.Errorf("input %s: %w", p.ID, stuckError(s.st, err)), 0)
			return true
		}
		if waiters, queued := s.repairs[m.Key]; queued {
			s.repairs[m.Key] = append(waiters, c)
			s.repairing[c]++
			continue
		}
		s.rep.Damaged++
		s.emit(EventDamaged, p, m.Key, err, 0)
		s.repairs[m.Key] = []*Cell{c}
		s.repairOf[m.Key] = p
		s.repairing[c]++
		s.queue.push(&Job{Key: m.Key, CellID: p.ID, StoreDir: s.st.Root(), LogPath: s.st.LogPath(m.Key), RunID: s.runID}, s.rank[p]+s.rank[c])
	}
	return s.repairing[c] > 0
}

// collectRepair takes the result of a repair job (repairInputs): the cells
// waiting on it are resolved again, or fail with it.
func (s *scheduler) collectRepair(r result, p *Cell) {
	waiters := s.repairs[r.key]
	delete(s.repairs, r.key)
	delete(s.repairOf, r.key)
	delete(s.unverified, p)
	if r.err == nil {
		// Its consumers' keys are made from the new record (the same
		// outputs, unless the stage is not deterministic).
		if m, err := s.st.Lookup(r.key); err == nil {
			s.manifests[p] = m
		}
		s.rep.Cached-- // counted cached when resolved; computed after all
		if r.ran {
			s.rep.Executed++
		} else {
			s.rep.Elsewhere++
		}
		s.emit(EventDone, p, r.key, nil, r.dur)
	}
	for _, c := range waiters {
		if s.failed[c] {
			continue
		}
		if r.err != nil {
			s.fail(c, artifacts.Key{}, fmt.Errorf("input %s: recomputing its damaged output: %w", p.ID, r.err), 0)
			continue
		}
		if s.repairing[c]--; s.repairing[c] == 0 {
			delete(s.repairing, c)
			s.ready = append(s.ready, c)
		}
	}
}

// jobCell is the cell a queued or running job computes.
func (s *scheduler) jobCell(k artifacts.Key) *Cell {
	if p, ok := s.repairOf[k]; ok {
		return p
	}
	return s.cellOf[k][0]
}

// collect takes a finished job's result for every cell waiting on its key.
func (s *scheduler) collect(r result) {
	if p, ok := s.repairOf[r.key]; ok {
		s.collectRepair(r, p)
		return
	}
	cs := s.cellOf[r.key]
	delete(s.cellOf, r.key)
	var m *artifacts.Manifest
	if r.err == nil {
		m, _ = s.st.Lookup(r.key)
		if r.ran {
			s.rep.Executed++
			if m != nil {
				s.cpu += m.Provenance.CPUSecs
			}
		} else {
			s.rep.Elsewhere++
		}
	}
	for _, c := range cs {
		if r.err != nil {
			s.fail(c, r.key, r.err, r.dur)
			continue
		}
		cpu := 0.0
		if m != nil {
			cpu = m.Provenance.CPUSecs
		}
		s.settle(c, true, cpu)
		s.finish(c, m)
		s.emit(EventDone, c, r.key, nil, r.dur)
	}
}

// emit sends a progress event with the run's totals, if anyone listens.
func (s *scheduler) emit(kind EventKind, c *Cell, k artifacts.Key, err error, d time.Duration) {
	if s.opt.Events != nil {
		ev := Event{Kind: kind, Cell: c, Key: k, Err: err, Wall: d,
			Done: s.done, Total: s.total, Running: s.running, Failed: s.rep.Failed + s.rep.Skipped}
		if s.work != nil {
			ev.WorkDone, ev.WorkLeft, ev.Cost = s.work.cpu, s.work.workLeft(), s.work.estimate(c)
		}
		s.opt.Events(ev)
	}
}

// settle takes c off the work left, adding cpu to the work done when the
// run computed it, once the costs are known.
func (s *scheduler) settle(c *Cell, computed bool, cpu float64) {
	if s.work != nil {
		s.work.finish(c, computed, cpu)
	}
}

// fail records that c failed with err and skips everything downstream.
func (s *scheduler) fail(c *Cell, k artifacts.Key, err error, d time.Duration) {
	s.settle(c, false, 0)
	s.failed[c] = true
	s.rep.Failed++
	s.done++
	s.rep.Failures = append(s.rep.Failures, CellFailure{CellID: c.ID, Key: k, Err: err})
	s.emit(EventFailed, c, k, err, d)
	s.skip(c)
}

// skip marks every cell reading c (recursively) as skipped.
func (s *scheduler) skip(c *Cell) {
	for _, u := range s.users[c] {
		if s.failed[u] {
			continue
		}
		s.settle(u, false, 0)
		s.failed[u] = true
		s.rep.Skipped++
		s.done++
		err := fmt.Errorf("input %s failed", c.ID)
		s.rep.Failures = append(s.rep.Failures, CellFailure{CellID: u.ID, Err: err})
		s.emit(EventSkipped, u, artifacts.Key{}, err, 0)
		s.skip(u)
	}
}

// finish records c's manifest and readies the users whose last input it was.
func (s *scheduler) finish(c *Cell, m *artifacts.Manifest) {
	s.manifests[c] = m
	s.done++
	for _, u := range s.users[c] {
		if s.waiting[u]--; s.waiting[u] == 0 && !s.failed[u] {
			s.ready = append(s.ready, u)
		}
	}
}

// resolveCell computes c's key from its inputs' manifests, stores its spec
// (so any process can run it) and records the key under the cell's ref.
func resolveCell(st *artifacts.Store, c *Cell, manifests map[*Cell]*artifacts.Manifest, opt RunOptions) (artifacts.Key, error) {
	params, err := EncodeParams(c.Stage.Name, c.Params)
	if err != nil {
		return artifacts.Key{}, err
	}
	desc, ok := cellKeyDesc(c, params, func(up *Cell) *artifacts.Manifest { return manifests[up] })
	if !ok {
		return artifacts.Key{}, fmt.Errorf("cell %s: an input has no manifest", c.ID)
	}
	var specIn []artifacts.SpecInput
	for _, in := range c.Inputs {
		specIn = append(specIn, artifacts.SpecInput{Name: in.Name, CellID: in.Cell.ID, Key: manifests[in.Cell].Key})
	}
	version := desc.Version
	k := desc.Key()
	if prev, err := st.GetRef(opt.Profile, c.ID); err != nil || prev != k {
		if err := st.PutRef(opt.Profile, c.ID, k); err != nil {
			return k, err
		}
	}
	if !st.HasSpec(k) {
		sp := &artifacts.Spec{Key: k, CellID: c.ID, Stage: c.Stage.Name, StageVersion: version,
			Params: ParamsText(params), Inputs: specIn, Settings: opt.Settings}
		if err := st.PutSpec(sp); err != nil {
			return k, err
		}
	}
	return k, nil
}

// selectCells returns the cells accepted by only plus everything they need
// (all cells when only is nil).
func selectCells(g *Graph, only func(*Cell) bool) map[*Cell]bool {
	want := make(map[*Cell]bool, len(g.Cells))
	for i := len(g.Cells) - 1; i >= 0; i-- { // reverse topological
		c := g.Cells[i]
		if only == nil || only(c) || want[c] {
			want[c] = true
			for _, in := range c.Inputs {
				want[in.Cell] = true
			}
		}
	}
	return want
}
