package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestOnlyEmptyIsAnError: --only ” (an unset shell variable) is a usage
// error, not the whole profile; nothing is stored.
func TestOnlyEmptyIsAnError(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	out, errOut, code := reproSplit(t, dir, "run", "--only", "")
	if code != 2 || !strings.Contains(errOut, "empty glob (an unset shell variable?)") || strings.Contains(out, "ran ") {
		t.Fatalf("run --only '': exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, errOut, code := reproSplit(t, dir, "verify", "--recompute="); code != 2 || !strings.Contains(errOut, "empty glob") {
		t.Fatalf("verify --recompute='': exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "store")); !os.IsNotExist(err) {
		t.Fatalf("a store was made: %v", err)
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

// TestJobsCappedByMemory: a local run's -j is lowered so that the cells
// in flight fit in the memory cells may use (REPRO_MEMORY here), and says so.
func TestJobsCappedByMemory(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	cmd := exec.Command(reproBin, "run", "-q", "-j", "100000")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REPRO_MEMORY=1G")
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "-j 100000 lowered to 2: a cell of this run may need up to 0.5 GiB and the machine has 1.0 GiB") || !strings.Contains(string(out), "ran 6 cells") {
		t.Fatalf("run -j 100000: %v\n%s", err, out)
	}
	cmd = exec.Command(reproBin, "plan")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "REPRO_MEMORY=lots")
	if out, err := cmd.CombinedOutput(); exitCode(t, err) != 1 || !strings.Contains(string(out), `REPRO_MEMORY="lots": want a positive size such as 16G`) {
		t.Fatalf("REPRO_MEMORY=lots: %v\n%s", err, out)
	}
}

func TestParseBytes(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{"123": 123, "512M": 512 << 20, "16G": 16 << 30, "16GiB": 16 << 30, "1t": 1 << 40, "2k": 2048} {
		if got, err := parseBytes(in); err != nil || got != want {
			t.Errorf("parseBytes(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "0", "-1G", "G", "1.5G", "99999999999T"} {
		if _, err := parseBytes(in); err == nil {
			t.Errorf("parseBytes(%q): no error", in)
		}
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
