package pipeline

import (
	"container/heap"
	"regexp"
	"strings"
	"time"

	"repro/artifacts"
)

// The scheduler starts, among the cells ready to run, the one with the
// longest expected path to the end of the run first: its own expected cost
// plus the most expensive chain of cells that wait on it. With independent
// cells (the train cells of a paper run) that is longest-first, so the long
// runs do not start last and leave one core working through the tail while
// the others idle. The order changes when cells run, never what they
// compute: results are identical whatever the order and -j.
//
// A cell's expected cost, in CPU seconds, comes from the records of the
// store and of the history remotes (RunOptions.History: a results ledger)
// first: the mean CPU time of earlier runs of the same config shape (the
// stage, the cell ID with its seed and split numbers taken out and the
// params without the seed, so every seed and split of an experiment shares
// its history), then of any earlier config of the same experiment (same
// cell ID shape: scaled by the stage's cost model, Stage.Cost, of this
// config over that of the recorded one, so that a smoke cell on a twentieth
// of the stream is not expected to take as long as the paper's record of
// it), then the stage's own cost model, then the mean of the stage's
// earlier cells, and one second when nothing is known.

// costHistory holds the CPU seconds of the cells finished in a store.
type costHistory struct {
	byConfig, byID, byStage map[string]*mean
	// records keeps, per experiment, the recorded runs (params and CPU
	// seconds) whose stage has a cost model; ratio is, once asked for,
	// their mean CPU seconds over the model's cost of their params.
	records map[string][]costRecord
	ratio   map[string]*mean
	// stages are the stages by name, for their cost models.
	stages map[string]*Stage
}

// costRecord is one recorded run of a stage with a cost model.
type costRecord struct {
	params string
	cpu    float64
}

type mean struct{ sum, n float64 }

func (m *mean) add(v float64) { m.sum += v; m.n++ }

func addTo(ms map[string]*mean, k string, v float64) {
	m := ms[k]
	if m == nil {
		m = new(mean)
		ms[k] = m
	}
	m.add(v)
}

func lookup(ms map[string]*mean, k string) (float64, bool) {
	if m := ms[k]; m != nil && m.n > 0 {
		return m.sum / m.n, true
	}
	return 0, false
}

// loadHistory reads every manifest of st and of the remotes (a results
// ledger: a fresh clone then orders and estimates its cells from every
// committed cell's CPU time). A store or remote it cannot read adds
// nothing: the order is a heuristic, never a reason to fail.
// stages are the graph's stages by name (their cost models scale records
// of other configs).
func loadHistory(st *artifacts.Store, remotes []artifacts.Remote, stages map[string]*Stage) *costHistory {
	h := &costHistory{byConfig: map[string]*mean{}, byID: map[string]*mean{}, byStage: map[string]*mean{},
		records: map[string][]costRecord{}, ratio: map[string]*mean{}, stages: stages}
	st.WalkManifests(func(m *artifacts.Manifest) error {
		h.add(m.Stage, m.CellID, m.Params, m.Provenance.CPUSecs)
		return nil
	})
	for _, r := range remotes {
		keys, _ := r.Keys()
		for _, k := range keys {
			if m, err := r.Manifest(k); err == nil {
				h.add(m.Stage, m.CellID, m.Params, m.Provenance.CPUSecs)
			}
		}
	}
	return h
}

func (h *costHistory) add(stage, cellID, params string, cpu float64) {
	addTo(h.byConfig, configShape(cellID, params), cpu)
	addTo(h.byID, ExperimentOf(cellID), cpu)
	addTo(h.byStage, stage, cpu)
	if s := h.stages[stage]; s != nil && s.Cost != nil && cpu > 0 {
		exp := ExperimentOf(cellID)
		h.records[exp] = append(h.records[exp], costRecord{params, cpu})
	}
}

// modelRatio is the mean, over the recorded runs of experiment exp, of
// their CPU seconds over what the cost model of stage s gives for their
// params (records whose params no longer decode are left out).
func (h *costHistory) modelRatio(s *Stage, exp string) (float64, bool) {
	if m, ok := h.ratio[exp]; ok {
		return lookup(map[string]*mean{exp: m}, exp)
	}
	m := new(mean)
	h.ratio[exp] = m
	for _, r := range h.records[exp] {
		ps, err := ParseParamsText(r.params)
		if err != nil {
			continue
		}
		dst := s.NewParams()
		if DecodeParams(s.Name, ps, dst) != nil {
			continue
		}
		if c := s.Cost(dst); c > 0 {
			m.add(r.cpu / c)
		}
	}
	return lookup(h.ratio, exp)
}

// expected returns the expected CPU seconds of cell c, whose canonical
// params text is params.
func (h *costHistory) expected(c *Cell, params string) float64 {
	v, _ := h.expectedKnown(c, params)
	return v
}

