package slurm

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"repro/artifacts"
	"repro/pipeline"
)

// fakeSlurm is an in-memory Slurm controller behind the Runner interface:
// enough of sbatch, squeue, sacct, scontrol and scancel, with the output
// formats the real commands print (checked against slurm 22.05 in
// integration_test.go).
type fakeSlurm struct {
	mu    sync.Mutex
	next  int
	jobs  map[string]*fakeJob
	calls []string // "name arg arg ..." in call order
	// acct: sacct answers; otherwise it says accounting is disabled.
	acct bool
	// purge: ended jobs vanish from squeue/scontrol at once (MinJobAge
	// passed), so only sacct or the store can tell.
	purge bool
	// steps: how many squeue calls a job spends PENDING then RUNNING
	// before it ends (default 1 each).
	steps int
	// end decides how a job ends; default COMPLETED exit 0:0.
	end func(j *fakeJob) (State, string)
	// store is the fake store: keys whose manifest exists.
	store map[string]bool
	// maxLive is the most jobs PENDING or RUNNING at once.
	maxLive int
	// sbatchErr lists stderr texts for the next sbatch calls to fail
	// with; with submitAnyway the job is queued all the same (a reply
	// lost to a timeout).
	sbatchErr    []string
	submitAnyway bool
	// listErr fails that many `squeue --user` listings.
	listErr int
	// failKeys, if set, are cells that fail: a job running one of them
	// ends FAILED (exit 1), and the other cells of its batch are stored.
	failKeys map[string]bool
}

type fakeJob struct {
	id, name, comment, key string
	args                   []string
	state                  State
	exit                   string
	polls                  int
}

func newFake() *fakeSlurm {
	return &fakeSlurm{jobs: map[string]*fakeJob{}, store: map[string]bool{}, steps: 1}
}

var errExit1 = errors.New("exit status 1")

func fail(name, stderr string) ([]byte, []byte, error) {
	return nil, []byte(stderr), &CmdError{Name: name, Stderr: stderr, Err: errExit1}
}

func (f *fakeSlurm) count(prefix string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if strings.HasPrefix(c, prefix) {
			n++
		}
	}
	return n
}

func (f *fakeSlurm) live() int {
	n := 0
	for _, j := range f.jobs {
		if !j.state.Terminal() {
			n++
		}
	}
	return n
}

// addLive puts a job for key in store dir in the queue as a previous
// driver would have.
func (f *fakeSlurm) addLive(key, dir string, st State) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	id := fmt.Sprint(f.next)
	f.jobs[id] = &fakeJob{id: id, name: jobName("old", key), comment: cellComment(key, storeTag(dir)), key: key, state: st}
	return id
}

func (f *fakeSlurm) Run(ctx context.Context, name string, args ...string) ([]byte, []byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, strings.Join(append([]string{name}, args...), " "))
	switch name {
	case "sbatch":
		if len(f.sbatchErr) > 0 {
			msg := f.sbatchErr[0]
			f.sbatchErr = f.sbatchErr[1:]
			if !f.submitAnyway {
				return fail(name, msg)
			}
			f.queue(args)
			return fail(name, msg)
		}
		return []byte(f.queue(args) + "\n"), nil, nil
	case "squeue":
		var out strings.Builder
		if strings.HasPrefix(args[1], "--user=") {
			if f.listErr > 0 {
				f.listErr--
				return fail(name, "squeue: error: Unable to contact slurm controller (connect failure)\n")
			}
			for _, j := range f.sorted() {
				if !j.state.Terminal() {
					fmt.Fprintf(&out, "%s|%s|%s|%s\n", j.id, j.name, j.state, j.comment)
				}
			}
			return []byte(out.String()), nil, nil
		}
		ids := strings.Split(args[len(args)-1], ",")
		found := 0
		for _, id := range ids {
			j, ok := f.jobs[id]
			if !ok {
				continue
			}
			f.step(j)
			if j.state.Terminal() && f.purge {
				continue
			}
			found++
			reason := "None"
			if j.state == StateFailed {
				reason = "NonZeroExitCode"
			}
			fmt.Fprintf(&out, "%s|%s|%s\n", j.id, j.state, reason)
		}
		if found == 0 {
			return fail(name, "slurm_load_jobs error: Invalid job id specified\n")
		}
		return []byte(out.String()), nil, nil
	case "sacct":
		if !f.acct {
			return fail(name, "Slurm accounting storage is disabled\n")
		}
		var out strings.Builder
		for _, id := range strings.Split(args[len(args)-1], ",") {
			if j, ok := f.jobs[id]; ok {
				st := string(j.state)
				if j.state == StateCancelled {
					st = "CANCELLED by 0"
				}
				fmt.Fprintf(&out, "%s|%s|%s\n", j.id, st, j.exit)
			}
		}
		return []byte(out.String()), nil, nil
	case "scontrol":
		j, ok := f.jobs[args[len(args)-1]]
		if !ok || (f.purge && j.state.Terminal()) {
			return fail(name, "slurm_load_jobs error: Invalid job id specified\n")
		}
		return []byte(fmt.Sprintf("JobId=%s JobName=%s UserId=root(0) JobState=%s Reason=None Dependency=(null) ExitCode=%s RunTime=00:00:01\n", j.id, j.name, j.state, j.exit)), nil, nil
	case "scancel":
		for _, id := range args {
			if j, ok := f.jobs[id]; ok && !j.state.Terminal() {
				j.state = StateCancelled
				j.exit = "0:15"
			}
		}
		return nil, nil, nil
	}
	return fail(name, "fake: unknown command")
}

