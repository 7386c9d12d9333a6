package pipeline

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"runtime/debug"
	"slices"
	"syscall"
	"time"

	"repro/artifacts"
	"repro/internal/buildstamp"
	"repro/internal/kernelpath"
)

// HostProvenance is the provenance of a cell this process computes, but
// for its times: the code (the binary's build stamp, package buildstamp),
// the host, its CPU and the kernel path (package kernelpath).
func HostProvenance(executor string) artifacts.Provenance {
	s := buildstamp.Binary()
	p := artifacts.Provenance{
		Revision: s.Revision, Dirty: s.Dirty, DirtyDiff: s.Diff, GoVersion: runtime.Version(),
		Host: artifacts.Hostname(), CPU: kernelpath.CPUModel(), Kernels: kernelpath.Path().String(),
		Executor: executor, SlurmJob: os.Getenv("SLURM_JOB_ID"),
	}
	if info, ok := debug.ReadBuildInfo(); ok {
		p.Repro = info.Main.Version
	}
	return p
}

// ExecOptions configure ExecuteCell.
type ExecOptions struct {
	// Stages maps stage names to the stages this binary knows.
	Stages map[string]*Stage
	// Settings override the spec's host-local settings where non-empty.
	Settings map[string]string
	// Executor names the executor in provenance ("local", "slurm").
	Executor string
	// Progress receives the running stage's progress; may be nil.
	Progress func(done, total int64)
	// LockWait is how often to re-check a cell locked by another process.
	LockWait time.Duration
	// Waiting, if set, is told when the cell has waited WaitNotice on a
	// lock another live process holds, and again whenever the holder
	// changes: holder says who ("pid 123 on node7"). A long wait on a lock
	// is never silent.
	Waiting func(holder string)
	// WaitNotice is how long a wait goes unsaid (DefaultWaitNotice).
	WaitNotice time.Duration
}

// DefaultWaitNotice is ExecOptions.WaitNotice's default: 3 s. Two runs
// sharing a store wait on each other's cells all the time, for as long as
// a cell takes (most a fraction of a second); a wait longer than this is
// said, so that a holder that hangs (or a PID that looks alive) does not
// look like a stuck run.
const DefaultWaitNotice = 3 * time.Second

// ExecuteCell runs the cell whose spec is stored under key and publishes
// its manifest. It is idempotent: if the manifest is already there it
// returns at once. If another process holds the cell's lock it waits for
// that process to finish (or die), so one cell never runs twice at once.
// On failure it stores a failure record (error and log) and returns the
// error; nothing is cached. ran reports whether this call computed the cell
// (false when it was already done or another process did it).
func ExecuteCell(ctx context.Context, st *artifacts.Store, key artifacts.Key, opt ExecOptions) (ran bool, err error) {
	sp, err := st.GetSpec(key)
	if err != nil {
		return false, err
	}
	stage := opt.Stages[sp.Stage]
	if stage == nil {
		return false, fmt.Errorf("cell %s: this binary has no stage %q", sp.CellID, sp.Stage)
	}
	wait := opt.LockWait
	if wait == 0 {
		wait = 250 * time.Millisecond
	}
	holder := "" // the lock's holder last said to opt.Waiting
	var waitSince time.Time
	notice := opt.WaitNotice
	if notice == 0 {
		notice = DefaultWaitNotice
	}
	for {
		if done, err := storedSound(st, key); done || err != nil {
			return false, err
		}
		lock, err := st.TryLock(key)
		if err == nil {
			defer lock.Unlock()
			break
		}
		if !errors.Is(err, artifacts.ErrLocked) {
			return false, err
		}
		var le *artifacts.LockedError
		if errors.As(err, &le) && le.Holder != holder {
			if waitSince.IsZero() {
				waitSince = time.Now()
			}
			if time.Since(waitSince) >= notice {
				holder = le.Holder
				if opt.Waiting != nil {
					opt.Waiting(holder)
				}
			}
		}
		select {
		case <-ctx.Done():
			return false, ctx.Err()
		case <-time.After(wait):
		}
	}
	// Under the lock: another process may have finished it meanwhile.
	if done, err := storedSound(st, key); done || err != nil {
		return false, err
	}
	return true, runLocked(ctx, st, sp, stage, opt)
}