// expectedKnown is expected, and whether the cost came from recorded runs
// of the same experiment (its config shape or its cell ID shape) rather
// than from the stage's cost model or averages.
func (h *costHistory) expectedKnown(c *Cell, params string) (float64, bool) {
	if v, ok := lookup(h.byConfig, configShape(c.ID, params)); ok {
		return v, true
	}
	exp := ExperimentOf(c.ID)
	if c.Stage.Cost != nil && c.Stage.NewParams != nil && h.stages[c.Stage.Name] == c.Stage {
		if r, ok := h.modelRatio(c.Stage, exp); ok {
			return r * c.Stage.Cost(c.Params), true
		}
	}
	if v, ok := lookup(h.byID, exp); ok {
		return v, true
	}
	if c.Stage.Cost != nil {
		return c.Stage.Cost(c.Params), false
	}
	if v, ok := lookup(h.byStage, c.Stage.Name); ok {
		return v, false
	}
	return 1, false
}

// ExperimentOf is a cell ID with the numbers of its seeds and splits
// removed: the seeds and splits of one experiment share it
// ("train/full/sequential/split/seed"), and other digits stay, so that
// cifar10 and cifar100 cells do not. The scheduler's cost history and
// `repro status --cost` group cells by it.
func ExperimentOf(id string) string {
	return seedOrSplit.ReplaceAllString(id, "$1")
}

var seedOrSplit = regexp.MustCompile(`(seed|split)[0-9]+`)

// configShape is the key of a cell's config shape: its experiment and its
// params without the seed, so every seed and split of an experiment
// shares it.
func configShape(id, params string) string {
	return ExperimentOf(id) + "\x00" + paramsShape(params)
}

// paramsShape is canonical params text without the seed lines: seeds do not
// change how long a run takes.
func paramsShape(text string) string {
	var b strings.Builder
	for _, line := range strings.SplitAfter(text, "\n") {
		name, _, _ := strings.Cut(line, " ")
		if name == "seed" || strings.HasSuffix(name, ".seed") {
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// expectedCosts gives every cell of want its expected cost under h and its
// config shape (the key h keeps its means under).
func expectedCosts(want map[*Cell]bool, h *costHistory) (cost map[*Cell]float64, shape map[*Cell]string) {
	cost, shape = make(map[*Cell]float64, len(want)), make(map[*Cell]string, len(want))
	for c := range want {
		text := ""
		if ps, err := EncodeParams(c.Stage.Name, c.Params); err == nil {
			text = ParamsText(ps)
		}
		cost[c] = h.expected(c, text)
		shape[c] = configShape(c.ID, text)
	}
	return cost, shape
}

// rankCells gives every cell of want its rank: its cost plus the largest
// rank among the wanted cells that read it (users). cells is in
// topological order, so one pass from the end sees every user first.
func rankCells(cells []*Cell, want map[*Cell]bool, users map[*Cell][]*Cell, cost func(*Cell) float64) map[*Cell]float64 {
	rank := make(map[*Cell]float64, len(want))
	for i := len(cells) - 1; i >= 0; i-- {
		c := cells[i]
		if !want[c] {
			continue
		}
		tail := 0.0
		for _, u := range users[c] {
			tail = max(tail, rank[u])
		}
		rank[c] = cost(c) + tail
	}
	return rank
}

// jobQueue is a max-heap of jobs by rank; equal ranks leave in the order
// they were queued, so the order is deterministic.
type jobQueue struct {
	items []queued
	seq   int
}

type queued struct {
	job  *Job
	rank float64
	seq  int
}

func (q *jobQueue) Len() int { return len(q.items) }
func (q *jobQueue) Less(i, j int) bool {
	a, b := q.items[i], q.items[j]
	if a.rank != b.rank {
		return a.rank > b.rank
	}
	return a.seq < b.seq
}
func (q *jobQueue) Swap(i, j int) { q.items[i], q.items[j] = q.items[j], q.items[i] }
func (q *jobQueue) Push(x any)    { q.items = append(q.items, x.(queued)) }
func (q *jobQueue) Pop() any {
	it := q.items[len(q.items)-1]
	q.items = q.items[:len(q.items)-1]
	return it
}

func (q *jobQueue) push(j *Job, rank float64) {
	heap.Push(q, queued{job: j, rank: rank, seq: q.seq})
	q.seq++
}

func (q *jobQueue) peek() *Job { return q.items[0].job }

func (q *jobQueue) pop() *Job { return heap.Pop(q).(queued).job }

// recordRun stores what the scheduler saw of this run (wall, jobs, busy
// and CPU seconds) as the profile's last run, for `repro status`. It is
// called only when a job was dispatched, so a no-op run keeps the record of
// the last real one. A store that cannot take it loses only that report.
func recordRun(st *artifacts.Store, opt RunOptions, runID string, t0 time.Time, rep *RunReport, cpu float64) {
	end := time.Now()
	st.PutLastRun(&artifacts.RunRecord{
		Profile: opt.Profile, RunID: runID, Executor: opt.Executor.Name(), Jobs: opt.Jobs,
		Start: t0.UTC(), End: end.UTC(), WallSecs: end.Sub(t0).Seconds(), BusySecs: rep.Busy.Seconds(),
		CPUSecs: cpu, Executed: rep.Executed, Cached: rep.Cached, Failed: rep.Failed + rep.Skipped,
	})
}
