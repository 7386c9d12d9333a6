package main

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"repro/artifacts"
	"repro/pipeline"
)

// TestProgressShowsTrueRunningCount: under -j 2 a cell's end is followed at
// once by the next start; the line, printed on a clock, shows 2 running.
func TestProgressShowsTrueRunningCount(t *testing.T) {
	var out strings.Builder
	p := startProgress(&out, false, "local", true, 20*time.Millisecond)
	cell := &pipeline.Cell{ID: "synth/l0/c0"}
	ev := func(kind pipeline.EventKind, done, running int) {
		p.event(pipeline.Event{Kind: kind, Cell: cell, Done: done, Total: 4, Running: running})
	}
	ev(pipeline.EventStart, 0, 1)
	ev(pipeline.EventStart, 0, 2)
	for i := 1; i <= 2; i++ {
		ev(pipeline.EventDone, i, 1) // the scheduler starts the next cell at once
		ev(pipeline.EventStart, i, 2)
		time.Sleep(60 * time.Millisecond)
	}
	p.finish()
	got := out.String()
	if !strings.Contains(got, "[local] 2/4 cells done, 2 running, 0 failed") || strings.Contains(got, "1 running") {
		t.Errorf("progress lines:\n%s", got)
	}
}

// TestProgressETACountsWork: the ETA divides the expected CPU seconds left
// by those done per second so far, counting a running cell's own progress,
// so one long cell finished first does not make the many short ones left
// look long.
func TestProgressETACountsWork(t *testing.T) {
	p := startProgress(io.Discard, true, "local", false, time.Hour)
	defer p.finish()
	long, short := &pipeline.Cell{ID: "train/long"}, &pipeline.Cell{ID: "train/short"}
	k1, k2 := artifacts.Key{1}, artifacts.Key{2}
	// 100 s of work: a 60 s cell done, a 10 s cell half done, 30 s waiting.
	p.event(pipeline.Event{Kind: pipeline.EventStart, Cell: long, Key: k1, Cost: 60, WorkLeft: 100, Total: 5, Running: 1})
	p.event(pipeline.Event{Kind: pipeline.EventStart, Cell: short, Key: k2, Cost: 10, WorkLeft: 100, Total: 5, Running: 2})
	p.event(pipeline.Event{Kind: pipeline.EventDone, Cell: long, Key: k1, WorkDone: 60, WorkLeft: 40, Done: 1, Total: 5, Running: 1})
	p.cell(k2.String(), short.ID, 1, 2)
	// 65 s done in 130 s of wall: 0.5 per second, 35 left, so 70 s.
	if got, ok := p.eta(130 * time.Second); !ok || got != 70*time.Second {
		t.Errorf("eta %v (%v), want 1m10s", got, ok)
	}
	// Without costs (an executor's events before any is known) it counts
	// cells: 1 of 4 done in 10 s leaves 30 s.
	q := startProgress(io.Discard, true, "local", false, time.Hour)
	defer q.finish()
	q.event(pipeline.Event{Kind: pipeline.EventDone, Cell: short, Key: k2, Done: 1, Total: 4})
	if got, ok := q.eta(10 * time.Second); !ok || got != 30*time.Second {
		t.Errorf("eta without costs %v (%v), want 30s", got, ok)
	}
}

// TestProgressSilentOffTerminal: written to a file or a pipe, a run's
// progress prints no count line (it would be left, out of date, before the
// summary), only its failures.
func TestProgressSilentOffTerminal(t *testing.T) {
	var out strings.Builder
	p := startProgress(&out, false, "local", false, 5*time.Millisecond)
	cell := &pipeline.Cell{ID: "synth/l0/c0"}
	p.event(pipeline.Event{Kind: pipeline.EventStart, Cell: cell, Total: 4, Running: 1})
	p.event(pipeline.Event{Kind: pipeline.EventDone, Cell: cell, Done: 1, Total: 4})
	time.Sleep(30 * time.Millisecond)
	p.event(pipeline.Event{Kind: pipeline.EventFailed, Cell: cell, Done: 2, Total: 4, Err: errors.New("boom")})
	time.Sleep(30 * time.Millisecond)
	p.finish()
	if got := out.String(); got != "FAILED synth/l0/c0: boom\n" {
		t.Errorf("progress off a terminal printed %q, want the failure alone", got)
	}
}
