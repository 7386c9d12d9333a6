package slurm

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"repro/pipeline"
)

// Defaults for Options fields left zero.
const (
	// DefaultPollMin is the first poll interval after a submission: a
	// trivial job takes 0.4-1 s from sbatch to COMPLETED on an idle
	// single-node cluster (measured with .ci/slurm: slurmctld starts
	// queued jobs from a once-a-second loop), so polling sooner only costs
	// the controller.
	DefaultPollMin = 250 * time.Millisecond
	// DefaultPollMax caps the interval: one squeue every 3 s for all the
	// executor's jobs is negligible load, and adds at most 3 s to a cell.
	DefaultPollMax = 3 * time.Second
	// DefaultCommandTimeout bounds one Slurm client command; a controller
	// that does not answer within it is retried at the next tick.
	DefaultCommandTimeout = 60 * time.Second
	// DefaultControllerGrace is how long the controller may stay
	// unreachable before the jobs being waited on are reported as failed.
	DefaultControllerGrace = 10 * time.Minute
	// DefaultStoreGrace is how long a COMPLETED job's manifest may take to
	// become visible to the driver (attribute caching on NFS is 3-60 s).
	DefaultStoreGrace = 60 * time.Second
	// DefaultSubmitGrace is how long a submission failing for a passing
	// reason (controller busy, submit limit reached) is retried.
	DefaultSubmitGrace = 10 * time.Minute
)

// Options configure an Executor. Every string is passed to sbatch as one
// argv element; none is ever interpreted by a shell.
type Options struct {
	// Binary is the repro binary the nodes run. Empty means this process's
	// own executable. It is resolved to an absolute path without symlinks
	// and must be reachable at that path on the nodes (shared filesystem).
	Binary string
	// Partition, Time (sbatch --time syntax, e.g. "30:00") and Mem (e.g.
	// "4G") are passed to sbatch when non-empty; CPUsPerTask when > 0.
	Partition, Time, Mem string
	CPUsPerTask          int
	// ArrayLimit caps how many jobs this executor keeps submitted at once
	// (like an array's %N); 0 means no cap beyond the scheduler's -j.
	// Adopted jobs do not wait for a slot.
	ArrayLimit int
	// Batch is how many cells one job may run, one after the other (`repro
	// exec-cell` with several keys): the cells handed to Execute within
	// batchDelay of each other share a submission, which spreads Slurm's
	// start-up latency over them. 0 or 1 submits one job per cell. A batch
	// runs its cells in sequence, so it trades parallelism for overhead:
	// worth it when cells are short or the cluster is smaller than -j.
	// A job takes at most 15 cells, whatever Batch says: their keys go in
	// its comment, which Slurm limits to 1024 bytes.
	Batch int
	// ExtraArgs are more sbatch options (e.g. "--account=x"), as argv.
	ExtraArgs []string
	// PollMin and PollMax bound the poll interval (see DefaultPollMin).
	PollMin, PollMax time.Duration
	// CommandTimeout bounds each Slurm command (DefaultCommandTimeout).
	CommandTimeout time.Duration
	// ControllerGrace: see DefaultControllerGrace.
	ControllerGrace time.Duration
	// StoreGrace: see DefaultStoreGrace.
	StoreGrace time.Duration
	// SubmitGrace: see DefaultSubmitGrace.
	SubmitGrace time.Duration
	// ScriptDir is where the fixed batch script is written (default
	// DefaultScriptDir()): a folder only this user can write, checked
	// before the script is written or reused. sbatch copies a script's
	// text at submission, so the folder need not be shared with the nodes.
	ScriptDir string
	// Runner runs the Slurm commands; nil means ExecRunner{} (PATH).
	Runner Runner
	// Check reports whether the job's cell has its manifest in the store
	// and it verifies. It decides the outcome of a COMPLETED job and of a
	// job Slurm has forgotten (no accounting). Nil trusts COMPLETED and
	// fails a forgotten job; the engine checks the store after Execute in
	// any case.
	Check func(ctx context.Context, job *pipeline.Job) (bool, error)
}

