package main

import (
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"repro/experiments"
	"repro/pipeline"
)

// exitCode returns the exit status of a finished command (0 when err is nil).
func exitCode(t *testing.T, err error) int {
	t.Helper()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ee):
		return ee.ExitCode()
	}
	t.Fatalf("not an exit status: %v", err)
	return -1
}

// reproSplit runs the CLI and returns stdout and stderr apart, and the exit status.
func reproSplit(t *testing.T, dir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return reproWith(t, reproBin, dir, args...)
}

// tinyDAG is a synthetic DAG of 6 cells in 3 layers, for the CLI tests.
const tinyDAG = "cells = 6\nwidth = 3\nfan_in = 2\nwork = 10\n"

// writeConfig replaces dir's pipeline.toml by a synthetic one, as workdir writes it.
func writeConfig(t *testing.T, dir, synthetic string) {
	t.Helper()
	cfg := "[settings]\nstore = \"store\"\n\n[synthetic]\n" + synthetic
	if err := os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
}

var updateReport = flag.Bool("update-report", false, "rewrite paper/reproduction.tex from the committed sidecars")

// repoRoot is the module's root (this package is cmd/repro).
const repoRoot = "../.."

// repoWorkspace is the repository's own pipeline.toml under its default
// profile, without a store.
func repoWorkspace(t *testing.T) *workspace {
	t.Helper()
	cfg, err := pipeline.LoadConfig(filepath.Join(repoRoot, "pipeline.toml"))
	if err != nil {
		t.Fatal(err)
	}
	m, err := experiments.Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	name, _, err := m.Profile("")
	if err != nil {
		t.Fatal(err)
	}
	g, err := m.Build(name)
	if err != nil {
		t.Fatal(err)
	}
	return &workspace{cfg: cfg, profile: name, matrix: m, graph: g}
}

// firstDiff shows the first line where got and want differ.
func firstDiff(got, want string) string {
	g, w := strings.Split(got, "\n"), strings.Split(want, "\n")
	for i := 0; i < len(g) || i < len(w); i++ {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d:\n got  %s\n want %s", i+1, a, b)
		}
	}
	return "(equal)"
}

// copyTree copies the committed files a fresh clone has that a command
// reads (pipeline.toml and paper/) into a new directory.
func freshClone(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	err := filepath.WalkDir(repoRoot, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(repoRoot, path)
		if d.IsDir() {
			if rel != "." && rel != "paper" && rel != filepath.Join("paper", "tables") && rel != filepath.Join("paper", "figures") && rel != filepath.Join("paper", "reference-runs") {
				return filepath.SkipDir
			}
			return os.MkdirAll(filepath.Join(dir, rel), 0o755)
		}
		if rel != "pipeline.toml" && filepath.Dir(rel) == "." || filepath.Dir(rel) == "paper" && strings.HasSuffix(rel, ".pdf") {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// outputBlob returns the blob path of a cached cell's output "out".
func outputBlob(t *testing.T, dir, cell string) (digest, path string) {
	t.Helper()
	_, d, ok := strings.Cut(planState(t, dir)[cell], "map[out:")
	if !ok {
		t.Fatalf("%s: no output in plan", cell)
	}
	d = strings.TrimSuffix(d, "]")
	return d, filepath.Join(dir, "store", "blobs", d[:2], d+".zst")
}
