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

	out, err := repro(t, dir, "check")
	if err != nil || strings.Contains(out, "stale") && !strings.Contains(out, "no stale number") {
		t.Fatalf("check on a fresh clone: %v\n%s", err, out)
	}
	for _, want := range []string{"paper/tables/ablation.tex: ", "numbers not computed here", "paper/ has no stale number, but"} {
		if !strings.Contains(out, want) {
			t.Errorf("check lacks %q:\n%s", want, out)
		}
	}
	out = mustRepro(t, dir, "why", "ablation/full/sequential")
	if strings.Contains(out, "stale") || strings.Count(out, "not computed here") != 6 {
		t.Fatalf("why on a fresh clone (want each of 6 seeds not computed here):\n%s", out)
	}
}