// Executor runs each cell as one Slurm batch job. It is safe for
// concurrent use: the scheduler calls Execute from several workers, and
// one poller goroutine per Executor serves all of them.
type Executor struct {
	opts   Options
	run    Runner
	binary string
	uid    string

	scriptMu   sync.Mutex
	scriptPath string

	listMu    sync.Mutex
	listed    bool
	adoptable map[string]liveJob // "<key> <store tag>" -> live job found at the first Execute

	slots chan struct{} // nil: no ArrayLimit

	mu      sync.Mutex
	waiters map[string]*waiter // job ID -> who waits on it
	polling bool
	acctOff bool // sacct said accounting is disabled: do not ask again
	kick    chan struct{}

	cancelMu sync.Mutex
	cancelB  *cancelBatch

	batchMu sync.Mutex
	open    *batch // the batch still taking cells, if any
}

type waiter struct {
	id     string
	job    *pipeline.Job
	misses int // consecutive polls in which no source knew the job
	done   chan result
	// The store is probed for the cell's manifest on its own schedule,
	// faster than squeue at first (a stat costs the controller nothing).
	probeAt    time.Time
	probeEvery time.Duration
}

// slot is the waiter's name among the executor's waiters: the cells of a
// batch share one job ID.
func (w *waiter) slot() string { return w.id + " " + w.job.Key.String() }

type result struct {
	st  status
	err error
}

// New returns an Executor. It resolves the repro binary and checks that it
// exists; it does not contact Slurm.
func New(opts Options) (*Executor, error) {
	if opts.PollMin <= 0 {
		opts.PollMin = DefaultPollMin
	}
	if opts.PollMax <= 0 {
		opts.PollMax = DefaultPollMax
	}
	if opts.PollMax < opts.PollMin {
		opts.PollMax = opts.PollMin
	}
	if opts.CommandTimeout <= 0 {
		opts.CommandTimeout = DefaultCommandTimeout
	}
	if opts.ControllerGrace <= 0 {
		opts.ControllerGrace = DefaultControllerGrace
	}
	if opts.SubmitGrace <= 0 {
		opts.SubmitGrace = DefaultSubmitGrace
	}
	if opts.StoreGrace <= 0 {
		opts.StoreGrace = DefaultStoreGrace
	}
	if opts.ScriptDir == "" {
		d, err := DefaultScriptDir()
		if err != nil {
			return nil, fmt.Errorf("slurm: batch script folder: %w", err)
		}
		opts.ScriptDir = d
	}
	if opts.CPUsPerTask < 0 || opts.ArrayLimit < 0 || opts.Batch < 0 {
		return nil, fmt.Errorf("slurm: negative cpus-per-task, array-limit or batch")
	}
	bin := opts.Binary
	if bin == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("slurm: find repro binary: %w", err)
		}
		bin = exe
	}
	bin, err := filepath.Abs(bin)
	if err != nil {
		return nil, fmt.Errorf("slurm: binary %s: %w", opts.Binary, err)
	}
	if bin, err = filepath.EvalSymlinks(bin); err != nil {
		return nil, fmt.Errorf("slurm: binary: %w", err)
	}
	if fi, err := os.Stat(bin); err != nil {
		return nil, fmt.Errorf("slurm: binary: %w", err)
	} else if !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return nil, fmt.Errorf("slurm: binary %s is not an executable file", bin)
	}
	run := opts.Runner
	if run == nil {
		run = ExecRunner{}
	}
	e := &Executor{
		opts: opts, run: run, binary: bin, uid: strconv.Itoa(os.Getuid()),
		waiters: make(map[string]*waiter),
		kick:    make(chan struct{}, 1),
	}
	if opts.ArrayLimit > 0 {
		e.slots = make(chan struct{}, opts.ArrayLimit)
	}
	return e, nil
}

// Name implements pipeline.Executor.
func (e *Executor) Name() string { return "slurm" }

// Binary is the resolved repro binary the nodes run.
func (e *Executor) Binary() string { return e.binary }

