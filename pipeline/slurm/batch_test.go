package slurm

import (
	"context"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"repro/pipeline"
)

// executeAll runs Execute for jobs concurrently, as the engine's workers do.
func executeAll(ctx context.Context, e *Executor, jobs []*pipeline.Job) []error {
	var wg sync.WaitGroup
	errs := make([]error, len(jobs))
	for i, j := range jobs {
		wg.Go(func() { errs[i] = e.Execute(ctx, j) })
	}
	wg.Wait()
	return errs
}

func cellJobs(dir string, n int) []*pipeline.Job {
	jobs := make([]*pipeline.Job, n)
	for i := range jobs {
		jobs[i] = storeJob(dir, i)
	}
	return jobs
}

// TestExecuteBatch: seven cells handed over at once, at most three per
// job, make three submissions, each running its cells by exec-cell with
// their keys; one failing cell fails alone, with its own line of the
// batch's output.
func TestExecuteBatch(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.failKeys = map[string]bool{testKey(4): true}
	e := newTestExecutor(t, f, func(o *Options) { o.Batch = 3 })
	dir := t.TempDir()
	jobs := cellJobs(dir, 7)
	// What exec-cell would print for the failing cell in its batch's
	// output, written as the job ends (before squeue reports it), so the
	// executor always finds it. On a loaded machine the cells may reach
	// the executor more than batchDelay apart and the failing one run
	// alone: its job's last line is then its error.
	f.end = func(j *fakeJob) (State, string) {
		if strings.Contains(j.key, testKey(4)) {
			first, _, batched := strings.Cut(j.key, ",")
			out := "repro exec-cell: cell " + testKey(4) + ": boom\n"
			if batched {
				out += "later line\n"
			}
			os.WriteFile(slurmLog(dir+"/"+first+".log"), []byte(out), 0o644)
		}
		return StateCompleted, "0:0"
	}
	got := executeAll(context.Background(), e, jobs)
	if n := f.count("sbatch"); n != 3 {
		t.Errorf("sbatch called %d times for 7 cells in batches of 3, want 3", n)
	}
	f.mu.Lock()
	sizes := map[int]int{}
	for _, j := range f.jobs {
		keys := strings.Split(j.key, ",")
		sizes[len(keys)]++
		tail := j.args[len(j.args)-len(keys):]
		if strings.Join(tail, ",") != j.key {
			t.Errorf("job %s runs %v, its comment names %s", j.id, tail, j.key)
		}
	}
	f.mu.Unlock()
	if sizes[3] != 2 || sizes[1] != 1 {
		t.Errorf("batch sizes %v, want two of 3 and one of 1", sizes)
	}
	for i, err := range got {
		var je *JobError
		switch {
		case i == 4 && (!errors.As(err, &je) || je.State != StateFailed || !strings.Contains(je.LastLine, "boom")):
			t.Errorf("failing cell: %v, want a FAILED JobError quoting its line", err)
		case i != 4 && err != nil:
			t.Errorf("cell %d: %v", i, err)
		}
	}
}

// TestExecuteBatchCancel: cancelling scancels each batch's job once.
func TestExecuteBatchCancel(t *testing.T) {
	t.Parallel()
	f := newFake()
	f.steps = 1 << 30
	e := newTestExecutor(t, f, func(o *Options) { o.Batch = 4 })
	ctx, cancel := context.WithCancel(context.Background())
	jobs := cellJobs(t.TempDir(), 8)
	go func() {
		for f.count("sbatch") < 2 {
			time.Sleep(time.Millisecond)
		}
		time.Sleep(20 * time.Millisecond)
		cancel()
	}()
	for i, err := range executeAll(ctx, e, jobs) {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("cell %d: %v, want context.Canceled", i, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	var scancel []string
	for _, c := range f.calls {
		if strings.HasPrefix(c, "scancel") {
			scancel = append(scancel, c)
		}
	}
	if len(scancel) != 1 || len(strings.Fields(scancel[0])) != 3 {
		t.Errorf("scancel calls %q, want one naming the two jobs", scancel)
	}
	for id, j := range f.jobs {
		if j.state != StateCancelled {
			t.Errorf("job %s is %s, want CANCELLED", id, j.state)
		}
	}
}

// TestExecuteAdoptsBatch: a dead driver's batch job is adopted by each of
// its cells, and nothing is submitted.
func TestExecuteAdoptsBatch(t *testing.T) {
	t.Parallel()
	f := newFake()
	dir := t.TempDir()
	jobs := cellJobs(dir, 3)
	f.addLive(testKey(0)+","+testKey(1)+","+testKey(2), dir, "RUNNING")
	e := newTestExecutor(t, f, func(o *Options) { o.Batch = 3 })
	for i, err := range executeAll(context.Background(), e, jobs) {
		if err != nil {
			t.Errorf("cell %d: %v", i, err)
		}
	}
	if n := f.count("sbatch"); n != 0 {
		t.Errorf("sbatch called %d times, want 0 (the batch adopted)", n)
	}
}

// TestBatchFitsTheComment: forty cells handed over at once with --batch
// 40 go in jobs of at most 15, whose comments (all their keys) fit Slurm's
// 1,024 bytes; a longer comment fails the submission.
func TestBatchFitsTheComment(t *testing.T) {
	t.Parallel()
	if maxBatch != 15 {
		t.Errorf("maxBatch = %d, want 15", maxBatch)
	}
	f := newFake()
	e := newTestExecutor(t, f, func(o *Options) { o.Batch = 40 })
	for i, err := range executeAll(context.Background(), e, cellJobs(t.TempDir(), 40)) {
		if err != nil {
			t.Errorf("cell %d: %v", i, err)
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	cells := 0
	for _, j := range f.jobs {
		n := len(strings.Split(j.key, ","))
		cells += n
		if n > maxBatch || len(j.comment) > maxComment {
			t.Errorf("job %s: %d cells, a comment of %d bytes", j.id, n, len(j.comment))
		}
	}
	// Three jobs (15, 15, 10), or more if the cells reached the executor
	// more than batchDelay apart.
	if cells != 40 || len(f.jobs) < 3 {
		t.Errorf("%d cells in %d jobs, want 40 in at least 3", cells, len(f.jobs))
	}
}
