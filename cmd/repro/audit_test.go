package main

import (
	"errors"
	"fmt"
	"runtime"
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

// TestPlanOnlyPreviewsRunOnly: plan --only lists exactly the cells run
// --only then computes, and nothing after it.
func TestPlanOnlyPreviewsRunOnly(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	plan := mustRepro(t, dir, "plan", "--only", "synth/l1/c4")
	var ids []string
	for _, l := range strings.Split(plan, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "run" {
			ids = append(ids, f[1])
		}
	}
	if len(ids) == 0 || len(ids) == 6 || !strings.Contains(plan, fmt.Sprintf("%d to run, 0 cached (profile default, --only synth/l1/c4: %d of 6 cells)", len(ids), len(ids))) {
		t.Fatalf("plan --only synth/l1/c4:\n%s", plan)
	}
	run := mustRepro(t, dir, "run", "-q", "--only", "synth/l1/c4")
	if want := fmt.Sprintf("ran %d cells, 0 cached, 0 failed, 0 blocked", len(ids)); !strings.Contains(run, want) {
		t.Errorf("plan --only listed %d cells %v; run --only: %q, want %q", len(ids), ids, run, want)
	}
	if again := mustRepro(t, dir, "plan", "--only", "synth/l1/c4"); !strings.Contains(again, fmt.Sprintf("0 to run, %d cached", len(ids))) {
		t.Errorf("plan --only after the run:\n%s", again)
	}
	if _, errOut, code := reproSplit(t, dir, "plan", "--only", "synth/l9"); code != 2 || !strings.Contains(errOut, "matches no cell") {
		t.Errorf("plan --only synth/l9: exit %d, %q", code, errOut)
	}
}

// TestVersionAndFlagNames: repro --version names the build, and help
// writes flags with two dashes, as the README does; a misspelt flag gets a
// suggestion.
func TestVersionAndFlagNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, _, code := reproSplit(t, dir, "--version")
	if code != 0 || !strings.HasPrefix(out, "repro ") || !strings.Contains(out, runtime.Version()) || !strings.Contains(out, "kernels ") {
		t.Errorf("repro --version: exit %d, %q", code, out)
	}
	help, _, _ := reproSplit(t, dir, "help", "plan")
	if !strings.Contains(help, "\n  --all\n") || strings.Contains(help, "\n  -all") || !strings.Contains(help, "--only GLOB") {
		t.Errorf("help plan:\n%s", help)
	}
	_, errOut, code := reproSplit(t, dir, "plan", "--profle", "smoke")
	if code != 2 || !strings.Contains(errOut, "unknown flag --profle (did you mean --profile?)") {
		t.Errorf("plan --profle: exit %d, %q", code, errOut)
	}
}
