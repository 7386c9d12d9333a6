package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"repro/internal/buildstamp"
)

// reproBin is the real CLI, built once for the end-to-end tests.
var reproBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "repro-e2e-")
	if err != nil {
		panic(err)
	}
	reproBin = filepath.Join(dir, "repro")
	// Stamped as by make build (package buildstamp), whatever GOFLAGS says.
	flags, err := buildstamp.BuildFlags(".")
	if err != nil {
		fmt.Fprintf(os.Stderr, "building repro: %v\n", err)
		os.Exit(1)
	}
	out, err := exec.Command("go", append(append([]string{"build"}, flags...), "-o", reproBin, ".")...).CombinedOutput()
	if err != nil {
		fmt.Fprintf(os.Stderr, "building repro: %v\n%s", err, out)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// workdir writes a synthetic pipeline.toml and returns its directory.
func workdir(t *testing.T, synthetic string) string {
	t.Helper()
	dir := t.TempDir()
	writeConfig(t, dir, synthetic)
	return dir
}

func repro(t *testing.T, dir string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(reproBin, args...)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return out.String(), err
}

func mustRepro(t *testing.T, dir string, args ...string) string {
	t.Helper()
	out, err := repro(t, dir, args...)
	if err != nil {
		t.Fatalf("repro %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

// planState returns cell ID -> key and output digests, from plan --json.
func planState(t *testing.T, dir string) map[string]string {
	t.Helper()
	cmd := exec.Command(reproBin, "plan", "--all", "--json")
	cmd.Dir = dir
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("plan: %v", err)
	}
	var rows []struct {
		Cell, State, Key string
		Outputs          map[string]string
	}
	if err := json.Unmarshal(out, &rows); err != nil {
		t.Fatal(err)
	}
	m := map[string]string{}
	for _, r := range rows {
		m[r.Cell] = fmt.Sprintf("%s %s %v", r.State, r.Key, r.Outputs)
	}
	return m
}

const smallDAG = "cells = 60\nwidth = 15\nfan_in = 2\nwork = 2000\nsleep_ms = 25\n"

func TestRunTwiceDoesNoWork(t *testing.T) {
	t.Parallel()
	dir := workdir(t, smallDAG)
	out := mustRepro(t, dir, "run", "-j", "4")
	if !strings.Contains(out, "ran 60 cells") {
		t.Fatalf("first run: %s", out)
	}
	out = mustRepro(t, dir, "run", "-j", "4")
	if strings.TrimSpace(out) != "nothing to do: 60 cells cached (profile default)" {
		t.Fatalf("second run printed %q", out)
	}
	// A cosmetic edit (comments, order, whitespace) changes no key.
	cfg := "# reordered\n[synthetic]\nwidth=15   # per layer\nsleep_ms = 25\ncells = 60\nfan_in = 2\nwork = 2000\n\n[settings]\nstore = \"store\"\n"
	os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(cfg), 0o644)
	out = mustRepro(t, dir, "run")
	if !strings.HasPrefix(out, "nothing to do") {
		t.Fatalf("after a cosmetic edit: %q", out)
	}
	// A real change reruns exactly the dependent cells, with reasons.
	os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(cfg+"\n"), 0o644)
	os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(strings.Replace(cfg, "fan_in = 2", "fan_in = 2\nscale = 3.0\nscale_layer = 3", 1)), 0o644)
	plan := mustRepro(t, dir, "plan")
	if !strings.Contains(plan, "config changed: synth.scale 1.0 -> 3.0") || !strings.Contains(plan, "15 to run, 45 cached") {
		t.Fatalf("plan after a change:\n%s", plan)
	}
	out = mustRepro(t, dir, "run")
	if !strings.Contains(out, "ran 15 cells, 45 cached") {
		t.Fatalf("run after a change: %s", out)
	}
}