// Execute implements pipeline.Executor: it adopts the cell's live job if a
// previous driver left one, else submits one, and waits for it. It returns
// nil when the job COMPLETED and (with Options.Check) the manifest is in the
// store; a *JobError when the job ended otherwise; ctx.Err() after
// cancelling the job when ctx is done.
func (e *Executor) Execute(ctx context.Context, job *pipeline.Job) error {
	if err := checkJob(job); err != nil {
		return err
	}
	name := jobName(job.RunID, job.Key.String())
	id, slurmOut, batched := "", slurmLog(job.LogPath), false
	if j, ok := e.adopt(ctx, job.Key.String()+" "+storeTag(job.StoreDir)); ok {
		id, name = j.ID, j.Name
		slurmOut = slurmLog(filepath.Join(filepath.Dir(job.LogPath), j.First+".log"))
		batched = j.Cells > 1
	}
	if id == "" {
		release, err := e.acquire(ctx)
		if err != nil {
			return err
		}
		defer release()
		if e.opts.Batch > 1 {
			b := e.join(ctx, job)
			<-b.submitted
			if b.err != nil {
				return b.err
			}
			id, name, slurmOut, batched = b.id, b.name, slurmLog(b.jobs[0].LogPath), len(b.jobs) > 1
		} else if id, err = e.submit(ctx, []*pipeline.Job{job}, name); err != nil {
			return err
		}
	}
	st, err := e.wait(ctx, id, job)
	if err != nil {
		return fmt.Errorf("slurm job %s (%s): %w", id, name, err)
	}
	if err := e.conclude(ctx, job, id, name, slurmOut, batched, st); err != nil {
		return err
	}
	// The job this driver submitted or adopted produced the cell. (Were
	// another driver computing it at the same time, exec-cell would have
	// waited for it and found it done; this count would then be one too
	// high, which is all Ran feeds.)
	job.Ran = true
	return nil
}

func checkJob(job *pipeline.Job) error {
	switch {
	case !filepath.IsAbs(job.StoreDir):
		return fmt.Errorf("slurm: cell %s: store %q is not an absolute path", job.CellID, job.StoreDir)
	case !filepath.IsAbs(job.LogPath):
		return fmt.Errorf("slurm: cell %s: log %q is not an absolute path", job.CellID, job.LogPath)
	}
	return nil
}

// jobName is "repro-<run>-<first 12 hex of the key>", with the run ID
// reduced to [A-Za-z0-9._-] and 24 characters so that names never contain
// spaces (parseScontrol relies on it) and stay readable in squeue.
func jobName(runID, key string) string {
	var b strings.Builder
	for _, c := range runID {
		if b.Len() == 24 {
			break
		}
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '.' || c == '_' || c == '-' {
			b.WriteRune(c)
		} else {
			b.WriteByte('_')
		}
	}
	run := b.String()
	if run == "" {
		run = "run"
	}
	return "repro-" + run + "-" + key[:12]
}

// sbatchArgs builds sbatch's argv for one job running jobs' cells in turn
// (all of one store): options, then the batch script, then the command the
// script execs. Every value is its own argument. The job's output goes
// beside the first cell's log.
func (e *Executor) sbatchArgs(jobs []*pipeline.Job, name, script string) []string {
	job := jobs[0]
	keys := make([]string, len(jobs))
	for i, j := range jobs {
		keys[i] = j.Key.String()
	}
	args := []string{
		"--parsable",
		"--job-name=" + name,
		"--comment=" + cellComment(strings.Join(keys, ","), storeTag(job.StoreDir)),
		"--output=" + slurmLog(job.LogPath),
		"--chdir=" + job.StoreDir,
	}
	if e.opts.Partition != "" {
		args = append(args, "--partition="+e.opts.Partition)
	}
	if e.opts.Time != "" {
		args = append(args, "--time="+e.opts.Time)
	}
	if e.opts.Mem != "" {
		args = append(args, "--mem="+e.opts.Mem)
	}
	if e.opts.CPUsPerTask > 0 {
		args = append(args, "--cpus-per-task="+strconv.Itoa(e.opts.CPUsPerTask))
	}
	args = append(args, e.opts.ExtraArgs...)
	args = append(args, script, e.binary, "exec-cell", "--executor", "slurm", "--store", job.StoreDir)
	return append(args, keys...)
}

