package slurm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"repro/pipeline"
)

func TestJobName(t *testing.T) {
	t.Parallel()
	key := testKey(1)
	tests := []struct{ run, want string }{
		{"r1", "repro-r1-" + key[:12]},
		{"", "repro-run-" + key[:12]},
		{"a b;$(rm -rf /)", "repro-a_b___rm_-rf___-" + key[:12]},
		{"0123456789abcdefghijklmnopqrstuvwxyz", "repro-0123456789abcdefghijklmn-" + key[:12]},
	}
	for _, tt := range tests {
		if got := jobName(tt.run, key); got != tt.want {
			t.Errorf("jobName(%q) = %q, want %q", tt.run, got, tt.want)
		}
	}
}

func TestSbatchArgs(t *testing.T) {
	t.Parallel()
	e := newTestExecutor(t, newFake(), func(o *Options) {
		o.Partition, o.Time, o.Mem, o.CPUsPerTask = "debug", "10:00", "2G", 2
		o.ExtraArgs = []string{"--account=a b"}
	})
	job := &pipeline.Job{Key: jobKey(1), StoreDir: "/st ore/$(x)", LogPath: "/logs/c;1.log", RunID: "r"}
	got := e.sbatchArgs([]*pipeline.Job{job}, "repro-r-x", "/tmp/s.sh")
	want := []string{
		"--parsable", "--job-name=repro-r-x", "--comment=repro cell " + testKey(1) + " " + storeTag("/st ore/$(x)"),
		"--output=/logs/c;1.slurm.log", "--chdir=/st ore/$(x)",
		"--partition=debug", "--time=10:00", "--mem=2G", "--cpus-per-task=2", "--account=a b",
		"/tmp/s.sh", e.Binary(), "exec-cell", "--executor", "slurm", "--store", "/st ore/$(x)", testKey(1),
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("sbatchArgs =\n %q\nwant\n %q", got, want)
	}
}

// TestBatchScriptArgv runs the batch script the way slurmstepd does (sh
// script arg...) with arguments full of shell syntax: they must reach the
// command unchanged.
func TestBatchScriptArgv(t *testing.T) {
	t.Parallel()
	e := newTestExecutor(t, newFake(), nil)
	script, err := e.script()
	if err != nil {
		t.Fatal(err)
	}
	if again, _ := e.script(); again != script {
		t.Errorf("script() twice = %s, %s", script, again)
	}
	args := []string{"a b", "$(touch /tmp/pwned)", "`x`", "; echo no", "'\"", "*"}
	cmd := exec.Command(script, append([]string{"/usr/bin/printf", `%s\n`}, args...)...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Split(strings.TrimSuffix(string(out), "\n"), "\n"); !reflect.DeepEqual(got, args) {
		t.Errorf("script ran %q, want %q", got, args)
	}
}

func TestExecuteOutcomes(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		acct      bool
		purge     bool
		end       State
		exit      string
		noStore   bool   // COMPLETED but the manifest never appears
		wantState State  // "" = success
		wantFrom  string // which command told the state
	}{
		{name: "completed, no accounting", end: StateCompleted, exit: "0:0"},
		{name: "completed, accounting", acct: true, end: StateCompleted, exit: "0:0"},
		{name: "completed, purged, no accounting, manifest in store", purge: true, end: StateCompleted, exit: "0:0"},
		{name: "completed without manifest", end: StateCompleted, exit: "0:0", noStore: true, wantState: StateCompleted, wantFrom: "squeue"},
		{name: "completed without manifest, purged", purge: true, end: StateCompleted, exit: "0:0", noStore: true, wantState: StateUnknown, wantFrom: "none"},
		{name: "failed, no accounting", end: StateFailed, exit: "1:0", wantState: StateFailed, wantFrom: "scontrol"},
		{name: "failed, accounting", acct: true, end: StateFailed, exit: "1:0", wantState: StateFailed, wantFrom: "sacct"},
		{name: "timeout", acct: true, end: StateTimeout, exit: "0:0", wantState: StateTimeout, wantFrom: "sacct"},
		{name: "out of memory", end: StateOutOfMemory, exit: "0:125", wantState: StateOutOfMemory, wantFrom: "scontrol"},
		{name: "node fail", end: StateNodeFail, exit: "0:0", wantState: StateNodeFail, wantFrom: "scontrol"},
		{name: "cancelled by someone", acct: true, end: StateCancelled, exit: "0:15", wantState: StateCancelled, wantFrom: "sacct"},
		{name: "failed and purged, no accounting", purge: true, end: StateFailed, exit: "1:0", wantState: StateUnknown, wantFrom: "none"},
		{name: "failed and purged, accounting", purge: true, acct: true, end: StateFailed, exit: "1:0", wantState: StateFailed, wantFrom: "sacct"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake()
			f.acct, f.purge = tt.acct, tt.purge
			f.end = func(j *fakeJob) (State, string) { return tt.end, tt.exit }
			e := newTestExecutor(t, f, nil)
			if tt.noStore {
				e.opts.Check = func(context.Context, *pipeline.Job) (bool, error) { return false, nil }
			}
			job := testJob(t, 1)
			err := e.Execute(context.Background(), job)
			if tt.wantState == "" {
				if err != nil {
					t.Fatalf("Execute = %v, want nil", err)
				}
				return
			}
			var je *JobError
			if !errors.As(err, &je) {
				t.Fatalf("Execute = %v, want a *JobError", err)
			}
			if je.State != tt.wantState || je.Source != tt.wantFrom || je.Log != job.LogPath {
				t.Errorf("JobError = %+v, want state %s from %s, log %s", je, tt.wantState, tt.wantFrom, job.LogPath)
			}
			msg := err.Error()
			if !strings.Contains(msg, string(tt.wantState)) || !strings.Contains(msg, job.LogPath) || !strings.Contains(msg, slurmLog(job.LogPath)) {
				t.Errorf("error %q does not name state %s, log %s and slurm output", msg, tt.wantState, job.LogPath)
			}
			if tt.acct {
				return
			}
			// Without accounting sacct is asked at most once, then never
			// again.
			if n := f.count("sacct"); n > 1 {
				t.Errorf("sacct called %d times, want at most 1", n)
			}
		})
	}
}

