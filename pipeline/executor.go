package pipeline

import (
	"context"

	"repro/artifacts"
)

// Executor runs cells. The engine hands it one Job at a time per worker
// (the scheduler decides how many run at once) and waits for Execute to
// return. An executor never returns outputs: a cell that succeeded has
// written its manifest to the store, and the engine reads it from there.
// That is what lets a cell run in another process or on another host
// (Slurm) that shares the store's filesystem.
type Executor interface {
	// Name is a short label for progress lines and provenance ("local", "slurm").
	Name() string
	// Execute runs the job to completion. It returns nil only when the cell's
	// manifest is in the store; a failure returns an error describing it (for
	// Slurm, with the job's final state and where its log is). Execute must
	// return promptly with ctx.Err() when ctx is cancelled, after stopping
	// whatever it started.
	Execute(ctx context.Context, job *Job) error
}

// Job is one cell to execute, as an executor sees it.
type Job struct {
	// Key is the cell key. The cell's spec, which `repro exec-cell`
	// needs to run it anywhere, is already in the store under this key.
	Key artifacts.Key
	// CellID is the human name, for job names and messages.
	CellID string
	// StoreDir is the absolute path of the store root.
	StoreDir string
	// LogPath is the cell's own log (absolute; its directory exists), which
	// ExecuteCell creates and writes while the cell runs. An executor that
	// captures a process's output (a Slurm job's) writes it beside it, at
	// LogPath with ".log" replaced by ".slurm.log", not to LogPath itself.
	LogPath string
	// RunID identifies this driver's run (for job names), stable across a
	// driver restart on the same plan.
	RunID string

	// Ran is set by the executor when this job computed the cell itself
	// (rather than finding it done, or waiting for another process that
	// computed it). It only feeds the run's counts.
	Ran bool
}
