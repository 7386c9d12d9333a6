package pipeline

// workTracker estimates, for the progress line's ETA, the CPU seconds a
// run has done and has left (Event.WorkDone, WorkLeft). The scheduler's
// expected costs come from records of earlier runs, which may be stale:
// taken on another machine, or before a stage got faster. So a cell's
// estimate is the mean CPU time of the cells of its config shape this run
// has finished (the other seeds of an experiment take as long as the
// first), else its expected cost times the ratio of this run's CPU time to
// the expected one over the cells it has computed, both sums starting from
// ratioPrior seconds at ratio 1 so that a few short cells (downloads,
// whose times are mostly I/O) do not swing it: a machine twice as slow
// shows in the ratio after a few minutes of work.
type workTracker struct {
	expected map[*Cell]float64
	shape    map[*Cell]string
	pending  map[*Cell]bool      // wanted cells not finished, failed or skipped
	seen     map[string]*seenCPU // this run's computed cells, per config shape
	cpu, exp float64             // this run's computed cells: CPU seconds and their expected costs
	left     float64             // cached sum of the pending cells' estimates
	stale    bool                // left needs summing again
}

// ratioPrior is the CPU seconds of work at ratio 1 the ratio starts from.
const ratioPrior = 60.0

type seenCPU struct{ cpu, n float64 }

// newWorkTracker tracks the cells of pending, whose expected costs and
// config shapes are given.
func newWorkTracker(expected map[*Cell]float64, shape map[*Cell]string, pending map[*Cell]bool) *workTracker {
	return &workTracker{expected: expected, shape: shape, pending: pending, seen: map[string]*seenCPU{}, stale: true}
}

// estimate is the CPU seconds c is expected to take in this run.
func (t *workTracker) estimate(c *Cell) float64 {
	if s := t.seen[t.shape[c]]; s != nil {
		return s.cpu / s.n
	}
	return t.expected[c] * (t.cpu + ratioPrior) / (t.exp + ratioPrior)
}

// finish takes c off the pending cells; when this run computed it, cpu
// (its recorded CPU seconds) joins the work done and what is known of its
// shape.
func (t *workTracker) finish(c *Cell, computed bool, cpu float64) {
	if !t.pending[c] {
		return
	}
	delete(t.pending, c)
	t.stale = true
	if !computed {
		return
	}
	t.cpu += cpu
	t.exp += t.expected[c]
	k := t.shape[c]
	s := t.seen[k]
	if s == nil {
		s = &seenCPU{}
		t.seen[k] = s
	}
	s.cpu += cpu
	s.n++
}

// workLeft is the sum of the pending cells' estimates.
func (t *workTracker) workLeft() float64 {
	if t.stale {
		t.left = 0
		for c := range t.pending {
			t.left += t.estimate(c)
		}
		t.stale = false
	}
	return t.left
}