// TestExecuteBatchesPolls runs many cells at once: squeue must be called
// once per tick for all of them, not once per cell.
func TestExecuteBatchesPolls(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.steps = 3
	e := newTestExecutor(t, f, func(o *Options) { o.PollMin, o.PollMax = 5*time.Millisecond, 5*time.Millisecond })
	const n = 30
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = e.Execute(context.Background(), testJob(t, i)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("cell %d: %v", i, err)
		}
	}
	polls := f.count("squeue -h -t all")
	// Each job needs 7 observations; n separate pollers would need n*7.
	if polls > 3*7 {
		t.Errorf("squeue polls = %d for %d jobs, want a few per tick (<= 21)", polls, n)
	}
	if lists := f.count("squeue -h --user="); lists != 1 {
		t.Errorf("adoption listings = %d, want 1", lists)
	}
	e.mu.Lock()
	polling, left := e.polling, len(e.waiters)
	e.mu.Unlock()
	if left != 0 {
		t.Errorf("%d waiters left", left)
	}
	_ = polling // the poller exits at its next tick; not asserted to avoid a race
}

// TestExecuteAdopts: a previous driver left jobs queued and running for
// two cells; Execute waits on them and submits only the third.
func TestExecuteAdopts(t *testing.T) {
	t.Parallel()
	f := newFake()
	jobs := []*pipeline.Job{testJob(t, 0), testJob(t, 1), testJob(t, 2), testJob(t, 3)}
	running := f.addLive(jobs[0].Key.String(), jobs[0].StoreDir, "RUNNING")
	pending := f.addLive(jobs[1].Key.String(), jobs[1].StoreDir, "PENDING")
	f.addLive(jobs[3].Key.String(), "/another/store", "RUNNING") // same cell elsewhere: not ours
	e := newTestExecutor(t, f, nil)
	for i, job := range jobs {
		if err := e.Execute(context.Background(), job); err != nil {
			t.Fatalf("cell %d: %v", i, err)
		}
	}
	if n := f.count("sbatch"); n != 2 {
		t.Errorf("sbatch called %d times, want 2 (two cells adopted)", n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, id := range []string{running, pending} {
		if st := f.jobs[id].state; st != StateCompleted {
			t.Errorf("adopted job %s ended %s, want COMPLETED", id, st)
		}
	}
	if !f.store[testKey(2)] {
		t.Error("third cell not run")
	}
}

// TestExecuteCancel: cancelling the driver's context scancels every job,
// in one scancel call, and Execute returns context.Canceled.
func TestExecuteCancel(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.steps = 1 << 30 // never ends by itself
	e := newTestExecutor(t, f, nil)
	ctx, cancel := context.WithCancel(context.Background())
	const n = 5
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range n {
		wg.Go(func() { errs[i] = e.Execute(ctx, testJob(t, i)) })
	}
	for f.count("sbatch") < n {
		time.Sleep(time.Millisecond)
	}
	cancel()
	wg.Wait()
	for i, err := range errs {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cell %d: Execute = %v, want context.Canceled", i, err)
		}
	}
	if c := f.count("scancel"); c != 1 {
		t.Errorf("scancel called %d times, want 1 batch", c)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for id, j := range f.jobs {
		if j.state != StateCancelled {
			t.Errorf("job %s is %s after cancel, want CANCELLED", id, j.state)
		}
	}
}

func TestExecuteArrayLimit(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.steps = 2
	e := newTestExecutor(t, f, func(o *Options) { o.ArrayLimit = 2 })
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Go(func() {
			if err := e.Execute(context.Background(), testJob(t, i)); err != nil {
				t.Errorf("cell %d: %v", i, err)
			}
		})
	}
	wg.Wait()
	if f.maxLive > 2 {
		t.Errorf("at most %d jobs live at once, want <= 2", f.maxLive)
	}
}

func TestExecuteBadJob(t *testing.T) {
	t.Parallel()
	e := newTestExecutor(t, newFake(), nil)
	good := testJob(t, 1)
	tests := []struct {
		name string
		mod  func(j *pipeline.Job)
	}{
		{"relative store", func(j *pipeline.Job) { j.StoreDir = "store" }},
		{"relative log", func(j *pipeline.Job) { j.LogPath = "x.log" }},
	}
	for _, tt := range tests {
		j := *good
		tt.mod(&j)
		if err := e.Execute(context.Background(), &j); err == nil {
			t.Errorf("%s: Execute succeeded, want error", tt.name)
		}
	}
}

func TestNewBinary(t *testing.T) {
	t.Parallel()
	if _, err := New(Options{Binary: "/nonexistent/repro"}); err == nil {
		t.Error("New(missing binary) succeeded")
	}
	dir := t.TempDir()
	if err := os.WriteFile(dir+"/notexec", nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := New(Options{Binary: dir + "/notexec"}); err == nil {
		t.Error("New(non-executable binary) succeeded")
	}
	e, err := New(Options{})
	if err != nil || e.Binary() == "" {
		t.Errorf("New(default binary) = %v, %v", e, err)
	}
}

// TestExecuteProbesStore: a cell whose manifest appears is done, even
// while squeue (slow to notice) still says RUNNING.
func TestExecuteProbesStore(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.steps = 1 << 30 // squeue never sees it end
	e := newTestExecutor(t, f, func(o *Options) { o.PollMin, o.PollMax = time.Hour, time.Hour })
	job := testJob(t, 1)
	go func() {
		time.Sleep(20 * time.Millisecond)
		f.mu.Lock()
		f.store[job.Key.String()] = true
		f.mu.Unlock()
	}()
	start := time.Now()
	if err := e.Execute(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("Execute took %v, want about probeMin", d)
	}
	if n := f.count("squeue -h -t all"); n != 0 {
		t.Errorf("squeue polled %d times, want 0 (the store answered first)", n)
	}
}

func TestExecuteSubmitRetries(t *testing.T) {
	t.Parallel()
	const (
		timeout = "sbatch: error: Batch job submission failed: Socket timed out on send/recv operation"
		limit   = "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)"
		badPart = "sbatch: error: Batch job submission failed: Invalid partition name specified"
	)
	tests := []struct {
		name         string
		errs         []string
		submitAnyway bool
		wantErr      bool
		wantSbatch   int
		wantJobs     int
	}{
		{"timeouts then success", []string{timeout, timeout}, false, false, 3, 1},
		{"timeout but submitted", []string{timeout}, true, false, 1, 1},
		{"permanent error", []string{badPart}, false, true, 1, 0},
		{"submit limit with nothing in flight", []string{limit}, false, true, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			f := newFake()
			f.sbatchErr, f.submitAnyway = tt.errs, tt.submitAnyway
			e := newTestExecutor(t, f, nil)
			err := e.Execute(context.Background(), testJob(t, 1))
			if (err != nil) != tt.wantErr {
				t.Fatalf("Execute = %v, want error %v", err, tt.wantErr)
			}
			if tt.wantErr && !strings.Contains(err.Error(), "sbatch") {
				t.Errorf("error %q does not quote sbatch", err)
			}
			if n := f.count("sbatch"); n != tt.wantSbatch {
				t.Errorf("sbatch called %d times, want %d", n, tt.wantSbatch)
			}
			if n := len(f.jobs); n != tt.wantJobs {
				t.Errorf("%d jobs queued, want %d", n, tt.wantJobs)
			}
		})
	}
}

// TestExecuteListFails: when the queue cannot be listed for adoption, cells
// are still submitted, and the listing is tried again at the next Execute.
func TestExecuteListFails(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.listErr = 1
	old := testJob(t, 1)
	f.addLive(old.Key.String(), old.StoreDir, "RUNNING")
	e := newTestExecutor(t, f, nil)
	if err := e.Execute(context.Background(), testJob(t, 0)); err != nil {
		t.Fatalf("Execute with the listing failing: %v", err)
	}
	if err := e.Execute(context.Background(), old); err != nil {
		t.Fatal(err)
	}
	if n, lists := f.count("sbatch"), f.count("squeue -h --user="); n != 1 || lists != 2 {
		t.Errorf("sbatch %d times, listings %d; want 1 (second cell adopted) and 2", n, lists)
	}
}

// TestScriptNotPlanted re-runs the review's probe: a file or symlink put
// under the batch script's name before the first submission, or a folder
// others can write, is never used (and a planted file is left alone); the
// script written is a regular 0500 file of this user.
func TestScriptNotPlanted(t *testing.T) {
	t.Parallel()
	sum := sha256.Sum256([]byte(batchScript))
	name := "repro-slurm-" + hex.EncodeToString(sum[:6]) + ".sh"
	tests := []struct {
		name  string
		setup func(t *testing.T, dir string) string // returns the ScriptDir
		err   string                                // "" when script() must succeed
	}{
		{"fresh", func(t *testing.T, dir string) string { return dir }, ""},
		{"missing folder", func(t *testing.T, dir string) string { return filepath.Join(dir, "a", "b") }, ""},
		{"symlink to a file with the script's text", func(t *testing.T, dir string) string {
			other := filepath.Join(t.TempDir(), "attacker.sh")
			os.WriteFile(other, []byte(batchScript), 0o777)
			os.Symlink(other, filepath.Join(dir, name))
			return dir
		}, "is a symlink"},
		{"file writable by others", func(t *testing.T, dir string) string {
			p := filepath.Join(dir, name)
			os.WriteFile(p, []byte(batchScript), 0o644)
			os.Chmod(p, 0o666)
			return dir
		}, "writable by others"},
		{"a fifo under the name", func(t *testing.T, dir string) string {
			syscall.Mkfifo(filepath.Join(dir, name), 0o600)
			return dir
		}, "not a regular file"},
		{"world-writable folder (/tmp)", func(t *testing.T, dir string) string {
			os.Chmod(dir, 0o1777)
			return dir
		}, "writable by others"},
		{"folder is a symlink", func(t *testing.T, dir string) string {
			l := filepath.Join(t.TempDir(), "link")
			os.Symlink(dir, l)
			return l
		}, "is not a folder"},
		{"older script of this user", func(t *testing.T, dir string) string {
			os.WriteFile(filepath.Join(dir, name), []byte("#!/bin/sh\necho old\n"), 0o700)
			return dir
		}, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			dir := tt.setup(t, t.TempDir())
			e := newTestExecutor(t, newFake(), func(o *Options) { o.ScriptDir = dir })
			path, err := e.script()
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("script() = %q, %v; want an error saying %q", path, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			fi, err := os.Lstat(path)
			if err != nil {
				t.Fatal(err)
			}
			if !fi.Mode().IsRegular() || fi.Mode().Perm() != 0o500 && fi.Mode().Perm() != 0o700 {
				t.Errorf("script %s: mode %v, want a regular file only this user may write", path, fi.Mode())
			}
			if b, _ := os.ReadFile(path); string(b) != batchScript {
				t.Errorf("script %s holds %q", path, b)
			}
			if fi, _ := os.Stat(filepath.Dir(path)); fi.Mode().Perm()&0o077 != 0 && tt.name == "missing folder" {
				t.Errorf("a folder made for the script has mode %v, want 0700", fi.Mode().Perm())
			}
		})
	}
}

// The default script folder is the user's cache folder, never /tmp.
func TestDefaultScriptDir(t *testing.T) {
	t.Parallel()
	d, err := DefaultScriptDir()
	if err != nil {
		t.Skipf("no user cache folder: %v", err)
	}
	if strings.HasPrefix(d, os.TempDir()) {
		t.Errorf("DefaultScriptDir = %s, under the shared temporary folder", d)
	}
}
