package slurm

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"
)

// queryChunk bounds the job IDs per squeue/sacct call, keeping argv short.
const queryChunk = 200

// missLimit is how many consecutive polls a job may be unknown to squeue,
// sacct and scontrol before it is declared StateUnknown (one miss could be
// a controller that just restarted).
const missLimit = 2

// probeMin is the first interval between store probes for a new job. A
// probe is one Options.Check (a stat of the manifest's path while it is
// missing), which costs the controller nothing, so the store is probed more
// often than squeue is asked: the interval grows by half from probeMin to
// a cap of probeFloor, or probeBudget per waiting job when that is more, so
// that probes never exceed 200 stats per second in all (1,000 jobs in
// flight: each probed every 5 s). Measured on the loopback cluster, 8
// synthetic cells sleeping 2 s, -j 4: 7.9 s with probes backing off to 3 s
// like squeue, 6.4 s with a 1 s cap (local executor: 4.4 s; Slurm itself
// starts a job 0.4-0.9 s after sbatch).
const (
	probeMin    = 50 * time.Millisecond
	probeFloor  = 200 * time.Millisecond
	probeBudget = 5 * time.Millisecond
)

// poll is the Executor's poller: while jobs are being waited on, it probes
// the store for their manifests (when Options.Check is set) and asks Slurm
// about all of them in one squeue per tick, and hands final states to their
// waiters. It exits when nobody waits; wait starts it again.
func (e *Executor) poll() {
	b := newBackoff(e.opts.PollMin, e.opts.PollMax)
	sqDue := time.Now().Add(b.next())
	timer := time.NewTimer(time.Until(sqDue))
	defer timer.Stop()
	var failingSince time.Time
	for {
		select {
		case <-timer.C:
		case <-e.kick:
			// A job was just submitted or adopted: ask squeue soon, but
			// never later than already planned (so a stream of kicks
			// cannot starve the poll).
			b.reset()
			if soon := time.Now().Add(e.opts.PollMin); soon.Before(sqDue) {
				sqDue = soon
			}
		}
		e.mu.Lock()
		if len(e.waiters) == 0 {
			e.polling = false
			e.mu.Unlock()
			return
		}
		now := time.Now()
		ids := e.jobIDs()
		var probes []*waiter
		for _, w := range e.waiters {
			if e.opts.Check != nil && !now.Before(w.probeAt) {
				probes = append(probes, w)
			}
		}
		e.mu.Unlock()

		if e.probe(probes) > 0 {
			e.mu.Lock()
			ids = e.jobIDs()
			e.mu.Unlock()
		}
		if !now.Before(sqDue) && len(ids) > 0 {
			sort.Slice(ids, func(i, j int) bool { return lessID(ids[i], ids[j]) })
			final, err := e.query(context.Background(), ids)
			e.deliver(final)
			switch {
			case err == nil:
				failingSince = time.Time{}
			case failingSince.IsZero():
				failingSince = time.Now()
			case time.Since(failingSince) > e.opts.ControllerGrace:
				e.failAll(fmt.Errorf("slurm: no answer for %s: %w", e.opts.ControllerGrace, err))
			}
			sqDue = time.Now().Add(b.next())
		}

		next := sqDue
		e.mu.Lock()
		for _, w := range e.waiters {
			if e.opts.Check != nil && w.probeAt.Before(next) {
				next = w.probeAt
			}
		}
		e.mu.Unlock()
		timer.Reset(time.Until(next))
	}
}

// jobIDs lists the Slurm jobs waited on, each once (the cells of a batch
// share one). e.mu is held.
func (e *Executor) jobIDs() []string {
	seen := make(map[string]bool, len(e.waiters))
	var ids []string
	for _, w := range e.waiters {
		if !seen[w.id] {
			seen[w.id] = true
			ids = append(ids, w.id)
		}
	}
	return ids
}