// slurmLog is where a job's own stdout and stderr go: next to the cell's
// log, not in it, because `repro exec-cell` writes the cell's log itself
// (truncating it) and two unrelated writers would garble one file. Slurm's
// messages (time limit, out of memory) and exec-cell's error line end up
// here: "<key>.log" -> "<key>.slurm.log".
func slurmLog(logPath string) string {
	return strings.TrimSuffix(logPath, ".log") + ".slurm.log"
}

// lastLine returns the last non-empty line of the file at path, at most
// 300 bytes of it, or "" if it cannot be read. It reads only the file's
// last 4 KiB.
func lastLine(path string) string {
	lines := tailLines(path, 4<<10)
	if len(lines) == 0 {
		return ""
	}
	return clip(strings.TrimSpace(lines[len(lines)-1]))
}

// tailLines returns the lines of the last tail bytes of the file at path
// (nil if it cannot be read).
func tailLines(path string, tail int64) []string {
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	if fi, err := f.Stat(); err == nil && fi.Size() > tail {
		if _, err := f.Seek(fi.Size()-tail, 0); err != nil {
			return nil
		}
	}
	buf := make([]byte, tail)
	n, _ := io.ReadFull(f, buf)
	return splitLines(buf[:n])
}

// clip shortens a line quoted in an error to 300 bytes.
func clip(l string) string {
	if len(l) > 300 {
		l = l[:300] + "..."
	}
	return l
}

// batchScript is the text of the one batch script every job runs. It
// interprets nothing it is given: sbatch passes the command as argv.
const batchScript = `#!/bin/sh
# repro: Slurm batch script for one cell (written by pipeline/slurm).
# sbatch passes the command as arguments: the repro binary, "exec-cell",
# "--store", the store directory and the cell key. They are run as given.
echo "repro-slurm: job ${SLURM_JOB_ID:-?} on $(hostname) at $(date -u +%Y-%m-%dT%H:%M:%SZ)" >&2
exec "$@"
`

// script writes the batch script once per Executor, under a name derived
// from its content in a private folder (privateDir), and returns its path.
// A file already there under that name is reused only when it is a regular
// file (never a symlink: it is opened with O_NOFOLLOW), owned by this user,
// writable by no one else and holding exactly the script; a new one is
// created with O_EXCL and renamed into place.
func (e *Executor) script() (string, error) {
	e.scriptMu.Lock()
	defer e.scriptMu.Unlock()
	if e.scriptPath != "" {
		return e.scriptPath, nil
	}
	dir := e.opts.ScriptDir
	if err := privateDir(dir); err != nil {
		return "", fmt.Errorf("slurm: batch script folder: %w", err)
	}
	sum := sha256.Sum256([]byte(batchScript))
	path := filepath.Join(dir, "repro-slurm-"+hex.EncodeToString(sum[:6])+".sh")
	ok, err := ownScript(path)
	if err != nil {
		return "", fmt.Errorf("slurm: batch script: %w", err)
	}
	if ok {
		e.scriptPath = path
		return path, nil
	}
	tmp := filepath.Join(dir, fmt.Sprintf(".repro-slurm-%d-%d.tmp", os.Getpid(), time.Now().UnixNano()))
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|syscall.O_NOFOLLOW, 0o700)
	if err != nil {
		return "", fmt.Errorf("slurm: write batch script: %w", err)
	}
	_, err = f.WriteString(batchScript)
	if err == nil {
		err = f.Chmod(0o500) // read and run, by this user only
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("slurm: write batch script %s: %w", path, err)
	}
	e.scriptPath = path
	return path, nil
}

// ownScript reports whether path is a sound copy of the batch script: a
// regular file owned by this user, writable by no one else, with the
// script's exact text. A missing file is false; a symlink or another
// user's file is an error (something planted it: it is not removed, and
// not used).
func ownScript(path string) (bool, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NOFOLLOW|syscall.O_NONBLOCK, 0)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	if errors.Is(err, syscall.ELOOP) {
		return false, fmt.Errorf("%s is a symlink: not used (remove it)", path)
	}
	if err != nil {
		return false, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return false, err
	}
	if err := ownedPrivate(path, fi, false); err != nil {
		return false, err
	}
	b, err := io.ReadAll(io.LimitReader(f, int64(len(batchScript))+1))
	if err != nil {
		return false, err
	}
	return string(b) == batchScript, nil // another text (an older script): replaced
}

