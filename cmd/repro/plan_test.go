package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"repro/pipeline"
)

// TestPlanJSONEmptyAndReasonsBounded: plan --json prints [] when nothing
// would run, and a plan line stays short however many inputs changed.
func TestPlanJSONEmptyAndReasonsBounded(t *testing.T) {
	t.Parallel()
	dir := workdir(t, "cells = 40\nwidth = 20\nfan_in = 8\nwork = 10\n")
	mustRepro(t, dir, "run", "-q")
	if out, _, code := reproSplit(t, dir, "plan", "--json"); code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("plan --json with everything cached: exit %d, %q", code, out)
	}
	// Change every first-layer cell: each second-layer cell has 8 changed inputs.
	writeConfig(t, dir, "cells = 40\nwidth = 20\nfan_in = 8\nwork = 10\nscale = 2.0\nscale_layer = 0\n")
	out := mustRepro(t, dir, "plan")
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if len(line) > 7+55+1+maxReasonLen {
			t.Errorf("plan line of %d characters: %s", len(line), line)
		}
	}
	if !strings.Contains(out, "8 inputs changed: synth/l0/c") {
		t.Errorf("plan does not summarise the changed inputs:\n%s", out)
	}
	js, _, _ := reproSplit(t, dir, "plan", "--json")
	var rows []struct {
		Cell    string
		Reasons []struct{ Kind, Detail, Text string }
	}
	if err := json.Unmarshal([]byte(js), &rows); err != nil {
		t.Fatalf("plan --json: %v\n%.2000s", err, js)
	}
	found := false
	for _, r := range rows {
		for _, x := range r.Reasons {
			found = found || x.Kind == "input-changed" && x.Detail == "synth/l0/c1" && x.Text == "input changed: synth/l0/c1"
		}
	}
	if !found {
		t.Errorf("plan --json lost a reason (kind input-changed, detail synth/l0/c1):\n%.2000s", js)
	}
}

func TestSummariseReasons(t *testing.T) {
	long := pipeline.Reason{Kind: pipeline.ReasonConfigChanged, Detail: "profile.seeds [" + strings.Repeat("1, ", 300) + "]"}
	input := func(id string) pipeline.Reason { return pipeline.Reason{Kind: pipeline.ReasonInputChanged, Detail: id} }
	for _, tc := range []struct {
		name    string
		reasons []pipeline.Reason
		want    string
	}{
		{"one", []pipeline.Reason{{Kind: pipeline.ReasonNew}}, "new"},
		{"one input", []pipeline.Reason{{Kind: pipeline.ReasonStageVersion, Detail: "s 1 -> 2"}, input("a/b")}, "stage version s 1 -> 2; input changed: a/b"},
		{"inputs", []pipeline.Reason{input("a"), input("b"), input("c")}, "3 inputs changed: a and 2 more"},
	} {
		if got := summariseReasons(tc.reasons); got != tc.want {
			t.Errorf("%s: summariseReasons = %q, want %q", tc.name, got, tc.want)
		}
	}
	if got := summariseReasons([]pipeline.Reason{long}); len(got) > maxReasonLen+10 || !strings.HasSuffix(got, "more characters; plan --json)") {
		t.Errorf("long reason summarised to %d characters: %q", len(got), got)
	}
}

// TestLoadText: the wall estimate is restated at the machine's load only
// when other work takes the cores from the run's jobs.
func TestLoadText(t *testing.T) {
	e := pipeline.Estimate{Cells: 10, CPU: 600, Wall: 300, Jobs: 2}
	if got := loadText(e, 0.1, 2); got != "" {
		t.Errorf("idle machine: %q, want nothing", got)
	}
	if got := loadText(e, 0, 2); got != "" {
		t.Errorf("unknown load: %q, want nothing", got)
	}
	// Load 4 on 2 cores with 2 jobs: each job gets a third of a core.
	if got, want := loadText(e, 4, 2), "; at this machine's load (4.0 on 2 cores) about 15m00s wall"; got != want {
		t.Errorf("loaded machine: %q, want %q", got, want)
	}
}

// TestPlanEstimateRefusesBadJobs: plan --estimate -j 0 is refused as run
// refuses it, not estimated at -j 1.
func TestPlanEstimateRefusesBadJobs(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	for _, j := range []string{"0", "-3"} {
		out, errOut, code := reproSplit(t, dir, "plan", "--estimate", "-j", j)
		if code != 2 || !strings.Contains(errOut, "-j must be >= 1") || strings.Contains(out, "estimate") {
			t.Fatalf("plan --estimate -j %s: exit %d, stdout %q, stderr %q", j, code, out, errOut)
		}
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
