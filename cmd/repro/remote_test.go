package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
)

// remoteDAG is a synthetic pipeline with a shared remote next to its store.
const remoteDAG = "cells = 20\nwidth = 5\nfan_in = 2\nwork = 100\n"

func remoteWorkdir(t *testing.T, remote, synthetic string) string {
	t.Helper()
	dir := t.TempDir()
	cfg := "[settings]\nstore = \"store\"\n" + remote + "\n[synthetic]\n" + synthetic
	if err := os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// cloneWithout copies a work tree without its store: what a fresh clone of
// the repository holds.
func cloneWithout(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	copyTree(t, src, dst, "store")
	return dst
}

// A fresh clone with a remote in the repository computes nothing, a change
// reruns exactly the cells it changes, and --no-remote recomputes.
func TestPushPullCLI(t *testing.T) {
	t.Parallel()
	dir := remoteWorkdir(t, "[settings.remotes.shared]\npath = \"cells\"\n", remoteDAG)
	mustRepro(t, dir, "run", "-q")
	out := mustRepro(t, dir, "push", "--allow-dirty")
	if !strings.Contains(out, "pushed 20 cells of profile default: 20 new record(s), 20 new blobs") {
		t.Fatalf("push: %s", out)
	}
	if out := mustRepro(t, dir, "push", "--allow-dirty"); !strings.Contains(out, "0 new record(s), 0 new blobs") {
		t.Fatalf("second push: %s", out)
	}
	want := planState(t, dir)

	clone := cloneWithout(t, dir)
	if out := mustRepro(t, clone, "plan"); !strings.Contains(out, "0 to run, 0 cached, 20 in remote shared") {
		t.Fatalf("plan on a fresh clone: %s", out)
	}
	if out := mustRepro(t, clone, "status"); !strings.Contains(out, "IN REMOTE") || !strings.Contains(out, "│ synth │ 0      │ 20 ") {
		t.Fatalf("status on a fresh clone: %s", out)
	}
	key := strings.Fields(want["synth/l3/c19"])[1]
	if out := mustRepro(t, clone, "why", key[:10]); !strings.Contains(out, "cell synth/l3/c19") || !strings.Contains(out, "record   from remote shared") {
		t.Fatalf("why by a key prefix on a fresh clone: %s", out)
	}
	if out := mustRepro(t, clone, "plan", "--no-remote"); !strings.Contains(out, "20 to run, 0 cached (profile") {
		t.Fatalf("plan --no-remote: %s", out)
	}
	if out := mustRepro(t, clone, "run"); !strings.Contains(out, "nothing to do: 0 cells cached, 20 from remotes (20 pulled") {
		t.Fatalf("run on a fresh clone: %s", out)
	}
	if got := planState(t, clone); len(got) != len(want) {
		t.Fatalf("clone plan has %d cells, want %d", len(got), len(want))
	} else {
		for id, s := range want {
			if got[id] != s {
				t.Fatalf("%s: clone %s, original %s", id, got[id], s)
			}
		}
	}

	// One layer changed: exactly its cells rerun on another fresh clone.
	clone2 := cloneWithout(t, dir)
	cfg := filepath.Join(clone2, "pipeline.toml")
	b, _ := os.ReadFile(cfg)
	os.WriteFile(cfg, []byte(strings.Replace(string(b), "work = 100\n", "work = 100\nscale = 2.0\nscale_layer = 3\n", 1)), 0o644)
	if out := mustRepro(t, clone2, "run"); !strings.Contains(out, "ran 5 cells, 0 cached, 15 from remotes (15 pulled") {
		t.Fatalf("run after a change: %s", out)
	}
	if out := mustRepro(t, clone2, "pull"); !strings.Contains(out, "pulled 0 cells") {
		t.Fatalf("pull after the run: %s", out)
	}
}

// A remote that keeps records only (as the ledger keeps data cells')
// leaves the cells there; a damaged blob is a miss and the cell is
// computed; two pushes at once leave a sound remote.
func TestRemoteRecordsOnlyAndDamage(t *testing.T) {
	t.Parallel()
	dir := remoteWorkdir(t, "[settings.remotes.ledger]\npath = \"cells\"\nstages = [\"download\"]\n", remoteDAG)
	mustRepro(t, dir, "run", "-q")
	var wg sync.WaitGroup
	outs := make([]string, 2)
	errs := make([]error, 2)
	for i := range outs {
		wg.Add(1)
		go func() { defer wg.Done(); outs[i], errs[i] = repro(t, dir, "push", "--allow-dirty") }()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("concurrent push %d: %v\n%s", i, err, outs[i])
		}
	}
	clone := cloneWithout(t, dir)
	out := mustRepro(t, clone, "run")
	if !strings.Contains(out, "nothing to do: 0 cells cached, 20 from remotes (0 pulled, 0.00 MB; 20 records only)") {
		t.Fatalf("run with records only: %s", out)
	}
	if out := mustRepro(t, clone, "plan", "--all"); !strings.Contains(out, "in remote ledger (record only)") {
		t.Fatalf("plan --all: %s", out)
	}

	// A full remote with one damaged blob: that cell and what it needs
	// are computed, the rest pulled.
	full := remoteWorkdir(t, "[settings.remotes.shared]\npath = \"cells\"\n", remoteDAG)
	mustRepro(t, full, "run", "-q")
	mustRepro(t, full, "push", "--allow-dirty")
	blobs, _ := filepath.Glob(filepath.Join(full, "cells", "blobs", "*", "*.zst"))
	os.Chmod(blobs[0], 0o644)
	os.WriteFile(blobs[0], []byte("not zstd"), 0o644)
	clone = cloneWithout(t, full)
	out, err := repro(t, clone, "run")
	if err != nil || !strings.Contains(out, "remote miss (the cell is computed instead)") || !strings.Contains(out, "corrupt") || !strings.Contains(out, "ran 1 cell, 0 cached, 19 from remotes (19 pulled") {
		t.Fatalf("run with a damaged remote blob: %v\n%s", err, out)
	}
	// A tampered record (its params edited, so it no longer hashes to its
	// key): the run computes the cell and says why.
	full = remoteWorkdir(t, "[settings.remotes.shared]\npath = \"cells\"\n", remoteDAG)
	mustRepro(t, full, "run", "-q")
	mustRepro(t, full, "push")
	recs, _ := filepath.Glob(filepath.Join(full, "cells", "cells", "*", "*.json"))
	rec, _ := os.ReadFile(recs[0])
	var m map[string]any
	if err := json.Unmarshal(rec, &m); err != nil {
		t.Fatal(err)
	}
	m["params"] = m["params"].(string) + " "
	rec, _ = json.Marshal(m)
	os.Chmod(recs[0], 0o644)
	os.WriteFile(recs[0], rec, 0o644)
	clone = cloneWithout(t, full)
	out, err = repro(t, clone, "run")
	if err != nil || !strings.Contains(out, "remote miss (the cell is computed instead): ") || !strings.Contains(out, "remote shared: ") || !strings.Contains(out, "ran 1 cell,") {
		t.Fatalf("run over a tampered remote record: %v\n%s", err, out)
	}
}