// privateDir makes dir (0700) if it is missing and checks that it is a
// folder (not a symlink) owned by this user and writable by no one else:
// in a folder anyone can write (/tmp), another user could put a file or a
// symlink under the script's name before it is written.
func privateDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	return ownedPrivate(dir, fi, true)
}

// ownedPrivate checks that fi (of path) is a folder (isDir) or a regular
// file, owned by this user and writable by no other.
func ownedPrivate(path string, fi os.FileInfo, isDir bool) error {
	switch {
	case isDir && !fi.IsDir():
		return fmt.Errorf("%s is not a folder (%s)", path, fi.Mode().Type())
	case !isDir && !fi.Mode().IsRegular():
		return fmt.Errorf("%s is not a regular file (%s): not used", path, fi.Mode().Type())
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to uid %d, not to this user (%d): not used", path, st.Uid, os.Getuid())
	}
	if fi.Mode().Perm()&0o022 != 0 {
		return fmt.Errorf("%s is writable by others (mode %v): not used; the batch script needs a folder only this user can write (default: the user cache folder)", path, fi.Mode().Perm())
	}
	return nil
}

// DefaultScriptDir is Options.ScriptDir's default: repro/slurm in the
// user's cache folder ($XDG_CACHE_HOME, else ~/.cache), which only the user
// can write; the shared /tmp is not safe for a file another user could
// plant or swap.
func DefaultScriptDir() (string, error) {
	c, err := os.UserCacheDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(c, "repro", "slurm"), nil
}

// command runs one Slurm command with Options.CommandTimeout.
func (e *Executor) command(ctx context.Context, name string, args ...string) ([]byte, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.CommandTimeout)
	defer cancel()
	return e.run.Run(ctx, name, args...)
}

// submit runs sbatch for job and returns the job ID. sbatch is not
// interrupted by ctx: once it has started, the job may exist, and only
// its ID lets us cancel it; so on cancellation it is scancelled here.
//
// A submission that fails for a passing reason (controller busy or
// unreachable, or a submit limit while this executor has jobs that will
// end) is retried with back-off for up to Options.SubmitGrace. Before each
// retry the queue is searched for the cell's job, since a timed-out sbatch
// may have submitted it after all.
func (e *Executor) submit(ctx context.Context, jobs []*pipeline.Job, name string) (string, error) {
	script, err := e.script()
	if err != nil {
		return "", err
	}
	args := e.sbatchArgs(jobs, name, script)
	cell := jobs[0].Key.String() + " " + storeTag(jobs[0].StoreDir)
	deadline := time.Now().Add(e.opts.SubmitGrace)
	b := newBackoff(4*e.opts.PollMin, 30*time.Second) // 1 s by default
	for attempt := 1; ; attempt++ {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		out, stderr, err := e.command(context.WithoutCancel(ctx), "sbatch", args...)
		if err == nil {
			id, err := parseSbatch(out)
			if err != nil {
				return "", fmt.Errorf("slurm: submit %s: %w", name, err)
			}
			if ctx.Err() != nil {
				if cerr := e.cancel(ctx, id); cerr != nil {
					return "", fmt.Errorf("slurm job %s: %w (and %v)", id, ctx.Err(), cerr)
				}
				return "", ctx.Err()
			}
			return id, nil
		}
		if !e.retryable(stderr) || time.Now().After(deadline) {
			return "", fmt.Errorf("slurm: submit %s (attempt %d): %w", name, attempt, err)
		}
		select {
		case <-time.After(b.next()):
		case <-ctx.Done():
			return "", ctx.Err()
		}
		if id, err := e.findLive(ctx, cell); err == nil && id != "" {
			return id, nil
		}
	}
}

