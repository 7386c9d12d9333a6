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

// poll is the Executor's poller: while jobs are being waited on, it asks
// Slurm about all of them at each tick and hands terminal states to their
// waiters. It exits when nobody waits; wait starts it again.
func (e *Executor) poll() {
	b := newBackoff(e.opts.PollMin, e.opts.PollMax)
	d := b.next()
	due := time.Now().Add(d)
	timer := time.NewTimer(d)
	defer timer.Stop()
	var failingSince time.Time
	for {
		select {
		case <-timer.C:
		case <-e.kick:
			// A job was just submitted or adopted: look soon, but never
			// later than already planned (so a stream of kicks cannot
			// starve the poll).
			b.reset()
			if soon := time.Now().Add(e.opts.PollMin); soon.Before(due) {
				due = soon
				timer.Reset(time.Until(due))
			}
			continue
		}
		e.mu.Lock()
		ids := make([]string, 0, len(e.waiters))
		for id := range e.waiters {
			ids = append(ids, id)
		}
		if len(ids) == 0 {
			e.polling = false
			e.mu.Unlock()
			return
		}
		e.mu.Unlock()
		sort.Slice(ids, func(i, j int) bool { return lessID(ids[i], ids[j]) })

		final, err := e.query(context.Background(), ids)
		e.mu.Lock()
		for id, st := range final {
			w, ok := e.waiters[id]
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
			delete(e.waiters, id)
			w.done <- result{st: st}
		}
		if err == nil {
			failingSince = time.Time{}
		} else if failingSince.IsZero() {
			failingSince = time.Now()
		} else if time.Since(failingSince) > e.opts.ControllerGrace {
			for id, w := range e.waiters {
				delete(e.waiters, id)
				w.done <- result{err: fmt.Errorf("slurm: no answer for %s: %w", e.opts.ControllerGrace, err)}
			}
		}
		e.mu.Unlock()
		d = b.next()
		due = time.Now().Add(d)
		timer.Reset(d)
	}
}

// query asks Slurm about ids and returns the terminal status of those that
// ended (StateUnknown for those no source knows). squeue says which jobs
// still live, in one call per queryChunk IDs; the ended ones are asked to
// sacct (one call), or, without accounting, to scontrol (one call per
// ended job, so once in each job's life). An error means squeue failed:
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
	for _, id := range ids {
		if st, ok := queue[id]; !ok || st.State.Terminal() {
			ended = append(ended, id)
		}
	}
	final := make(map[string]status, len(ended))
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