func TestKillResume(t *testing.T) {
	if testing.Short() {
		t.Skip("kills real processes; several seconds")
	}
	t.Parallel()
	ref := workdir(t, smallDAG)
	mustRepro(t, ref, "run", "-j", "2")
	want := planState(t, ref)

	dir := workdir(t, smallDAG)
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := 0; trial < 6; trial++ {
		cmd := exec.Command(reproBin, "run", "-j", "2", "-q")
		cmd.Dir = dir
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(time.Duration(20+rng.IntN(250)) * time.Millisecond)
		if trial == 0 {
			// On a loaded machine every random kill may come before the
			// first cell ends; the resume must have something to keep.
			for end := time.Now().Add(30 * time.Second); time.Now().Before(end); time.Sleep(10 * time.Millisecond) {
				if m, _ := filepath.Glob(filepath.Join(dir, "store", "cells", "*", "*.json")); len(m) > 0 {
					break
				}
			}
		}
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
		// Every finished cell is intact after each kill (on a loaded
		// machine the first kill may come before the store exists).
		if _, err := os.Stat(filepath.Join(dir, "store")); err != nil {
			continue
		}
		if out, err := repro(t, dir, "verify"); err != nil {
			t.Fatalf("verify after kill %d: %v\n%s", trial, err, out)
		}
	}
	out := mustRepro(t, dir, "run", "-j", "2")
	if !strings.Contains(out, "cached") && !strings.HasPrefix(out, "nothing to do") {
		t.Fatalf("resume: %s", out)
	}
	if strings.Contains(out, "ran 60 cells") {
		t.Fatalf("resume recomputed everything: %s", out)
	}
	got := planState(t, dir)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: after kills and resume %s, uninterrupted %s", id, got[id], w)
		}
	}
	if out := mustRepro(t, dir, "verify"); !strings.Contains(out, "0 problem(s)") {
		t.Fatalf("final verify: %s", out)
	}
}

func TestConcurrentRunsShareTheStore(t *testing.T) {
	if testing.Short() {
		t.Skip("several seconds")
	}
	t.Parallel()
	dir := workdir(t, smallDAG)
	var wg sync.WaitGroup
	outs := make([]string, 2)
	for i := range outs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out, err := repro(t, dir, "run", "-j", "3", "-q")
			if err != nil {
				t.Errorf("run %d: %v\n%s", i, err, out)
			}
			outs[i] = out
		}()
	}
	wg.Wait()
	ran := 0
	for _, o := range outs {
		var n int
		if _, err := fmt.Sscanf(o, "ran %d cell", &n); err == nil {
			ran += n
		}
	}
	if ran != 60 {
		t.Fatalf("the two runs computed %d cells in all, want each of 60 exactly once:\n%s\n%s", ran, outs[0], outs[1])
	}
	if out := mustRepro(t, dir, "verify"); !strings.Contains(out, "0 problem(s)") {
		t.Fatalf("verify: %s", out)
	}
}

func TestFlippedByteIsFoundAndRecomputed(t *testing.T) {
	t.Parallel()
	dir := workdir(t, "cells = 6\nwidth = 3\nfan_in = 1\n")
	mustRepro(t, dir, "run")
	want := planState(t, dir)
	// An output blob: the first blob of the store may be a cell's log,
	// which no cell reads, so damaging it would recompute nothing.
	_, blob := outputBlob(t, dir, slices.Sorted(maps.Keys(want))[0])
	b, _ := os.ReadFile(blob)
	b[len(b)/2] ^= 1
	os.Chmod(blob, 0o644)
	os.WriteFile(blob, b, 0o644)
	out, err := repro(t, dir, "verify")
	if err == nil || !strings.Contains(out, "CORRUPT") {
		t.Fatalf("verify did not report the flipped byte: %v\n%s", err, out)
	}
	out = mustRepro(t, dir, "run")
	if !strings.Contains(out, "ran ") {
		t.Fatalf("run after verify recomputed nothing: %s", out)
	}
	got := planState(t, dir)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %s after repair, %s before", id, got[id], w)
		}
	}
}

func TestVerifyRecompute(t *testing.T) {
	t.Parallel()
	dir := workdir(t, "cells = 6\nwidth = 3\nfan_in = 1\nwork = 10\n")
	mustRepro(t, dir, "run")
	out := mustRepro(t, dir, "verify", "--recompute", "synth/l1/*")
	if !strings.Contains(out, "recomputed 3 cells matching \"synth/l1/*\": 0 differing output(s)") || !strings.Contains(out, "same    synth/l1/c4 (") {
		t.Fatalf("verify --recompute: %s", out)
	}
}

func TestFailingCellExitStatus(t *testing.T) {
	t.Parallel()
	dir := workdir(t, "cells = 6\nwidth = 3\nfan_in = 1\nfail = [1]\n")
	out, err := repro(t, dir, "run")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("run with a failing cell: err %v\n%s", err, out)
	}
	for _, want := range []string{"1 failed, 1 blocked", "synth/l0/c1", "fails on purpose"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	plan := mustRepro(t, dir, "plan")
	if !strings.Contains(plan, "failed last time: cell synth/l0/c1") {
		t.Errorf("plan does not say the cell failed:\n%s", plan)
	}
}

