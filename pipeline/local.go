package pipeline

import (
	"context"

	"repro/artifacts"
)

// LocalExecutor runs cells in this process, on the calling goroutine.
type LocalExecutor struct {
	Store    *artifacts.Store
	Stages   map[string]*Stage
	Settings map[string]string
	// Progress, if set, receives each running cell's own progress.
	Progress func(key, cellID string, done, total int64)
	// Waiting, if set, is told when a cell waits on another process's lock
	// (ExecOptions.Waiting).
	Waiting func(key, cellID, holder string)
}

// Name implements Executor.
func (e *LocalExecutor) Name() string { return "local" }

// Execute implements Executor.
func (e *LocalExecutor) Execute(ctx context.Context, job *Job) error {
	opt := ExecOptions{Stages: e.Stages, Settings: e.Settings, Executor: "local"}
	if e.Progress != nil {
		opt.Progress = func(done, total int64) { e.Progress(job.Key.String(), job.CellID, done, total) }
	}
	if e.Waiting != nil {
		opt.Waiting = func(holder string) { e.Waiting(job.Key.String(), job.CellID, holder) }
	}
	ran, err := ExecuteCell(ctx, e.Store, job.Key, opt)
	job.Ran = ran
	return err
}
