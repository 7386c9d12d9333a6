package slurm

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"repro/pipeline"
)

// These tests need a real Slurm cluster whose nodes share this machine's
// filesystem: .ci/slurm/start.sh brings one up on loopback (as root).
// Without sbatch they skip; with sbatch but no answering controller they
// skip too, unless REPRO_SLURM_REQUIRED=1 (set by .ci/run), when they fail.
func requireSlurm(t testing.TB) {
	t.Helper()
	if testing.Short() {
		t.Skip("slurm integration test: skipped in -short mode")
	}
	if _, err := exec.LookPath("sbatch"); err != nil {
		t.Skip("slurm integration test: sbatch not found in PATH; run .ci/slurm/start.sh (as root) for a local cluster")
	}
	if out, err := exec.Command("scontrol", "ping").CombinedOutput(); err != nil || !strings.Contains(string(out), "UP") {
		first, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
		msg := fmt.Sprintf("slurm integration test: sbatch is installed but no controller answers (scontrol ping: %q, %v); run .ci/slurm/start.sh", first, err)
		if os.Getenv("REPRO_SLURM_REQUIRED") == "1" {
			t.Fatal(msg)
		}
		t.Skip(msg)
	}
}

// fakeRepro is a stand-in for `repro exec-cell --store DIR KEY...`: for
// each key in turn it records its Slurm job ID under DIR/runs/KEY, then
// behaves as DIR/mode/KEY says (ok, fail, or sleepN), and publishes
// DIR/cells/KEY by rename on success; a failed key fails the job after the
// rest have run, as exec-cell does.
const fakeRepro = `#!/bin/sh
set -eu
[ "$1" = exec-cell ] && [ "$2" = --executor ] && [ "$4" = --store ] || { echo "fake repro: bad argv: $*" >&2; exit 2; }
store=$5
shift 5
status=0
for key in "$@"; do
mode=$(cat "$store/mode/$key" 2>/dev/null || echo ok)
echo "${SLURM_JOB_ID:-none}" >> "$store/runs/$key"
echo "fake exec-cell $key: $mode"
case $mode in
ok) ;;
fail) echo "stage exploded on purpose" >&2; status=3; continue ;;
sleep*) sleep "${mode#sleep}" ;;
esac
echo done > "$store/cells/$key.tmp"
mv "$store/cells/$key.tmp" "$store/cells/$key"
done
exit $status
`

type fakeStore struct {
	dir string
	bin string
}

func newFakeStore(t testing.TB) *fakeStore {
	t.Helper()
	dir := t.TempDir()
	for _, d := range []string{"runs", "mode", "cells", "logs", "bin"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "bin", "repro")
	if err := os.WriteFile(bin, []byte(fakeRepro), 0o755); err != nil {
		t.Fatal(err)
	}
	return &fakeStore{dir: dir, bin: bin}
}

func (s *fakeStore) job(i int, mode string) *pipeline.Job {
	key := testKey(i)
	if mode != "" {
		os.WriteFile(filepath.Join(s.dir, "mode", key), []byte(mode+"\n"), 0o644)
	}
	return &pipeline.Job{
		Key: jobKey(i), CellID: fmt.Sprintf("fake/%d", i), StoreDir: s.dir,
		LogPath: filepath.Join(s.dir, "logs", key+".log"), RunID: "itest",
	}
}

func (s *fakeStore) check(ctx context.Context, job *pipeline.Job) (bool, error) {
	_, err := os.Stat(filepath.Join(s.dir, "cells", job.Key.String()))
	return err == nil, nil
}

// runs returns the Slurm job IDs that ran the cell.
func (s *fakeStore) runs(key string) []string {
	b, _ := os.ReadFile(filepath.Join(s.dir, "runs", key))
	return splitLines(b)
}

func (s *fakeStore) executor(t testing.TB) *Executor {
	t.Helper()
	return s.executorBatch(t, 0)
}