// probe asks the store whether the probed waiters' cells are done; a cell
// whose manifest is there has succeeded, whatever state its job is in (it
// may still be COMPLETING, or still running the next cells of its batch).
// It returns how many cells it found done.
func (e *Executor) probe(ws []*waiter) int {
	var done []*waiter
	for _, w := range ws {
		if ok, _ := e.opts.Check(context.Background(), w.job); ok {
			done = append(done, w)
		}
	}
	now := time.Now()
	e.mu.Lock()
	limit := max(probeFloor, time.Duration(len(e.waiters))*probeBudget)
	for _, w := range ws {
		w.probeEvery = min(w.probeEvery+w.probeEvery/2, limit)
		w.probeAt = now.Add(w.probeEvery)
	}
	for _, w := range done {
		if e.waiters[w.slot()] == w {
			delete(e.waiters, w.slot())
			w.done <- result{st: status{State: StateCompleted, Source: "store"}}
		}
	}
	e.mu.Unlock()
	return len(done)
}

// deliver hands final states, by job ID, to the waiters of those jobs.
// StateUnknown is delivered only after missLimit consecutive polls said so.
func (e *Executor) deliver(final map[string]status) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for slot, w := range e.waiters {
		st, ok := final[w.id]
		if !ok {
			continue
		}
		if st.State == StateUnknown {
			if w.misses++; w.misses < missLimit {
				continue
			}
		} else {
			w.misses = 0
		}
		delete(e.waiters, slot)
		w.done <- result{st: st}
	}
}

// failAll ends every wait with err.
func (e *Executor) failAll(err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for slot, w := range e.waiters {
		delete(e.waiters, slot)
		w.done <- result{err: err}
	}
}

// query asks Slurm about ids and returns the terminal status of those that
// ended (StateUnknown for those no source knows). squeue says which jobs
// still live, in one call per queryChunk IDs, and which COMPLETED; the
// others that ended are asked to sacct (one call) for their exit code, or,
// without accounting, to scontrol (one call per such job, once in its
// life). An error means squeue failed:
// nothing is known about the jobs this tick.
func (e *Executor) query(ctx context.Context, ids []string) (map[string]status, error) {
	queue := make(map[string]status, len(ids))
	for start := 0; start < len(ids); start += queryChunk {
		chunk := ids[start:min(start+queryChunk, len(ids))]
		out, stderr, err := e.command(ctx, "squeue", "-h", "-t", "all", "-o", squeueFormat, "-j", strings.Join(chunk, ","))
		if err != nil && !invalidJobID(stderr) {
			return nil, fmt.Errorf("squeue: %w", err)
		}
		m, err := parseSqueue(out)
		if err != nil {
			return nil, err
		}
		for id, st := range m {
			queue[id] = st
		}
	}
	var ended []string
	final := make(map[string]status)
	for _, id := range ids {
		st, ok := queue[id]
		switch {
		case ok && st.State == StateCompleted:
			// Nothing more to learn from sacct or scontrol: conclude
			// checks the store, which alone decides success.
			final[id] = st
		case !ok || st.State.Terminal():
			ended = append(ended, id)
		}
	}
	if len(ended) == 0 {
		return final, nil
	}

	e.mu.Lock()
	acctOff := e.acctOff
	e.mu.Unlock()
	if !acctOff {
		out, stderr, err := e.command(ctx, "sacct", "-n", "-P", "-X", "-o", sacctFormat, "-j", strings.Join(ended, ","))
		switch {
		case accountingDisabled(stderr):
			e.mu.Lock()
			e.acctOff = true
			e.mu.Unlock()
		case err == nil:
			if m, perr := parseSacct(out); perr == nil {
				for _, id := range ended {
					// sacct may lag behind the controller: a job it
					// still thinks RUNNING is asked elsewhere.
					if st, ok := m[id]; ok && st.State.Terminal() {
						final[id] = st
					}
				}
			}
		}
		// sacct failing otherwise (slurmdbd down) is not fatal: scontrol
		// and the queue still know recently ended jobs.
	}
	for _, id := range ended {
		if _, ok := final[id]; ok {
			continue
		}
		out, stderr, err := e.command(ctx, "scontrol", "show", "job", "-o", id)
		if err == nil || invalidJobID(stderr) {
			if st, ok, perr := parseScontrol(out, id); perr == nil && ok {
				if st.State.Terminal() {
					final[id] = st
				}
				continue // live after all: next tick
			}
		}
		if st, ok := queue[id]; ok {
			final[id] = st
			continue
		}
		final[id] = status{State: StateUnknown, Source: "none"}
	}
	return final, nil
}
