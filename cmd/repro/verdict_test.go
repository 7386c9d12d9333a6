package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// copyTree copies the files under src (skipping the directories skip
// names) into dst.
func copyTree(t *testing.T, src, dst string, skip ...string) {
	t.Helper()
	err := filepath.Walk(src, func(path string, fi os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		for _, s := range skip {
			if rel == s {
				return filepath.SkipDir
			}
		}
		if fi.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// A fresh clone of the repository without a store or a ledger: check does
// not call the committed numbers stale (it cannot know), says they are not
// computed here and passes; why says the same of every seed.
func TestFreshCloneNotComputedHere(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	b, err := os.ReadFile("../../pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "pipeline.toml"), b, 0o644)
	copyTree(t, "../../paper", filepath.Join(dir, "paper"), "cells")

	// Tables declared in pipeline.toml but not yet committed are stale
	// (never rendered); every committed table is not computed here.
	out, err := repro(t, dir, "check")
	neverRendered := false
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		switch {
		case strings.HasSuffix(line, ": not in the work tree (never rendered)"):
			neverRendered = true
		case strings.HasPrefix(line, "paper/tables/"):
			if !strings.HasSuffix(line, " not computed here") {
				t.Errorf("check on a fresh clone calls a committed table stale: %s", line)
			}
		case strings.HasPrefix(line, "paper/reproduction.tex: "):
			if line != "paper/reproduction.tex: not computed here" {
				t.Errorf("check on a fresh clone: %s", line)
			}
		case strings.HasPrefix(line, "paper/figures/"):
			// A figure is committed (not computed here) or not rendered
			// yet, never stale on a fresh clone.
			// ("...: N train cells not computed here" for one rendered
			// from a run).
			if !strings.HasSuffix(line, " not computed here") && !strings.Contains(line, ": not rendered yet (") {
				t.Errorf("check on a fresh clone calls a figure stale: %s", line)
			}
		case strings.HasPrefix(line, "repro check: "), strings.HasPrefix(line, "paper/ has no stale number, but"):
		default:
			t.Errorf("check on a fresh clone: unexpected line %s", line)
		}
	}
	if (err != nil) != neverRendered {
		t.Fatalf("check on a fresh clone: %v\n%s", err, out)
	}
	if !strings.Contains(out, "paper/tables/ablation.tex: ") || !strings.Contains(out, "paper/tables/bpk.tex: ") {
		t.Errorf("check on a fresh clone:\n%s", out)
	}
	out = mustRepro(t, dir, "why", "ablation/full/sequential")
	seeds := strings.Count(out, ": train/full/sequential/split1234/seed") // "seed i: <cell> = ..."
	if strings.Contains(out, "stale") || seeds < 6 || strings.Count(out, "not computed here") != seeds {
		t.Fatalf("why on a fresh clone (want each of its %d seeds, at least 6, not computed here):\n%s", seeds, out)
	}
}