// executorBatch is executor with up to batch cells per job.
func (s *fakeStore) executorBatch(t testing.TB, batch int) *Executor {
	t.Helper()
	e, err := New(Options{Binary: s.bin, Check: s.check, ScriptDir: t.TempDir(), Batch: batch})
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// jobState asks scontrol for a job's state (the cluster keeps ended jobs
// for MinJobAge).
func jobState(t *testing.T, id string) State {
	out, err := exec.Command("scontrol", "show", "job", "-o", id).Output()
	if err != nil {
		t.Fatalf("scontrol show job %s: %v", id, err)
	}
	st, ok, err := parseScontrol(out, id)
	if err != nil || !ok {
		t.Fatalf("scontrol show job %s: %q: %v", id, out, err)
	}
	return st.State
}

func TestSlurmCells(t *testing.T) {
	requireSlurm(t)
	s := newFakeStore(t)
	e := s.executor(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("ok cells run once each", func(t *testing.T) {
		const n = 6
		var wg sync.WaitGroup
		errs := make([]error, n)
		start := time.Now()
		for i := range n {
			wg.Go(func() { errs[i] = e.Execute(ctx, s.job(i, "ok")) })
		}
		wg.Wait()
		t.Logf("%d trivial cells through Slurm, all at once: %v", n, time.Since(start).Round(time.Millisecond))
		for i, err := range errs {
			if err != nil {
				t.Errorf("cell %d: %v", i, err)
			}
			if r := s.runs(testKey(i)); len(r) != 1 {
				t.Errorf("cell %d ran in jobs %v, want exactly one", i, r)
			}
		}
	})

	t.Run("failure names state and logs", func(t *testing.T) {
		job := s.job(100, "fail")
		err := e.Execute(ctx, job)
		var je *JobError
		if !errors.As(err, &je) {
			t.Fatalf("Execute = %v, want *JobError", err)
		}
		if je.State != StateFailed || je.ExitCode != "3:0" || je.LastLine != "stage exploded on purpose" {
			t.Errorf("JobError = %+v, want FAILED exit 3:0, last line from the job", je)
		}
		msg := err.Error()
		for _, want := range []string{"FAILED", job.LogPath, slurmLog(job.LogPath), "stage exploded"} {
			if !strings.Contains(msg, want) {
				t.Errorf("error %q lacks %q", msg, want)
			}
		}
		t.Logf("failure reported as: %v", err)
	})

	t.Run("job cancelled by someone else", func(t *testing.T) {
		job := s.job(150, "sleep60")
		errc := make(chan error, 1)
		go func() { errc <- e.Execute(ctx, job) }()
		id := waitRunning(t, s, []int{150})[0]
		if out, err := exec.Command("scancel", id).CombinedOutput(); err != nil {
			t.Fatalf("scancel %s: %v %s", id, err, out)
		}
		err := <-errc
		var je *JobError
		if !errors.As(err, &je) || je.State != StateCancelled || je.JobID != id {
			t.Fatalf("Execute = %v, want CANCELLED job %s", err, id)
		}
		t.Logf("reported as: %v", err)
	})

	t.Run("cancel scancels", func(t *testing.T) {
		cctx, ccancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		errs := make([]error, 3)
		for i := range 3 {
			wg.Go(func() { errs[i] = e.Execute(cctx, s.job(200+i, "sleep60")) })
		}
		var ids []string
		for key, js := range waitJobs(t, s.dir, 3) { // earlier subtests' jobs have ended
			for _, j := range js {
				if key == testKey(200) || key == testKey(201) || key == testKey(202) {
					ids = append(ids, j.ID)
				}
			}
		}
		ccancel()
		wg.Wait()
		for i, err := range errs {
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cell %d: Execute = %v, want context.Canceled", i, err)
			}
		}
		if len(ids) != 3 {
			t.Errorf("jobs %v, want 3", ids)
		}
		for _, id := range ids {
			if st := waitTerminal(t, id); st != StateCancelled {
				t.Errorf("job %s is %s after cancel, want CANCELLED", id, st)
			}
		}
	})

	t.Run("restarted driver adopts", func(t *testing.T) {
		// Driver 1 submits and is abandoned (as if killed: its context is
		// never cancelled, so it does not scancel).
		job := s.job(300, "sleep3")
		first := s.executor(t)
		go first.Execute(context.Background(), job)
		ids := waitRunning(t, s, []int{300})
		// Driver 2 starts from scratch and asks for the same cell.
		second := s.executor(t)
		if err := second.Execute(ctx, job); err != nil {
			t.Fatalf("second driver: %v", err)
		}
		if r := s.runs(job.Key.String()); len(r) != 1 || r[0] != ids[0] {
			t.Errorf("cell ran in jobs %v, want only the first driver's %s", r, ids[0])
		}
	})
}

// waitRunning waits until each cell's job has started (recorded its job
// ID) and returns the job IDs.
func waitRunning(t *testing.T, s *fakeStore, cells []int) []string {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		var ids []string
		for _, i := range cells {
			if r := s.runs(testKey(i)); len(r) > 0 {
				ids = append(ids, r[0])
			}
		}
		if len(ids) == len(cells) {
			return ids
		}
		if time.Now().After(deadline) {
			t.Fatalf("cells %v not all running after 30s (%v)", cells, ids)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func waitTerminal(t *testing.T, id string) State {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		st := jobState(t, id)
		if st.Terminal() || time.Now().After(deadline) {
			return st
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestSlurmTimeout lets a job run past its time limit (one minute, the
// smallest sbatch accepts) and checks the TIMEOUT state is reported. It
// takes one to two minutes, so it runs only with REPRO_SLURM_LONG=1.
func TestSlurmTimeout(t *testing.T) {
	requireSlurm(t)
	if os.Getenv("REPRO_SLURM_LONG") != "1" {
		t.Skip("slurm timeout test: takes over a minute; set REPRO_SLURM_LONG=1")
	}
	s := newFakeStore(t)
	e, err := New(Options{Binary: s.bin, Check: s.check, ScriptDir: t.TempDir(), Time: "1"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	job := s.job(400, "sleep600")
	start := time.Now()
	err = e.Execute(ctx, job)
	var je *JobError
	if !errors.As(err, &je) || je.State != StateTimeout {
		t.Fatalf("Execute = %v, want TIMEOUT", err)
	}
	t.Logf("after %v: %v", time.Since(start).Round(time.Second), err)
}

// BenchmarkExecute measures what a trivial cell costs through Slurm (the
// fake exec-cell: a shell script that writes one file) against running the
// same command directly, with j cells in flight, one job per cell or j
// cells per job (--batch j). It reports s/cell.
func BenchmarkExecute(b *testing.B) {
	requireSlurm(b)
	for _, j := range []int{1, 4, 16} {
		b.Run(fmt.Sprintf("slurm/j=%d", j), func(b *testing.B) { benchmarkExecute(b, j, 0, true) })
		if j > 1 {
			b.Run(fmt.Sprintf("slurm-batch/j=%d", j), func(b *testing.B) { benchmarkExecute(b, j, j, true) })
		}
		b.Run(fmt.Sprintf("exec/j=%d", j), func(b *testing.B) { benchmarkExecute(b, j, 0, false) })
	}
}

func benchmarkExecute(b *testing.B, j, batch int, viaSlurm bool) {
	s := newFakeStore(b)
	e := s.executorBatch(b, batch)
	ctx := context.Background()
	next := 0
	for b.Loop() {
		var wg sync.WaitGroup
		for range j {
			job := s.job(1000+next, "ok")
			next++
			wg.Go(func() {
				var err error
				if viaSlurm {
					err = e.Execute(ctx, job)
				} else {
					err = exec.Command(s.bin, "exec-cell", "--executor", "local", "--store", s.dir, job.Key.String()).Run()
				}
				if err != nil {
					b.Error(err)
				}
			})
		}
		wg.Wait()
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(next), "s/cell")
}
