package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/BurntSushi/toml"

	"repro/artifacts"
	"repro/internal/buildstamp"
)

// The tests in this file drive the real `repro` CLI (built from
// ../../cmd/repro) through a real Slurm cluster, on the synthetic pipeline
// (stages/synth.go), whose cells sleep and fail on demand.

// buildRepro builds the repro binary once per test binary run.
func buildRepro(t *testing.T) string {
	t.Helper()
	gobin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("slurm CLI test: go not in PATH, cannot build repro")
	}
	bin := filepath.Join(t.TempDir(), "repro")
	// Stamped as by make build (package buildstamp): exec-cell on the
	// nodes records the commit.
	flags, err := buildstamp.BuildFlags("../..")
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(gobin, append(append([]string{"build"}, flags...), "-o", bin, "./cmd/repro")...)
	cmd.Dir = "../.."
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/repro: %v\n%s", err, out)
	}
	return bin
}

// synthConfig writes a pipeline.toml for a synthetic pipeline into a new
// directory and returns the directory.
func synthConfig(t *testing.T, body string) string {
	t.Helper()
	dir := t.TempDir()
	src := "[settings]\nstore = \"store\"\n\n[synthetic]\n" + body
	if err := os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// repro runs the CLI in dir and returns its combined output and exit code.
func repro(ctx context.Context, t *testing.T, bin, dir string, args ...string) (string, int) {
	t.Helper()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	var ee *exec.ExitError
	switch {
	case err == nil:
		return string(out), 0
	case errors.As(err, &ee):
		return string(out), ee.ExitCode()
	}
	t.Fatalf("repro %v: %v", args, err)
	return "", -1
}

// storeOutputs maps each cell's ID to its output digests, read from the
// manifests of the store at dir.
func storeOutputs(t *testing.T, dir string) map[string]string {
	t.Helper()
	st, err := artifacts.Open(dir, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	err = filepath.WalkDir(filepath.Join(dir, "cells"), func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".json") {
			return err
		}
		k, err := artifacts.ParseKey(strings.TrimSuffix(d.Name(), ".json"))
		if err != nil {
			return err
		}
		m, err := st.Lookup(k)
		if err != nil {
			return fmt.Errorf("manifest %s: %w", path, err)
		}
		var outs []string
		for _, o := range m.Outputs {
			outs = append(outs, o.Name+"="+o.Digest.String())
		}
		got[m.CellID] = k.String() + " " + strings.Join(outs, " ")
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// storeJobs lists the jobs the cluster knows (queued, running, or ended
// within MinJobAge) for the store at dir, by cell key.
func storeJobs(t *testing.T, dir string) map[string][]liveJob {
	t.Helper()
	out, err := exec.Command("squeue", "-h", "-t", "all", "-o", listFormat).Output()
	if err != nil {
		t.Fatalf("squeue: %v", err)
	}
	tag := storeTag(dir)
	jobs := map[string][]liveJob{}
	for _, line := range splitLines(out) {
		f := strings.SplitN(line, "|", 4)
		if len(f) == 4 && strings.HasPrefix(f[3], commentPrefix) && strings.HasSuffix(f[3], " "+tag) {
			key := strings.Fields(f[3])[2]
			jobs[key] = append(jobs[key], liveJob{ID: f[0], Name: f[1], State: parseState(f[2])})
		}
	}
	return jobs
}

// waitJobs waits until n jobs of the store are queued or running, at
// least one of them running, and returns them. (On a small cluster some
// stay PENDING; adoption and cancellation must handle both.)
func waitJobs(t *testing.T, dir string, n int) map[string][]liveJob {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for {
		jobs := storeJobs(t, dir)
		live, running := 0, 0
		for _, js := range jobs {
			for _, j := range js {
				if !j.State.Terminal() {
					live++
				}
				if j.State == "RUNNING" {
					running++
				}
			}
		}
		if live >= n && running > 0 {
			return jobs
		}
		if time.Now().After(deadline) {
			t.Fatalf("store %s: %d jobs live, %d running after 60s, want %d live: %v", dir, live, running, n, jobs)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var slurmHeader = regexp.MustCompile(`(?m)^repro-slurm: job (\d+) on `)

func TestSlurmCLI(t *testing.T) {
	requireSlurm(t)
	bin := buildRepro(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	t.Run("outputs identical to local", func(t *testing.T) {
		dir := synthConfig(t, "cells = 12\nwidth = 4\nfan_in = 2\nwork = 2000\nsleep_ms = 100\nsalt = \"same\"\n")
		t0 := time.Now()
		if out, code := repro(ctx, t, bin, dir, "run", "-q", "-j", "4", "--store", "local"); code != 0 {
			t.Fatalf("local run: exit %d\n%s", code, out)
		}
		local := time.Since(t0)
		t0 = time.Now()
		if out, code := repro(ctx, t, bin, dir, "run", "-q", "-j", "4", "--executor", "slurm", "--store", "slurm"); code != 0 {
			t.Fatalf("slurm run: exit %d\n%s", code, out)
		}
		remote := time.Since(t0)
		t.Logf("12 cells in 3 layers, -j 4: local %v, slurm %v", local.Round(time.Millisecond), remote.Round(time.Millisecond))
		want, got := storeOutputs(t, filepath.Join(dir, "local")), storeOutputs(t, filepath.Join(dir, "slurm"))
		if len(want) != 12 || !mapsEqual(got, want) {
			t.Errorf("slurm outputs differ from local:\n got %v\nwant %v", got, want)
		}
		// Provenance says where each cell ran.
		st, _ := artifacts.Open(filepath.Join(dir, "slurm"), artifacts.Options{})
		for _, v := range got {
			k, _ := artifacts.ParseKey(strings.Fields(v)[0])
			m, err := st.Lookup(k)
			if err != nil || m.Provenance.Executor != "slurm" || m.Provenance.SlurmJob == "" {
				t.Errorf("cell %s provenance executor %q job %q (%v), want slurm and a job ID", k.Short(), m.Provenance.Executor, m.Provenance.SlurmJob, err)
				continue
			}
			// exec-cell on the node names the source, CPU and kernels.
			if src, _ := buildstamp.Compute("../.."); m.Provenance.Revision != src.Revision || m.Provenance.DirtyDiff != src.Diff || m.Provenance.CPU == "" || m.Provenance.Kernels == "" {
				t.Errorf("cell %s provenance %+v, want revision %s (changes %q), a CPU and a kernel path", k.Short(), m.Provenance, src.Revision, src.Diff)
			}
		}
		// A second run does nothing and submits nothing.
		before := len(storeJobs(t, filepath.Join(dir, "slurm")))
		if out, code := repro(ctx, t, bin, dir, "run", "-q", "--executor", "slurm", "--store", "slurm"); code != 0 || !strings.Contains(out, "nothing to do") {
			t.Errorf("second slurm run: exit %d, output %q, want 0 and nothing to do", code, out)
		}
		if after := len(storeJobs(t, filepath.Join(dir, "slurm"))); after != before {
			t.Errorf("second run submitted jobs: %d cells with jobs, was %d", after, before)
		}
	})

	t.Run("failed cell reports state and log", func(t *testing.T) {
		dir := synthConfig(t, "cells = 4\nwidth = 4\nfail = [2]\nsalt = \"fail\"\n")
		out, code := repro(ctx, t, bin, dir, "run", "-q", "-j", "4", "--executor", "slurm")
		if code != 1 {
			t.Fatalf("run with a failing cell: exit %d, want 1\n%s", code, out)
		}
		for _, want := range []string{"synth/l0/c2", "FAILED", "exit 1:0", ".slurm.log", "fails on purpose"} {
			if !strings.Contains(out, want) {
				t.Errorf("output lacks %q:\n%s", want, out)
			}
		}
		t.Logf("failure summary:\n%s", out)
	})

	t.Run("driver killed and restarted adopts running jobs", func(t *testing.T) {
		dir := synthConfig(t, "cells = 4\nwidth = 4\nsleep_ms = 4000\nsalt = \"adopt\"\n")
		store := filepath.Join(dir, "store")
		driver := exec.CommandContext(ctx, bin, "run", "-q", "-j", "4", "--executor", "slurm")
		driver.Dir = dir
		if err := driver.Start(); err != nil {
			t.Fatal(err)
		}
		first := waitJobs(t, store, 4)
		driver.Process.Kill() // SIGKILL: no chance to scancel
		driver.Wait()
		if out, code := repro(ctx, t, bin, dir, "run", "-q", "-j", "4", "--executor", "slurm"); code != 0 {
			t.Fatalf("restarted run: exit %d\n%s", code, out)
		}
		after := storeJobs(t, store)
		if len(after) != 4 {
			t.Errorf("jobs after restart cover %d cells, want 4: %v", len(after), after)
		}
		for key, js := range after {
			if len(js) != 1 || len(first[key]) != 1 || js[0].ID != first[key][0].ID {
				t.Errorf("cell %s: jobs %v after restart, want only the first driver's %v", key[:12], js, first[key])
				continue
			}
			log, _ := os.ReadFile(filepath.Join(store, "logs", key+".slurm.log"))
			if m := slurmHeader.FindAllSubmatch(log, -1); len(m) != 1 || string(m[0][1]) != js[0].ID {
				t.Errorf("cell %s: slurm log %q, want one header from job %s", key[:12], log, js[0].ID)
			}
		}
	})

	t.Run("interrupt scancels the driver's jobs", func(t *testing.T) {
		dir := synthConfig(t, "cells = 4\nwidth = 4\nsleep_ms = 120000\nsalt = \"interrupt\"\n")
		store := filepath.Join(dir, "store")
		driver := exec.CommandContext(ctx, bin, "run", "-q", "-j", "4", "--executor", "slurm")
		driver.Dir = dir
		var out bytes.Buffer
		driver.Stdout, driver.Stderr = &out, &out
		if err := driver.Start(); err != nil {
			t.Fatal(err)
		}
		waitJobs(t, store, 4)
		t0 := time.Now()
		driver.Process.Signal(syscall.SIGINT)
		err := driver.Wait()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 130 {
			t.Errorf("interrupted driver: %v, want exit 130\n%s", err, out.String())
		}
		t.Logf("driver exited %v after SIGINT", time.Since(t0).Round(time.Millisecond))
		deadline := time.Now().Add(30 * time.Second)
		for {
			var states []string
			done := true
			for key, js := range storeJobs(t, store) {
				for _, j := range js {
					states = append(states, key[:12]+":"+string(j.State))
					done = done && j.State == StateCancelled
				}
			}
			sort.Strings(states)
			if done && len(states) == 4 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("jobs after SIGINT: %v, want 4 CANCELLED", states)
			}
			time.Sleep(100 * time.Millisecond)
		}
	})
}

// TestSlurmSmoke runs part of the repository's smoke profile (real MNIST,
// from the data mirror) locally and through Slurm, and compares every
// output digest. The default part is the cells of bp-static and everything
// they need (download, prepare, split, streams, train: 7 cells, a minute
// on a busy 2-core machine); REPRO_SLURM_SMOKE=full runs the whole profile
// (about 130 cells; each of the two runs takes several minutes), any other
// value is a --only glob.
func TestSlurmSmoke(t *testing.T) {
	requireSlurm(t)
	repoConfig, err := filepath.Abs("../../pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	src, err := os.ReadFile(repoConfig)
	if err != nil || !bytes.Contains(src, []byte("[profile.smoke]")) {
		t.Skipf("slurm smoke test: %s has no [profile.smoke] (%v)", repoConfig, err)
	}
	// Run on a copy of the config, so that what the run renders next to it
	// (paper/) lands in a temporary directory, not in the checkout. The
	// data mirror, relative to the original, is passed by environment.
	dir := t.TempDir()
	config := filepath.Join(dir, "pipeline.toml")
	if err := os.WriteFile(config, src, 0o644); err != nil {
		t.Fatal(err)
	}
	// Inputs the config names next to itself: paper/published.toml and the
	// authors' reruns of the disputed rows (paper/reference-runs/*.tsv).
	root := filepath.Dir(repoConfig)
	inputs, _ := filepath.Glob(filepath.Join(root, "paper", "*.toml"))
	runs, _ := filepath.Glob(filepath.Join(root, "paper", "reference-runs", "*.tsv"))
	for _, f := range append(inputs, runs...) {
		rel, err := filepath.Rel(root, f)
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(f)
		if err == nil {
			err = os.MkdirAll(filepath.Join(dir, filepath.Dir(rel)), 0o755)
		}
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, rel), b, 0o644)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if os.Getenv("REPRO_DATA_MIRROR") == "" {
		var c struct {
			Settings struct {
				DataMirror string `toml:"data_mirror"`
			} `toml:"settings"`
		}
		if _, err := toml.Decode(string(src), &c); err == nil && c.Settings.DataMirror != "" {
			mirror := c.Settings.DataMirror
			if !filepath.IsAbs(mirror) {
				mirror = filepath.Join(filepath.Dir(repoConfig), mirror)
			}
			t.Setenv("REPRO_DATA_MIRROR", mirror)
		}
	}
	only := os.Getenv("REPRO_SLURM_SMOKE")
	switch only {
	case "":
		only = "train/bp-static/*/*/*"
	case "full":
		only = ""
	}
	bin := buildRepro(t)
	ctx, cancel := context.WithTimeout(context.Background(), 25*time.Minute)
	defer cancel()
	args := func(store string, extra ...string) []string {
		a := []string{"run", "-q", "-j", "2", "--config", config, "--profile", "smoke", "--store", filepath.Join(dir, store)}
		if only != "" {
			a = append(a, "--only", only)
		}
		return append(a, extra...)
	}
	t0 := time.Now()
	out, code := repro(ctx, t, bin, dir, args("local")...)
	if code != 0 {
		t.Fatalf("local smoke run: exit %d\n%s", code, out)
	}
	local := time.Since(t0)
	t0 = time.Now()
	out, code = repro(ctx, t, bin, dir, args("slurm", "--executor", "slurm")...)
	if code != 0 {
		t.Fatalf("slurm smoke run: exit %d\n%s", code, out)
	}
	remote := time.Since(t0)
	want, got := storeOutputs(t, filepath.Join(dir, "local")), storeOutputs(t, filepath.Join(dir, "slurm"))
	// The machine may be shared, so the two wall times alone compare
	// loads as much as executors. Each run's idle slot time per cell,
	// (elapsed x slots - sum of the cells' own wall time) / cells, is what
	// the executor adds around a cell (plus dependency waits, the same in
	// both runs); the difference is the Slurm path's overhead per cell.
	n := float64(max(len(want), 1))
	idleL := (2*local.Seconds() - sumWall(t, filepath.Join(dir, "local"))) / n
	idleS := (2*remote.Seconds() - sumWall(t, filepath.Join(dir, "slurm"))) / n
	t.Logf("smoke (--only %q): %d cells, -j 2: local %v, slurm %v; idle slot time per cell: local %.2f s, slurm %.2f s; Slurm overhead %.2f s per cell",
		only, len(want), local.Round(time.Millisecond), remote.Round(time.Millisecond), idleL, idleS, idleS-idleL)
	if len(want) == 0 || !mapsEqual(got, want) {
		t.Errorf("slurm outputs differ from local:\n got %v\nwant %v", got, want)
	}
}

// sumWall adds up the wall seconds the store's manifests record for their
// cells (time inside the cell, as measured by exec-cell).
func sumWall(t *testing.T, dir string) float64 {
	t.Helper()
	st, err := artifacts.Open(dir, artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	sum := 0.0
	for _, v := range storeOutputs(t, dir) {
		k, _ := artifacts.ParseKey(strings.Fields(v)[0])
		if m, err := st.Lookup(k); err == nil {
			sum += m.Provenance.WallSecs
		}
	}
	return sum
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
