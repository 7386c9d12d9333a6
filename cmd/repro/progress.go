package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"repro/pipeline"
)

// progress prints one live line: cells done / total, running, failed, ETA.
// On a terminal the line is rewritten in place; otherwise a line is printed
// at most every 10 s, plus one per failure.
type progress struct {
	mu       sync.Mutex
	w        io.Writer
	tty      bool
	quiet    bool
	executor string
	start    time.Time
	last     time.Time
	ev       pipeline.Event
	ran      int
	lineLen  int
	// cells maps a running cell's key to its own progress (fraction done).
	cells map[string]float64
	ids   map[string]string
}

func newProgress(w io.Writer, quiet bool, executor string) *progress {
	now := time.Now()
	p := &progress{w: w, quiet: quiet, executor: executor, start: now, last: now,
		cells: map[string]float64{}, ids: map[string]string{}}
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			p.tty = true
		}
	}
	return p
}

func (p *progress) event(ev pipeline.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.ev = ev
	switch ev.Kind {
	case pipeline.EventDone:
		p.ran++
		delete(p.cells, ev.Key.String())
	case pipeline.EventFailed:
		delete(p.cells, ev.Key.String())
		p.clear()
		fmt.Fprintf(p.w, "FAILED %s: %v\n", ev.Cell.ID, firstLine(ev.Err.Error()))
	}
	if p.quiet {
		return
	}
	now := time.Now()
	if p.tty {
		if now.Sub(p.last) < 100*time.Millisecond && ev.Done < ev.Total {
			return
		}
		p.last = now
		line := p.line()
		fmt.Fprintf(p.w, "\r%s%s", line, strings.Repeat(" ", max(0, p.lineLen-len(line))))
		p.lineLen = len(line)
		return
	}
	if now.Sub(p.last) >= 10*time.Second && ev.Kind == pipeline.EventDone {
		p.last = now
		fmt.Fprintln(p.w, p.line())
	}
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
	if p.ran > 0 && ev.Done < ev.Total {
		// Remaining cells at the throughput seen so far (cells computed
		// per second of this run), which holds for any executor: local
		// workers or a cluster whose real parallelism -j does not tell.
		per := time.Since(p.start) / time.Duration(p.ran)
		left := time.Duration(ev.Total-ev.Done) * per
		s += fmt.Sprintf(", ETA %s", left.Round(time.Second))
	}
	return s
}

func (p *progress) clear() {
	if p.tty && p.lineLen > 0 {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.lineLen))
		p.lineLen = 0
	}
}

func (p *progress) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
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