// storedSound reports whether the store holds cell key's record with
// every output sound (re-hashed: a record over a damaged output is not
// done, and its blob is moved aside so that the cell is computed). A
// damaged output that cannot be moved aside is an error wrapping
// artifacts.ErrStuck: the cell cannot be computed over it, and saying it
// was done (by "another process") would be a false success.
func storedSound(st *artifacts.Store, key artifacts.Key) (bool, error) {
	_, err := st.LookupVerified(key)
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, artifacts.ErrStuck):
		return false, fmt.Errorf("%w; %s", err, st.StuckAdvice())
	}
	return false, nil
}

func runLocked(ctx context.Context, st *artifacts.Store, sp *artifacts.Spec, stage *Stage, opt ExecOptions) error {
	start := st.Now()
	// Never through a symlink: a link planted under the log's name in a
	// shared store would have the cell truncate and write its target.
	logf, err := os.OpenFile(st.LogPath(sp.Key), os.O_WRONLY|os.O_CREATE|os.O_TRUNC|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return fmt.Errorf("cell %s: %w", sp.CellID, err)
	}
	var logBuf bytes.Buffer
	log := io.MultiWriter(logf, &logBuf)
	fail := func(err error) error {
		err = fmt.Errorf("cell %s: %w", sp.CellID, err)
		fmt.Fprintf(log, "FAILED: %v\n", err)
		var pe *PanicError
		if errors.As(err, &pe) {
			fmt.Fprintf(log, "%s", pe.Stack)
		}
		logf.Close()
		if ctx.Err() != nil {
			return err // interrupted: not a failure of the cell
		}
		ld, _ := st.Put(logBuf.Bytes())
		st.PutFailure(&artifacts.Failure{Key: sp.Key, CellID: sp.CellID, Error: err.Error(), Log: ld, Host: artifacts.Hostname(), Time: st.Now()})
		return err
	}

	rc, mInputs, err := bindCell(st, sp, stage, opt, log)
	if err != nil {
		return fail(err)
	}
	fmt.Fprintf(log, "cell %s key %s stage %s v%d on %s\n", sp.CellID, sp.Key, stage.Name, sp.StageVersion, artifacts.Hostname())
	var cpu float64
	err = runStage(ctx, stage, rc, &cpu)
	if err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	end := st.Now()
	fmt.Fprintf(log, "done in %.2fs wall, %.2fs cpu\n", end.Sub(start).Seconds(), cpu)
	logf.Close()

	canon, err := EncodeParams(stage.Name, rc.Params)
	if err != nil {
		return fail(err)
	}
	m := &artifacts.Manifest{
		Key: sp.Key, CellID: sp.CellID, Stage: stage.Name, StageVersion: sp.StageVersion,
		Params: ParamsText(canon), Inputs: mInputs,
	}
	for _, name := range rc.order {
		data := rc.outputs[name]
		d, err := st.Put(data)
		if err != nil {
			return fail(fmt.Errorf("store output %s: %w", name, err))
		}
		m.Outputs = append(m.Outputs, artifacts.Output{Name: name, Digest: d, Size: int64(len(data))})
	}
	if m.Log, err = st.Put(logBuf.Bytes()); err != nil {
		return fail(err)
	}
	m.Provenance = HostProvenance(opt.Executor)
	m.Provenance.Start, m.Provenance.End = start.UTC(), end.UTC()
	m.Provenance.WallSecs, m.Provenance.CPUSecs = end.Sub(start).Seconds(), cpu
	if err := st.PutManifest(m); err != nil {
		return fail(err)
	}
	st.ClearFailure(sp.Key)
	return nil
}

// PanicError is a stage that panicked: a bug, or a value the bounds of
// pipeline.toml let through. It fails its cell only; the stack goes to the
// cell's log.
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string {
	return fmt.Sprintf("panic: %v (the stack is in the cell's log)", e.Value)
}