// queue adds a job as sbatch with args would, and returns its ID.
func (f *fakeSlurm) queue(args []string) string {
	f.next++
	id := fmt.Sprint(f.next)
	j := &fakeJob{id: id, args: args, state: "PENDING"}
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "--job-name="); ok {
			j.name = v
		}
		if v, ok := strings.CutPrefix(a, "--comment="); ok {
			j.comment = v
			j.key, _, _ = strings.Cut(strings.TrimPrefix(v, commentPrefix), " ")
		}
	}
	f.jobs[id] = j
	f.maxLive = max(f.maxLive, f.live())
	return id
}

// step advances j at each squeue: PENDING, RUNNING, then its end.
func (f *fakeSlurm) step(j *fakeJob) {
	if j.state.Terminal() {
		return
	}
	j.polls++
	switch {
	case j.polls <= f.steps:
		j.state = "PENDING"
	case j.polls <= 2*f.steps:
		j.state = "RUNNING"
	default:
		j.state, j.exit = StateCompleted, "0:0"
		if f.end != nil {
			j.state, j.exit = f.end(j)
		}
		keys := strings.Split(j.key, ",") // a batch runs several
		for _, k := range keys {
			if f.failKeys[k] {
				j.state, j.exit = StateFailed, "1:0"
			}
		}
		for _, k := range keys {
			if j.state == StateCompleted || f.failKeys != nil && !f.failKeys[k] {
				f.store[k] = true
			}
		}
	}
	f.maxLive = max(f.maxLive, f.live())
}

func (f *fakeSlurm) sorted() []*fakeJob {
	var js []*fakeJob
	for i := 1; i <= f.next; i++ {
		if j, ok := f.jobs[fmt.Sprint(i)]; ok {
			js = append(js, j)
		}
	}
	return js
}

func (f *fakeSlurm) check(ctx context.Context, job *pipeline.Job) (bool, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.store[job.Key.String()], nil
}

// testKey returns a distinct valid cell key for i.
func testKey(i int) string {
	return fmt.Sprintf("%064x", i+0xabc000)
}

// jobKey is testKey(i) as a Job's key.
func jobKey(i int) artifacts.Key {
	k, err := artifacts.ParseKey(testKey(i))
	if err != nil {
		panic(err)
	}
	return k
}

func testJob(t *testing.T, i int) *pipeline.Job {
	return storeJob(t.TempDir(), i)
}

// storeJob is cell i of the store at dir.
func storeJob(dir string, i int) *pipeline.Job {
	return &pipeline.Job{
		Key: jobKey(i), CellID: fmt.Sprintf("train/seed=%d", i),
		StoreDir: dir, LogPath: dir + "/" + testKey(i) + ".log", RunID: "r1",
	}
}

func newTestExecutor(t *testing.T, f *fakeSlurm, mod func(*Options)) *Executor {
	t.Helper()
	opts := Options{
		Binary: "/bin/true", Runner: f, Check: f.check, ScriptDir: t.TempDir(),
		PollMin: 1e6, PollMax: 4e6, StoreGrace: 1e6, // 1 ms .. 4 ms
	}
	if mod != nil {
		mod(&opts)
	}
	e, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}
