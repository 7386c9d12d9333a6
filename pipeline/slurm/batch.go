package slurm

import (
	"context"
	"strconv"
	"strings"
	"time"

	"repro/pipeline"
)

// batchDelay is how long a batch stays open for more cells. The engine
// hands every ready cell to its workers at once, so the cells that can
// share a job arrive within microseconds of each other; 50 ms is small
// against Slurm's start-up latency (0.4-1 s).
const batchDelay = 50 * time.Millisecond

// batch is the cells submitted as one job, which runs them in turn.
type batch struct {
	jobs      []*pipeline.Job
	ctx       context.Context // the first cell's
	submitted chan struct{}   // closed once id or err is set
	id, name  string
	err       error
}

// join adds job to the open batch (opening one if none is) and returns the
// batch. The batch is submitted when it holds Options.Batch cells (at most
// maxBatch, whose keys fit the job's comment) or batchDelay after it
// opened, whichever comes first. Cells of another store
// or run do not share a batch: they close the open one and start their own.
func (e *Executor) join(ctx context.Context, job *pipeline.Job) *batch {
	e.batchMu.Lock()
	defer e.batchMu.Unlock()
	b := e.open
	if b != nil && (b.jobs[0].StoreDir != job.StoreDir || b.jobs[0].RunID != job.RunID) {
		e.open = nil
		go e.flush(b)
		b = nil
	}
	if b == nil {
		b = &batch{ctx: ctx, submitted: make(chan struct{})}
		e.open = b
		time.AfterFunc(batchDelay, func() {
			e.batchMu.Lock()
			mine := e.open == b
			if mine {
				e.open = nil
			}
			e.batchMu.Unlock()
			if mine {
				e.flush(b)
			}
		})
	}
	b.jobs = append(b.jobs, job)
	if len(b.jobs) >= min(e.opts.Batch, maxBatch) {
		e.open = nil
		go e.flush(b)
	}
	return b
}

// flush submits the batch's job. A batch of one is an ordinary job.
func (e *Executor) flush(b *batch) {
	b.name = jobName(b.jobs[0].RunID, b.jobs[0].Key.String())
	if len(b.jobs) > 1 {
		b.name += "+" + strconv.Itoa(len(b.jobs)-1)
	}
	b.id, b.err = e.submit(b.ctx, b.jobs, b.name)
	close(b.submitted)
}

// lineNaming returns the last line of the file at path (its last 64 KiB)
// that names key, at most 300 bytes of it, or "": in a batch's output,
// exec-cell's error for that cell.
func lineNaming(path, key string) string {
	lines := tailLines(path, 64<<10)
	for i := len(lines) - 1; i >= 0; i-- {
		if l := strings.TrimSpace(lines[i]); strings.Contains(l, key[:12]) {
			return clip(l)
		}
	}
	return ""
}