// push --refresh replaces the remote's records of the same outputs by the
// store's later run (its provenance and CPU time), and only those.
func TestPushRefreshCLI(t *testing.T) {
	t.Parallel()
	dir := remoteWorkdir(t, "[settings.remotes.shared]\npath = \"cells\"\n", remoteDAG)
	mustRepro(t, dir, "run", "-q")
	mustRepro(t, dir, "push", "--allow-dirty")
	clone := cloneWithout(t, dir)
	mustRepro(t, clone, "run", "-q", "--no-remote") // the same cells again: same outputs, another run
	record := func(root, key string) map[string]any {
		b, err := os.ReadFile(filepath.Join(root, "cells", key[:2], key+".json"))
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	key := strings.Fields(planState(t, clone)["synth/l3/c19"])[1]
	before := record(filepath.Join(clone, "cells"), key)
	if out := mustRepro(t, clone, "push", "--allow-dirty"); !strings.Contains(out, "0 new record(s)") || strings.Contains(out, "refreshed") {
		t.Fatalf("push without --refresh: %s", out)
	}
	if got := record(filepath.Join(clone, "cells"), key); !reflect.DeepEqual(got, before) {
		t.Fatalf("push without --refresh changed the remote's record")
	}
	if out := mustRepro(t, clone, "push", "--refresh", "--allow-dirty"); !strings.Contains(out, "0 new record(s)") || !strings.Contains(out, "refreshed 20 record(s) with the same outputs") {
		t.Fatalf("push --refresh: %s", out)
	}
	got, store := record(filepath.Join(clone, "cells"), key), record(filepath.Join(clone, "store"), key)
	if !reflect.DeepEqual(got["provenance"], store["provenance"]) || reflect.DeepEqual(got["provenance"], before["provenance"]) || !reflect.DeepEqual(got["outputs"], before["outputs"]) {
		t.Fatalf("refreshed record: provenance %v (store %v, before %v)", got["provenance"], store["provenance"], before["provenance"])
	}
	if out := mustRepro(t, clone, "push", "--refresh", "--allow-dirty"); !strings.Contains(out, "refreshed 0 record(s)") {
		t.Fatalf("second push --refresh: %s", out)
	}
}

// TestLedgerWithoutREADMEIsStillARemote: the committed ledger is refused as
// a store by its marker alone (its README deleted), by every command that
// opens a store, and nothing is written into it.
func TestLedgerWithoutREADMEIsStillARemote(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	ledger := filepath.Join(t.TempDir(), "cells")
	os.MkdirAll(filepath.Join(ledger, "cells", "ab"), 0o755)
	os.WriteFile(filepath.Join(ledger, "cells", "ab", strings.Repeat("ab", 32)+".json"), []byte("{}"), 0o644)
	marker, err := os.ReadFile("../../paper/cells/repro-remote")
	if err != nil {
		t.Fatalf("the committed ledger has no marker: %v", err)
	}
	os.WriteFile(filepath.Join(ledger, "repro-remote"), marker, 0o644)
	for _, args := range [][]string{{"gc", "--apply"}, {"verify"}, {"plan"}, {"run", "-q"}} {
		_, errOut, code := reproSplit(t, dir, append(args, "--store", ledger)...)
		if code != 1 || !strings.Contains(errOut, "it is a repro remote") {
			t.Errorf("%v --store ledger: exit %d, %q", args, code, errOut)
		}
	}
	ents, _ := os.ReadDir(ledger)
	if len(ents) != 2 {
		t.Errorf("the ledger changed: %v", ents)
	}
}

// TestRemotePathForeignRefused: a remote whose path names a directory that
// holds other files (a typo, "/") is refused before any work, at the line
// of its path, and nothing is written there; push too.
func TestRemotePathForeignRefused(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	nas := filepath.Join(t.TempDir(), "nas")
	os.MkdirAll(filepath.Join(nas, "sub"), 0o755)
	os.WriteFile(filepath.Join(nas, "important.txt"), []byte("precious"), 0o644)
	cfg, _ := os.ReadFile(filepath.Join(dir, "pipeline.toml"))
	cfg = []byte(strings.Replace(string(cfg), "[synthetic]", "[settings.remotes.ledger]\npath = \""+nas+"\"\n\n[synthetic]", 1))
	os.WriteFile(filepath.Join(dir, "pipeline.toml"), cfg, 0o644)
	for _, args := range [][]string{{"plan"}, {"run", "-q"}, {"push"}} {
		_, errOut, code := reproSplit(t, dir, args...)
		if code != 1 || !strings.Contains(errOut, "pipeline.toml:5: settings.remotes.ledger.path: remote ledger ("+nas+"): not a repro remote: the directory holds other files (important.txt)") {
			t.Errorf("%v: exit %d, %q", args, code, errOut)
		}
	}
	if ents, _ := os.ReadDir(nas); len(ents) != 2 {
		t.Errorf("the directory changed: %v", ents)
	}
}
