package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"repro/artifacts"
	"repro/internal/dataset"
	"repro/pipeline"
)

// progress prints one live line: cells done / total, running, failed, ETA.
// On a terminal the line is rewritten in place every 200 ms. Elsewhere (a
// log file, a pipe, make's output captured) it prints no progress line,
// only one line per failure: a count left in a log ("964/1667 cells done")
// is out of date the moment it is written and contradicts the summary
// printed after it, which gives the counts once the run ends.
// Lines are printed on a clock, not on events: a cell's end is followed at
// once by the next cell's start, and a line printed between the two showed
// one running cell fewer than run (under -j 2, "1 running" almost always).
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	quiet    bool
	executor string
	start    time.Time
	ev       pipeline.Event
	ran      int
	fresh    bool // an event since the last line
	lineLen  int
	// cells maps a running cell's key to its own progress (fraction done),
	// costs to its expected CPU seconds (pipeline.Event.Cost).
	cells map[string]float64
	costs map[string]float64
	ids   map[string]string
	stop  chan struct{}
	done  chan struct{}
}

// ttyEvery is how often the terminal's line is rewritten.
const ttyEvery = 200 * time.Millisecond

func newProgress(w io.Writer, quiet bool, executor string) *progress {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return startProgress(w, quiet, executor, tty, ttyEvery)
}

// startProgress starts the line's clock; finish stops it.
func startProgress(w io.Writer, quiet bool, executor string, tty bool, every time.Duration) *progress {
	p := &progress{w: w, quiet: quiet, executor: executor, tty: tty, start: time.Now(),
		cells: map[string]float64{}, costs: map[string]float64{}, ids: map[string]string{}, stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(p.done)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-p.stop:
				return
			case <-t.C:
				p.tick()
			}
		}
	}()
	return p
}

func (p *progress) event(ev pipeline.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ev = ev
	p.fresh = true
	switch ev.Kind {
	case pipeline.EventStart:
		p.costs[ev.Key.String()] = ev.Cost
	case pipeline.EventDone:
		p.ran++
		delete(p.cells, ev.Key.String())
		delete(p.costs, ev.Key.String())
	case pipeline.EventFailed:
		delete(p.cells, ev.Key.String())
		delete(p.costs, ev.Key.String())
		if errors.Is(ev.Err, dataset.ErrAbsent) {
			break // said once, with the cells it blocks, when the run ends
		}
		p.clear()
		fmt.Fprintf(p.w, "FAILED %s: %v\n", ev.Cell.ID, firstLine(ev.Err.Error()))
	case pipeline.EventDamaged:
		p.clear()
		fmt.Fprintf(p.w, "recomputing %s: its stored output is damaged: %v\n", ev.Cell.ID, firstLine(ev.Err.Error()))
	}
}

// tick prints the line if anything happened since the last one.
func (p *progress) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.quiet || !p.tty || !p.fresh || p.ev.Total == 0 {
		return
	}
	p.fresh = false
	p.print()
}

func (p *progress) print() {
	line := p.line()
	if p.tty {
		fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", max(0, p.lineLen-len(line))))
		p.lineLen = len(line)
		return
	}
	fmt.Fprintln(p.w, line)
}

func (p *progress) line() string {
	ev := p.ev
	s := fmt.Sprintf("[%s] %d/%d cells done, %d running, %d failed", p.executor, ev.Done, ev.Total, ev.Running, ev.Failed)
	// The running cell furthest along, with its own progress.
	best, bestKey := -1.0, ""
	for k, f := range p.cells {
		if f > best || f == best && k < bestKey {
			best, bestKey = f, k
		}
	}
	if bestKey != "" {
		s += fmt.Sprintf("; %s %.0f%%", p.ids[bestKey], 100*best)
	}
	if left, ok := p.eta(time.Since(p.start)); ok && ev.Done < ev.Total {
		s += fmt.Sprintf(", ETA %s", left.Round(time.Second))
	}
	return s
}

// eta is the time the run still needs at the throughput seen so far: the
// CPU seconds estimated left over those done per second of this run
// (pipeline.Event.Work*), the running cells counted by their own progress
// where the executor reports it. Counting work rather than cells matters:
// the longest cells start first, so cells per second rises through the
// run. The throughput holds for any executor: local workers or a cluster
// whose real parallelism -j does not tell. Without work figures it falls
// back to cells: the cells left at the rate cells finished.
func (p *progress) eta(elapsed time.Duration) (time.Duration, bool) {
	ev := p.ev
	if elapsed <= 0 {
		return 0, false
	}
	partial := 0.0
	for k, c := range p.costs {
		partial += c * p.cells[k]
	}
	if done := ev.WorkDone + partial; done > 0 && ev.WorkLeft > 0 {
		left := max(ev.WorkLeft-partial, 0)
		return time.Duration(float64(elapsed) * left / done), true
	}
	if p.ran == 0 {
		return 0, false
	}
	return time.Duration(ev.Total-ev.Done) * (elapsed / time.Duration(p.ran)), true
}

func (p *progress) clear() {
	if p.tty && p.lineLen > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.lineLen))
		p.lineLen = 0
	}
}

// finish stops the clock; on a terminal it leaves the last line standing.
func (p *progress) finish() {
	close(p.stop)
	<-p.done
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && !p.quiet && p.ev.Total > 0 {
		p.print()
	}
	if p.tty && p.lineLen > 0 {
		fmt.Fprintln(p.w)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// cell records a running cell's own progress (from the local executor).
func (p *progress) cell(key, id string, done, total int64) {
	if total <= 0 {
		return
	}
	p.mu.Lock()
	p.cells[key] = float64(done) / float64(total)
	p.ids[key] = id
	p.mu.Unlock()
}

// waiting says that a cell waits on another process's lock, and who that
// is: without it a run whose holder hangs looks stuck.
func (p *progress) waiting(id, holder string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	fmt.Fprintf(p.w, "waiting for %s: another process holds its lock (%s); it is taken over when that process dies (on another host: when its heartbeat is %v old)\n",
		id, holder, artifacts.LockStale)
}
