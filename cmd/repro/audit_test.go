package main

import (
	"errors"
	"strings"
	"testing"
	"time"

	"repro/pipeline"
)

// TestWhyTyposAndBlanks: why on a misspelt number ID suggests the ID
// (as show does for a table), and on a blank table cell says it is blank
// and why, rather than "number X = " and nothing.
func TestWhyTyposAndBlanks(t *testing.T) {
	t.Parallel()
	dir := freshClone(t)
	for _, c := range []struct {
		arg, want string
		code      int
	}{
		{"abaltion/full/sequential", "(did you mean ablation/full/sequential?)", 1},
		{"ablation/full/sequentail", "table ablation has no number ablation/full/sequentail (did you mean ablation/full/sequential?)", 1},
		{"paper/tables/ablation.tex:2:3", "number ablation/gate-bouts/single_pass: blank in the table (not run: experiment gate-bouts has no protocol single_pass)", 0},
	} {
		out, errOut, code := reproSplit(t, dir, "why", c.arg)
		if code != c.code || !strings.Contains(out+errOut, c.want) {
			t.Errorf("why %s: exit %d, want %d and %q in\n%s%s", c.arg, code, c.code, c.want, out, errOut)
		}
		if strings.Contains(out, " = \n") {
			t.Errorf("why %s: a number with nothing after '=':\n%s", c.arg, out)
		}
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