func TestConfigErrorNamesLine(t *testing.T) {
	t.Parallel()
	dir := workdir(t, "cells = 6\nwidht = 3\n")
	out, err := repro(t, dir, "plan")
	if err == nil || !strings.Contains(out, "pipeline.toml:6: synthetic.widht: unknown key") {
		t.Fatalf("plan with a typo: %v\n%s", err, out)
	}
}

func TestInterruptExits130(t *testing.T) {
	t.Parallel()
	dir := workdir(t, "cells = 4\nsleep_ms = 5000\n")
	cmd := exec.Command(reproBin, "run", "-j", "2")
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Start()
	time.Sleep(500 * time.Millisecond)
	cmd.Process.Signal(os.Interrupt)
	err := cmd.Wait()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
		t.Fatalf("interrupted run: %v\n%s", err, out.String())
	}
	_ = context.Background
}

func TestStatusReportsTheLastRunsIdleCoreSeconds(t *testing.T) {
	t.Parallel()
	dir := workdir(t, "cells = 6\nsleep_ms = 20\nsleep_spread = 3\n")
	mustRepro(t, dir, "run", "-j", "2")
	out := mustRepro(t, dir, "status")
	re := regexp.MustCompile(`last run \S+ \S+: 6 cells executed, 0 cached, 0 failed or skipped in [0-9.]+s wall at -j 2 \(local executor\); core-seconds busy [0-9.]+s, idle [0-9.]+s \([0-9.]+% of wall x jobs\); cell CPU [0-9.]+s`)
	if !re.MatchString(out) {
		t.Fatalf("status has no line on the last run:\n%s", out)
	}
	// --cost lists each experiment's recorded CPU time and counts the cells
	// without a record.
	out = mustRepro(t, dir, "status", "--cost")
	if !strings.Contains(out, "EXPERIMENT") || !strings.Contains(out, "│ synth/l0/c0 ") ||
		!regexp.MustCompile(`profile default: 6 cells with a record, CPU [0-9.]+s; 0 cells without one`).MatchString(out) {
		t.Fatalf("status --cost:\n%s", out)
	}
	// A run with nothing to do leaves the record alone.
	mustRepro(t, dir, "run", "-j", "1")
	if out := mustRepro(t, dir, "status"); !strings.Contains(out, "at -j 2") {
		t.Fatalf("a no-op run replaced the last run:\n%s", out)
	}
}

// TestDamagedOutputRecomputedWithoutVerify: a flipped byte and a truncation
// in cached outputs are caught by the next run itself (no verify first):
// it says so, recomputes exactly those cells in the same run, before any
// consumer reads them, and ends with the same outputs.
func TestDamagedOutputRecomputedWithoutVerify(t *testing.T) {
	t.Parallel()
	dir := workdir(t, "cells = 6\nwidth = 3\nfan_in = 1\n")
	mustRepro(t, dir, "run")
	want := planState(t, dir)
	ids := slices.Sorted(maps.Keys(want))
	for i, id := range ids[:2] {
		_, blob := outputBlob(t, dir, id)
		b, _ := os.ReadFile(blob)
		if i == 0 {
			b[len(b)/2] ^= 1
		} else {
			b = b[:len(b)-3]
		}
		os.Chmod(blob, 0o644)
		os.WriteFile(blob, b, 0o644)
	}
	out := mustRepro(t, dir, "run", "-q")
	for _, id := range ids[:2] {
		if !strings.Contains(out, "recomputing "+id+": its stored output is damaged: cell "+id+": output out: blob ") {
			t.Errorf("run does not say it recomputes %s:\n%s", id, out)
		}
	}
	if !strings.Contains(out, "ran 2 cells (2 over a damaged stored output), 4 cached, 0 failed") {
		t.Errorf("run over damaged outputs:\n%s", out)
	}
	got := planState(t, dir)
	for id, w := range want {
		if got[id] != w {
			t.Errorf("%s: %s after repair, %s before", id, got[id], w)
		}
	}
	if out, err := repro(t, dir, "verify"); err != nil {
		t.Errorf("verify after the run: %v\n%s", err, out)
	}
}