// runStage runs the stage on the calling goroutine, locked to its OS thread
// so that cpu receives the cell's CPU time, and turns a panic into a
// PanicError: one cell's crash must not end the run of every other cell.
// (A runtime fatal error, such as an allocation beyond memory, cannot be
// recovered: the plan refuses cells whose estimate exceeds memory.)
func runStage(ctx context.Context, stage *Stage, rc *RunContext, cpu *float64) (err error) {
	runtime.LockOSThread()
	cpu0 := threadCPU()
	defer func() {
		if cpu != nil {
			*cpu = threadCPU() - cpu0
		}
		runtime.UnlockOSThread()
		if r := recover(); r != nil {
			err = &PanicError{Value: r, Stack: debug.Stack()}
		}
	}()
	return stage.Run(ctx, rc)
}

// threadCPU is the CPU time of the calling OS thread in seconds. Stages run
// single-threaded with the goroutine locked to its thread, so this is the
// cell's CPU time even when other cells run in the same process.
func threadCPU() float64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()).Seconds()
}

// bindCell builds the RunContext of the cell described by sp: its params
// decoded from the canonical text, its inputs bound to the upstream
// manifests' blobs, its settings. It checks that the spec describes exactly
// sp.Key (recomputed from the params and the inputs' output digests), so a
// stale or tampered spec can never publish outputs under the wrong key.
func bindCell(st *artifacts.Store, sp *artifacts.Spec, stage *Stage, opt ExecOptions, log io.Writer) (*RunContext, []artifacts.Input, error) {
	params := stage.NewParams()
	ps, err := ParseParamsText(sp.Params)
	if err != nil {
		return nil, nil, err
	}
	if err := DecodeParams(stage.Name, ps, params); err != nil {
		return nil, nil, err
	}
	if v := stage.CellVersion(params); v != sp.StageVersion {
		return nil, nil, fmt.Errorf("spec wants %s version %d, this binary has %d", sp.Stage, sp.StageVersion, v)
	}
	canon, err := EncodeParams(stage.Name, params)
	if err != nil {
		return nil, nil, err
	}
	rc := &RunContext{
		CellID: sp.CellID, Params: params, Log: log,
		Settings: map[string]string{},
		inputs:   map[string]*InputRef{}, outputs: map[string][]byte{},
		progress: opt.Progress,
	}
	for k, v := range sp.Settings {
		rc.Settings[k] = v
	}
	for k, v := range opt.Settings {
		if v != "" {
			rc.Settings[k] = v
		}
	}
	var mInputs []artifacts.Input
	for _, in := range sp.Inputs {
		um, err := st.Lookup(in.Key)
		if err != nil {
			return nil, nil, fmt.Errorf("input %s (%s): %w", in.Name, in.CellID, err)
		}
		ref := &InputRef{CellID: in.CellID, outputs: map[string]blobGetter{}}
		for _, o := range um.Outputs {
			d := o.Digest
			ref.outputs[o.Name] = func(context.Context) ([]byte, error) {
				b, err := st.Get(d)
				if errors.Is(err, artifacts.ErrCorrupt) {
					st.Quarantine(d) // the next plan recomputes the producer
				}
				return b, err
			}
		}
		rc.inputs[in.Name] = ref
		mInputs = append(mInputs, artifacts.Input{Name: in.Name, CellID: in.CellID, Key: in.Key, Outputs: um.Outputs})
	}
	if k := recordKeyDesc(stage.Name, sp.StageVersion, canon, mInputs).Key(); k != sp.Key {
		return nil, nil, fmt.Errorf("spec does not match its key (recomputed %s)", k.Short())
	}
	return rc, mInputs, nil
}

// Mismatch is an output whose recomputation gave other bytes.
type Mismatch struct {
	Output      string
	Stored, Now artifacts.Digest // Now is zero if the output was not written
}

// RecomputeRecord runs the cell a record describes (a manifest of the store
// or of a remote) again in memory and compares its outputs with the
// record's (Go's GOCACHEVERIFY): a non-empty result means the stage is not
// deterministic, or its code changed outputs without a Version bump. The
// cell's inputs must be in the store. Nothing is written.
func RecomputeRecord(ctx context.Context, st *artifacts.Store, m *artifacts.Manifest, opt ExecOptions) ([]Mismatch, error) {
	r, err := recompute(ctx, st, m, opt)
	if err != nil {
		return nil, err
	}
	return r.bad, nil
}

