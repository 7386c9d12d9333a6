package main

import (
	"encoding/json"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"repro/artifacts"
)

// TestLedgerTamperIsRejected re-runs the review's probe: in a clone, a
// ledger record pointed at a new blob named by its real digest is
// rejected by pull (exit 1, naming the record and why) and by run, which
// computes the cell instead, so the tamper never reaches a result.
func TestLedgerTamperIsRejected(t *testing.T) {
	t.Parallel()
	dir := remoteWorkdir(t, "[settings.remotes.ledger]\npath = \"cells\"\n", tinyDAG)
	mustRepro(t, dir, "run", "-q")
	mustRepro(t, dir, "push", "--allow-dirty")
	want := planState(t, dir)
	for _, args := range [][]string{{"init", "-q"}, {"add", "pipeline.toml", "cells"}, {"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false", "commit", "-qm", "ledger"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	clone := cloneWithout(t, dir)

	// The tamper: a blob of other content under its true name, and the
	// record of a last-layer cell pointed at it.
	victim := slices.Max(slices.Collect(maps.Keys(want))) // a cell of the last layer
	key := strings.Fields(want[victim])[1]
	rec := filepath.Join(clone, "cells", "cells", key[:2], key+".json")
	b, err := os.ReadFile(rec)
	if err != nil {
		t.Fatal(err)
	}
	scratch, err := artifacts.Open(filepath.Join(t.TempDir(), "s"), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, _ := scratch.Put([]byte("forged result"))
	z, _ := os.ReadFile(scratch.BlobPath(d))
	blob := filepath.Join(clone, "cells", "blobs", d.String()[:2], d.String()+".zst")
	os.MkdirAll(filepath.Dir(blob), 0o755)
	os.WriteFile(blob, z, 0o444)
	var m map[string]any
	json.Unmarshal(b, &m)
	m["outputs"] = []map[string]any{{"name": "out", "digest": d.String(), "size": 13}}
	b, _ = json.MarshalIndent(m, "", "  ")
	os.Chmod(rec, 0o644)
	if err := os.WriteFile(rec, append(b, '\n'), 0o644); err != nil {
		t.Fatal(err)
	}

	stdout, stderr, code := reproSplit(t, clone, "pull")
	if code != 1 || !strings.Contains(stderr, victim) || !strings.Contains(stderr, "differs from its committed version") {
		t.Fatalf("pull over a tampered record: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	stdout, stderr, code = reproSplit(t, clone, "run", "-q")
	if code != 0 || !strings.Contains(stderr, "remote miss (the cell is computed instead)") || !strings.Contains(stdout, "ran 1 cell") {
		t.Fatalf("run over a tampered record: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
	}
	if got := planState(t, clone); got[victim] != want[victim] {
		t.Fatalf("%s after the run: %s, want %s (the committed record's)", victim, got[victim], want[victim])
	}
}
