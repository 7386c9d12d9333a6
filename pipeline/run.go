package pipeline

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
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
	// Events, if set, receives progress events (from one goroutine).
	Events func(Event)
	// Remote, if set, is asked for a cell the store lacks before it is
	// computed; a manifest it returns satisfies the cell (RemoteRun.Take).
	Remote func(c *Cell, k artifacts.Key) (*artifacts.Manifest, bool)
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
	Failures                                     []CellFailure
	Wall                                         time.Duration

	// Remote cells were taken from a remote (RunOptions.Remote).
	Remote int
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
	t0 := time.Now()
	want := selectCells(g, opt.Only)
	rep := &RunReport{}
	manifests := make(map[*Cell]*artifacts.Manifest)
	failed := make(map[*Cell]bool)
	waiting := make(map[*Cell]int)
	users := make(map[*Cell][]*Cell)
	var ready []*Cell
	total := 0
	for _, c := range g.Cells {
		if !want[c] {
			continue
		}
		total++
		for _, in := range c.Inputs {
			waiting[c]++
			users[in.Cell] = append(users[in.Cell], c)
		}
		if waiting[c] == 0 {
			ready = append(ready, c)
		}
	}
	runID := RunID(g, opt.Profile)
	jobs := make(chan *Job)
	results := make(chan result)
	cellOf := make(map[string][]*Cell) // key -> cells waiting on it (equal cells share a key)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	for i := 0; i < opt.Jobs; i++ {
		go func() {
			for j := range jobs {
				t := time.Now()
				err := opt.Executor.Execute(ctx, j)
				k := j.Key
				if err == nil {
					// Success means the manifest is in the store, whatever
					// the executor says.
					if _, lerr := st.Lookup(k); lerr != nil {
						err = fmt.Errorf("executor reported success but: %w", lerr)
					}
				}
				results <- result{k, j.Ran, err, time.Since(t)}
			}
		}()
	}
	defer close(jobs)

	running, done := 0, 0
	emit := func(kind EventKind, c *Cell, k artifacts.Key, err error, d time.Duration) {
		if opt.Events != nil {
			opt.Events(Event{Kind: kind, Cell: c, Key: k, Err: err, Wall: d, Done: done, Total: total, Running: running, Failed: rep.Failed + rep.Skipped})
		}
	}
	var skip func(c *Cell)
	skip = func(c *Cell) {
		for _, u := range users[c] {
			if failed[u] {
				continue
			}
			failed[u] = true
			rep.Skipped++
			done++
			err := fmt.Errorf("input %s failed", c.ID)
			rep.Failures = append(rep.Failures, CellFailure{CellID: u.ID, Err: err})
			emit(EventSkipped, u, artifacts.Key{}, err, 0)
			skip(u)
		}
	}
	finish := func(c *Cell, m *artifacts.Manifest) {
		manifests[c] = m
		done++
		for _, u := range users[c] {
			if waiting[u]--; waiting[u] == 0 && !failed[u] {
				ready = append(ready, u)
			}
		}
	}
	queue := new(jobQueue)
	var rank map[*Cell]float64 // computed when the first cell must run
	dispatched := false
	var cpu float64
	defer func() {
		if dispatched {
			recordRun(st, opt, runID, t0, rep, cpu)
		}
	}()
	for done < total {
		// Resolve ready cells: compute keys, take cache hits at once.
		for len(ready) > 0 {
			batch := ready
			ready = nil
			sort.Slice(batch, func(i, j int) bool { return batch[i].ID < batch[j].ID })
			for _, c := range batch {
				k, err := resolveCell(st, c, manifests, opt)
				if err != nil {
					failed[c] = true
					rep.Failed++
					done++
					rep.Failures = append(rep.Failures, CellFailure{CellID: c.ID, Err: err})
					emit(EventFailed, c, k, err, 0)
					skip(c)
					continue
				}
				if m, err := st.Lookup(k); err == nil {
					rep.Cached++
					finish(c, m)
					emit(EventCached, c, k, nil, 0)
					continue
				}
				if opt.Remote != nil {
					if m, ok := opt.Remote(c, k); ok {
						rep.Remote++
						finish(c, m)
						emit(EventRemote, c, k, nil, 0)
						continue
					}
				}
				if waiters, busy := cellOf[k.String()]; busy {
					cellOf[k.String()] = append(waiters, c) // an equal cell is queued or running
					continue
				}
				cellOf[k.String()] = []*Cell{c}
				if rank == nil {
					rank = priorities(g, want, users, loadCostHistory(st))
				}
				queue.push(&Job{Key: k, CellID: c.ID, StoreDir: st.Root(), LogPath: st.LogPath(k), RunID: runID}, rank[c])
			}
		}
		if done >= total {
			break
		}
		var send chan *Job
		var next *Job
		if queue.Len() > 0 && running < opt.Jobs {
			send, next = jobs, queue.peek()
		}
		if send == nil && running == 0 {
			return rep, fmt.Errorf("scheduler stalled with %d of %d cells done", done, total)
		}
		select {
		case send <- next:
			queue.pop()
			running++
			dispatched = true
			emit(EventStart, cellOf[next.Key.String()][0], artifacts.Key{}, nil, 0)
		case r := <-results:
			running--
			rep.Busy += r.dur
			cs := cellOf[r.key.String()]
			delete(cellOf, r.key.String())
			if r.err != nil && ctx.Err() != nil {
				rep.Wall = time.Since(t0)
				return rep, ctx.Err()
			}
			var m *artifacts.Manifest
			if r.err == nil {
				m, _ = st.Lookup(r.key)
				if r.ran {
					rep.Executed++
					if m != nil {
						cpu += m.Provenance.CPUSecs
					}
				} else {
					rep.Elsewhere++
				}
			}
			for _, c := range cs {
				if r.err != nil {
					failed[c] = true
					rep.Failed++
					done++
					rep.Failures = append(rep.Failures, CellFailure{CellID: c.ID, Key: r.key, Err: r.err})
					emit(EventFailed, c, r.key, r.err, r.dur)
					skip(c)
					continue
				}
				finish(c, m)
				emit(EventDone, c, r.key, nil, r.dur)
			}
		case <-ctx.Done():
			// Wait for the workers to return, so that executors can clean up
			// (scancel) before the process exits.
			for running > 0 {
				r := <-results
				running--
				rep.Busy += r.dur
			}
			rep.Wall = time.Since(t0)
			return rep, ctx.Err()
		}
	}
	rep.Wall = time.Since(t0)
	return rep, nil
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