// Restamp recomputes the cell m records as RecomputeRecord does and, when
// every output matches, stores the outputs and the run's log in st and
// returns the record of this run: m's key, params, inputs and outputs with
// this run's log and provenance (the binary's build stamp, the host, its
// CPU and kernel path, the times), with m's builds (History) as its
// Earlier ones. Publishing it is the caller's. On a
// mismatch it stores nothing and returns the mismatches.
func Restamp(ctx context.Context, st *artifacts.Store, m *artifacts.Manifest, opt ExecOptions) ([]Mismatch, *artifacts.Manifest, error) {
	r, err := recompute(ctx, st, m, opt)
	if err != nil {
		return nil, nil, err
	}
	if len(r.bad) > 0 {
		return r.bad, nil, nil
	}
	for _, o := range m.Outputs {
		if _, err := st.Put(r.rc.outputs[o.Name]); err != nil {
			return nil, nil, fmt.Errorf("cell %s: store output %s: %w", m.CellID, o.Name, err)
		}
	}
	rec := *m
	rec.Outputs = slices.Clone(m.Outputs)
	if rec.Log, err = st.Put(r.log); err != nil {
		return nil, nil, fmt.Errorf("cell %s: %w", m.CellID, err)
	}
	rec.Provenance = HostProvenance(opt.Executor)
	rec.Provenance.Earlier = m.Provenance.History()
	rec.Provenance.Start, rec.Provenance.End = r.start.UTC(), r.end.UTC()
	rec.Provenance.WallSecs, rec.Provenance.CPUSecs = r.end.Sub(r.start).Seconds(), r.cpu
	return nil, &rec, nil
}

// recomputed is one in-memory run of a recorded cell.
type recomputed struct {
	rc         *RunContext
	log        []byte
	start, end time.Time
	cpu        float64
	bad        []Mismatch
}

func recompute(ctx context.Context, st *artifacts.Store, m *artifacts.Manifest, opt ExecOptions) (*recomputed, error) {
	sp := &artifacts.Spec{Key: m.Key, CellID: m.CellID, Stage: m.Stage, StageVersion: m.StageVersion, Params: m.Params}
	for _, in := range m.Inputs {
		sp.Inputs = append(sp.Inputs, artifacts.SpecInput{Name: in.Name, CellID: in.CellID, Key: in.Key})
	}
	stage := opt.Stages[sp.Stage]
	if stage == nil {
		return nil, fmt.Errorf("cell %s: this binary has no stage %q", sp.CellID, sp.Stage)
	}
	var log bytes.Buffer
	rc, _, err := bindCell(st, sp, stage, opt, &log)
	if err != nil {
		return nil, fmt.Errorf("cell %s: %w", sp.CellID, err)
	}
	r := &recomputed{rc: rc, start: st.Now()}
	fmt.Fprintf(&log, "cell %s key %s stage %s v%d on %s (recompute of a record)\n", sp.CellID, sp.Key, stage.Name, sp.StageVersion, artifacts.Hostname())
	if err := runStage(ctx, stage, rc, &r.cpu); err != nil {
		return nil, fmt.Errorf("cell %s: %w", sp.CellID, err)
	}
	r.end = st.Now()
	fmt.Fprintf(&log, "done in %.2fs wall, %.2fs cpu\n", r.end.Sub(r.start).Seconds(), r.cpu)
	r.log = log.Bytes()
	for _, o := range m.Outputs {
		data, ok := rc.outputs[o.Name]
		var now artifacts.Digest
		if ok {
			now = artifacts.Sum(data)
		}
		if now != o.Digest {
			r.bad = append(r.bad, Mismatch{Output: o.Name, Stored: o.Digest, Now: now})
		}
	}
	if len(rc.outputs) != len(m.Outputs) {
		r.bad = append(r.bad, Mismatch{Output: fmt.Sprintf("(%d outputs now, %d stored)", len(rc.outputs), len(m.Outputs))})
	}
	return r, nil
}
