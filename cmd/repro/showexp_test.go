package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestShowExperiment: repro show experiment prints the fields a row
// changes against the default system, each with its default, and the
// presets.toml layers of its preset; an unknown name is an error.
func TestShowExperiment(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	cfg := strings.Replace(smokeProject, "%MIRROR%", dir, 1) + `
[[experiment]]
name = "iso"
learner = "bp"
dataset = "mnist"
preset = "bpk_iso_lr1e4"
protocols = ["sequential", "static"]

[[experiment]]
name = "quick"
learner = "local"
dataset = "mnist"
protocols = ["sequential", "single_pass"]
[experiment.local]
eta = 0.05
`
	if err := os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	out := mustRepro(t, dir, "show", "experiment", "iso")
	for _, want := range []string{
		"experiment iso: bp learner on mnist, profile smoke",
		"preset: bpk_iso_lr1e4 (presets/presets.toml: bpk -> bpk_iso_lr1e4)",
		"sequential, static: 7 field(s) differ from the default system",
		`method        "local"     "er"`,
		"isolate       true        false",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show experiment iso: no line %q in\n%s", want, out)
		}
	}
	out = mustRepro(t, dir, "show", "experiment", "quick")
	for _, want := range []string{
		"preset: none (the default system)",
		// The protocol's own change (one epoch) is the default's too.
		"sequential, single_pass: 1 field(s) differ from the default system",
		"eta    0.05   0.02",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("show experiment quick: no line %q in\n%s", want, out)
		}
	}
	if out, err := repro(t, dir, "show", "experiment", "nope"); err == nil || !strings.Contains(out, `no experiment "nope"`) {
		t.Errorf("show experiment nope: %v\n%s", err, out)
	}
}