// retryable reports whether sbatch failing with stderr may succeed later.
// "Job violates accounting/QOS policy" also covers a job too big for the
// user's limits, which never passes: it counts as passing only while jobs of
// this executor are in flight, whose end frees submit slots.
func (e *Executor) retryable(stderr []byte) bool {
	s := strings.ToLower(string(stderr))
	for _, p := range []string{"socket timed out", "resource temporarily unavailable", "unable to contact slurm controller", "slurm_persist_conn", "try again"} {
		if strings.Contains(s, p) {
			return true
		}
	}
	if strings.Contains(s, "job submit limit") || strings.Contains(s, "maxsubmitjob") {
		e.mu.Lock()
		defer e.mu.Unlock()
		return len(e.waiters) > 0
	}
	return false
}

// findLive lists the user's live jobs and returns the one computing cell
// ("<key> <store tag>"), or "".
func (e *Executor) findLive(ctx context.Context, cell string) (string, error) {
	out, _, err := e.command(ctx, "squeue", "-h", "--user="+e.uid, "-o", listFormat)
	if err != nil {
		return "", err
	}
	m, err := parseList(out)
	if err != nil {
		return "", err
	}
	return m[cell].ID, nil
}

// adopt returns the live job already computing cell ("<key> <store
// tag>"), if any. The queue is listed once per Executor, at its first
// Execute: the jobs worth adopting are those a previous driver left behind.
// If listing fails (controller unreachable), nothing is adopted this time
// and the next Execute tries again; submitting a second job for a cell is
// safe, only wasteful, since exec-cell waits for the first to finish.
func (e *Executor) adopt(ctx context.Context, cell string) (liveJob, bool) {
	e.listMu.Lock()
	defer e.listMu.Unlock()
	if !e.listed {
		out, _, err := e.command(ctx, "squeue", "-h", "--user="+e.uid, "-o", listFormat)
		if err != nil {
			return liveJob{}, false
		}
		m, err := parseList(out)
		if err != nil {
			return liveJob{}, false
		}
		e.adoptable, e.listed = m, true
	}
	j, ok := e.adoptable[cell]
	if ok {
		delete(e.adoptable, cell)
	}
	return j, ok
}

// Adoptable returns how many live jobs found at the first Execute are not
// yet adopted (for tests and progress lines).
func (e *Executor) Adoptable() int {
	e.listMu.Lock()
	defer e.listMu.Unlock()
	return len(e.adoptable)
}

func (e *Executor) acquire(ctx context.Context) (func(), error) {
	if e.slots == nil {
		return func() {}, nil
	}
	select {
	case e.slots <- struct{}{}:
		return func() { <-e.slots }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// wait blocks until the poller reports job id terminal, or ctx is done; in
// that case it scancels the job and returns ctx.Err().
func (e *Executor) wait(ctx context.Context, id string, job *pipeline.Job) (status, error) {
	w := &waiter{id: id, job: job, done: make(chan result, 1), probeEvery: probeMin}
	w.probeAt = time.Now().Add(probeMin)
	e.mu.Lock()
	e.waiters[w.slot()] = w
	if !e.polling {
		e.polling = true
		go e.poll()
	}
	e.mu.Unlock()
	select {
	case e.kick <- struct{}{}:
	default:
	}
	select {
	case r := <-w.done:
		return r.st, r.err
	case <-ctx.Done():
		e.mu.Lock()
		delete(e.waiters, w.slot())
		e.mu.Unlock()
		if err := e.cancel(ctx, id); err != nil {
			return status{}, fmt.Errorf("%w (and %v)", ctx.Err(), err)
		}
		return status{}, ctx.Err()
	}
}

// JobError is a job that ended without producing its cell: its Slurm
// state, exit code and reason when known, and where its log is.
type JobError struct {
	JobID, Name string
	State       State
	ExitCode    string // "code:signal"
	Reason      string
	Source      string // the command that reported the state
	Log         string // the cell's log (pipeline.Job.LogPath)
	SlurmLog    string // the job's stdout and stderr
	Detail      string // what else is known, e.g. "manifest missing"
	LastLine    string // the last line of SlurmLog, often the error
}

func (e *JobError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "slurm job %s (%s) %s", e.JobID, e.Name, e.State)
	var extra []string
	if e.ExitCode != "" {
		extra = append(extra, "exit "+e.ExitCode)
	}
	if e.Reason != "" && e.Reason != "None" {
		extra = append(extra, e.Reason)
	}
	if len(extra) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(extra, ", "))
	}
	if e.Detail != "" {
		b.WriteString(": " + e.Detail)
	}
	if e.LastLine != "" {
		fmt.Fprintf(&b, ": %q", e.LastLine)
	}
	fmt.Fprintf(&b, "; log %s, slurm output %s", e.Log, e.SlurmLog)
	return b.String()
}

