package pipeline

import (
	"container/heap"
	"sort"

	"repro/artifacts"
)

// Estimate is what running a plan's stale cells is expected to take, from
// the CPU times recorded for earlier runs (the scheduler's cost history,
// see costHistory) and a simulation of the scheduler on Jobs workers.
type Estimate struct {
	Cells int     // cells that would run
	Known int     // of which the cost came from recorded runs of the same experiment
	CPU   float64 // expected CPU seconds, summed over the cells
	Jobs  int
	// Wall is the simulated wall time in seconds: cells start when their
	// inputs are done, the ready cell of highest rank first, on the first
	// free worker, as repro run does; each takes its expected CPU seconds.
	Wall float64
	// Path is the most expensive chain of dependent cells (no run at any
	// -j is shorter).
	Path float64
}

// EstimatePlan simulates a run of p's stale cells on jobs workers. History
// is read from the store and from the remotes' records (a fresh clone with
// a results ledger knows every committed cell's CPU time).
func EstimatePlan(p *Plan, st *artifacts.Store, remotes []artifacts.Remote, jobs int) Estimate {
	stages := map[string]*Stage{}
	for _, pc := range p.Cells {
		stages[pc.Cell.Stage.Name] = pc.Cell.Stage
	}
	return simulate(p, loadHistory(st, remotes, stages), max(jobs, 1), nil)
}

// EstimatePlanExcept is EstimatePlan without the stale cells skip names:
// the cells a run would not reach (those waiting for a cell that failed
// last time, which plan counts as blocked), so that its count of cells is
// plan's count to run.
func EstimatePlanExcept(p *Plan, st *artifacts.Store, remotes []artifacts.Remote, jobs int, skip func(*Cell) bool) Estimate {
	stages := map[string]*Stage{}
	for _, pc := range p.Cells {
		stages[pc.Cell.Stage.Name] = pc.Cell.Stage
	}
	return simulate(p, loadHistory(st, remotes, stages), max(jobs, 1), skip)
}

func simulate(p *Plan, h *costHistory, jobs int, skip func(*Cell) bool) Estimate {
	e := Estimate{Jobs: jobs}
	run := map[*Cell]bool{}
	for _, pc := range p.Cells {
		if pc.State == Stale && (skip == nil || !skip(pc.Cell)) {
			run[pc.Cell] = true
		}
	}
	cost := map[*Cell]float64{}
	users := map[*Cell][]*Cell{}
	waits := map[*Cell]int{}
	cells := make([]*Cell, len(p.Cells)) // topological
	for i, pc := range p.Cells {
		c := pc.Cell
		cells[i] = c
		if !run[c] {
			continue
		}
		v, known := h.expectedKnown(c, ParamsText(pc.Params))
		cost[c] = v
		e.Cells++
		e.CPU += v
		if known {
			e.Known++
		}
		for _, in := range c.Inputs {
			if run[in.Cell] {
				users[in.Cell] = append(users[in.Cell], c)
				waits[c]++
			}
		}
	}
	// The scheduler's rank: own cost plus the most expensive chain after it.
	rank := rankCells(cells, run, users, func(c *Cell) float64 { return cost[c] })
	for _, r := range rank {
		e.Path = max(e.Path, r)
	}
	var ready []*Cell
	for _, pc := range p.Cells {
		if run[pc.Cell] && waits[pc.Cell] == 0 {
			ready = append(ready, pc.Cell)
		}
	}
	// Event simulation: workers finish in time order; each finish may make
	// cells ready, and free workers take the ready cells of highest rank.
	var busy finishHeap
	now := 0.0
	for len(ready) > 0 || busy.Len() > 0 {
		sort.SliceStable(ready, func(i, j int) bool { return rank[ready[i]] > rank[ready[j]] })
		for len(ready) > 0 && busy.Len() < jobs {
			c := ready[0]
			ready = ready[1:]
			heap.Push(&busy, finishing{at: now + cost[c], cell: c})
		}
		f := heap.Pop(&busy).(finishing)
		now = f.at
		for _, u := range users[f.cell] {
			if waits[u]--; waits[u] == 0 {
				ready = append(ready, u)
			}
		}
	}
	e.Wall = now
	return e
}

type finishing struct {
	at   float64
	cell *Cell
}

// finishHeap is a min-heap of running cells by finishing time.
type finishHeap []finishing

func (f finishHeap) Len() int           { return len(f) }
func (f finishHeap) Less(i, j int) bool { return f[i].at < f[j].at }
func (f finishHeap) Swap(i, j int)      { f[i], f[j] = f[j], f[i] }
func (f *finishHeap) Push(x any)        { *f = append(*f, x.(finishing)) }
func (f *finishHeap) Pop() any {
	old := *f
	x := old[len(old)-1]
	*f = old[:len(old)-1]
	return x
}