// conclude turns a terminal status into Execute's result.
func (e *Executor) conclude(ctx context.Context, job *pipeline.Job, id, name, slurmOut string, batched bool, st status) error {
	jerr := &JobError{JobID: id, Name: name, State: st.State, ExitCode: st.ExitCode, Reason: st.Reason,
		Source: st.Source, Log: job.LogPath, SlurmLog: slurmOut}
	jerr.LastLine = lastLine(jerr.SlurmLog)
	if batched {
		// A batch's job fails when any of its cells does: this cell
		// succeeded if its manifest is in the store, and its own error is
		// the line exec-cell wrote naming its key.
		if e.opts.Check != nil && st.State != StateCompleted {
			if ok, _ := e.inStore(ctx, job, 0); ok {
				return nil
			}
		}
		jerr.LastLine = lineNaming(slurmOut, job.Key.String())
	}
	switch st.State {
	case StateCompleted:
		if e.opts.Check == nil {
			return nil
		}
		ok, err := e.inStore(ctx, job, e.opts.StoreGrace)
		if ok {
			return nil
		}
		jerr.Detail = "the cell's manifest is not in the store"
		if err != nil {
			jerr.Detail += ": " + err.Error()
		}
		return jerr
	case StateUnknown:
		if e.opts.Check != nil {
			if ok, _ := e.inStore(ctx, job, 0); ok {
				return nil
			}
		}
		jerr.Detail = "Slurm no longer knows the job (no accounting) and the cell's manifest is not in the store"
		return jerr
	}
	return jerr
}

// inStore asks Options.Check, again with back-off for up to grace, since
// a file renamed on a node may take a while to show on the driver's host.
func (e *Executor) inStore(ctx context.Context, job *pipeline.Job, grace time.Duration) (bool, error) {
	deadline := time.Now().Add(grace)
	b := newBackoff(e.opts.PollMin, e.opts.PollMax)
	for {
		ok, err := e.opts.Check(ctx, job)
		if ok || time.Now().After(deadline) {
			return ok, err
		}
		select {
		case <-time.After(b.next()):
		case <-ctx.Done():
			return false, ctx.Err()
		}
	}
}

// errScancel is wrapped by errors from scancel itself.
var errScancel = errors.New("scancel failed")

// cancelBatch gathers the job IDs to scancel within a few milliseconds,
// so that Ctrl-C with hundreds of jobs in flight costs one scancel call.
type cancelBatch struct {
	ids  []string
	done chan struct{}
	err  error
}

// cancelDelay is how long a cancel batch stays open for more IDs.
const cancelDelay = 20 * time.Millisecond

// cancel scancels job id (batched with concurrent calls) and returns once
// scancel has run. It does not honor ctx's cancellation, which is usually
// why it is called.
func (e *Executor) cancel(ctx context.Context, id string) error {
	e.cancelMu.Lock()
	b := e.cancelB
	if b == nil {
		b = &cancelBatch{done: make(chan struct{})}
		e.cancelB = b
		go e.flushCancel(context.WithoutCancel(ctx), b)
	}
	b.ids = append(b.ids, id)
	e.cancelMu.Unlock()
	<-b.done
	return b.err
}

func (e *Executor) flushCancel(ctx context.Context, b *cancelBatch) {
	time.Sleep(cancelDelay)
	e.cancelMu.Lock()
	e.cancelB = nil
	ids := b.ids
	// The cells of a batch cancel their one job each: name it once.
	slices.Sort(ids)
	ids = slices.Compact(ids)
	e.cancelMu.Unlock()
	if _, stderr, err := e.command(ctx, "scancel", ids...); err != nil && !alreadyGone(stderr) {
		b.err = fmt.Errorf("%w: %s: %w", errScancel, strings.Join(ids, " "), err)
	}
	close(b.done)
}
