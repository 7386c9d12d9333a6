package pipeline

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sync"
	"testing"

	"repro/artifacts"
)

// orderExecutor records the order in which cells start.
type orderExecutor struct {
	Executor
	mu    sync.Mutex
	order []string
}

func (e *orderExecutor) Execute(ctx context.Context, j *Job) error {
	e.mu.Lock()
	e.order = append(e.order, j.CellID)
	e.mu.Unlock()
	return e.Executor.Execute(ctx, j)
}

// costGraph builds independent cells "w/<name>" whose stage's cost model
// reads the cost from V, plus "tail/<name>" cells reading some of them.
func costGraph(t *testing.T, costs map[string]int, tails map[string]string) *Graph {
	t.Helper()
	cnt := &counter{n: map[string]int{}}
	w := newStage("w", 1, cnt)
	w.Cost = func(p any) float64 { return float64(p.(*valParams).V) }
	var cells []*Cell
	byName := map[string]*Cell{}
	for name, v := range costs {
		if _, tail := tails[name]; tail {
			continue
		}
		c := &Cell{ID: "w/" + name, Stage: w, Params: &valParams{Name: name, V: v}}
		byName[name] = c
		cells = append(cells, c)
	}
	for name, from := range tails {
		cells = append(cells, &Cell{ID: "w/" + name, Stage: w, Params: &valParams{Name: name, V: costs[name]},
			Inputs: []CellInput{{"a", byName[from]}}})
	}
	g, err := NewGraph(cells)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func runOrder(t *testing.T, st *artifacts.Store, g *Graph, jobs int) ([]string, *RunReport) {
	t.Helper()
	ex := &orderExecutor{Executor: &LocalExecutor{Store: st, Stages: g.Stages}}
	rep, err := Run(context.Background(), st, g, RunOptions{Profile: "p", Jobs: jobs, Executor: ex})
	if err != nil {
		t.Fatal(err)
	}
	return ex.order, rep
}

func TestSchedulerStartsTheLongestCellsFirst(t *testing.T) {
	t.Parallel()
	// Independent cells: descending cost, ties by ID. "e" (cost 1) feeds
	// "f" (cost 9), so its chain (10) goes before "b" (8).
	costs := map[string]int{"a": 2, "b": 8, "c": 5, "d": 5, "e": 1, "f": 9, "g": 3}
	g := costGraph(t, costs, map[string]string{"f": "e"})
	st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
	order, _ := runOrder(t, st, g, 1)
	want := []string{"w/e", "w/f", "w/b", "w/c", "w/d", "w/g", "w/a"}
	if !slices.Equal(order, want) {
		t.Errorf("start order %v, want %v", order, want)
	}
}

func TestSchedulerLearnsCostsFromEarlierRuns(t *testing.T) {
	t.Parallel()
	h := &costHistory{byConfig: map[string]*mean{}, byID: map[string]*mean{}, byStage: map[string]*mean{}}
	// Earlier runs: two seeds of one config, and an older config of another
	// experiment.
	h.add("train", "train/full/seq/split1234/seed0", "train.eta 0.1\ntrain.seed 0\n", 20)
	h.add("train", "train/full/seq/split4321/seed1", "train.eta 0.1\ntrain.seed 1\n", 30)
	h.add("train", "train/anchor/seq/split1234/seed0", "train.eta 0.2\ntrain.seed 0\n", 45)
	h.add("train", "train/cifar10-full/seq/split1234/seed0", "train.eta 0.1\ntrain.seed 0\n", 100)
	model := &Stage{Name: "train", Cost: func(any) float64 { return 7 }}
	bare := &Stage{Name: "train"}
	other := &Stage{Name: "other"}
	for _, tc := range []struct {
		stage      *Stage
		id, params string
		want       float64
		whereFrom  string
	}{
		{model, "train/full/seq/split1234/seed5", "train.eta 0.1\ntrain.seed 5\n", 25, "same config, other seeds"},
		{model, "train/anchor/seq/split4321/seed2", "train.eta 0.3\ntrain.seed 2\n", 45, "same experiment, older config"},
		{model, "train/new/seq/split1234/seed0", "train.eta 0.1\ntrain.seed 0\n", 7, "the stage's cost model"},
		{bare, "train/new/seq/split1234/seed0", "train.eta 0.1\ntrain.seed 0\n", (20 + 30 + 45 + 100) / 4.0, "the stage's mean"},
		{other, "other/x", "", 1, "nothing known"},
		// Only seed and split numbers are dropped: cifar100 is not cifar10.
		{model, "train/cifar100-full/seq/split1234/seed0", "train.eta 0.1\ntrain.seed 0\n", 7, "the stage's cost model, not cifar10's history"},
	} {
		c := &Cell{ID: tc.id, Stage: tc.stage}
		if got := h.expected(c, tc.params); got != tc.want {
			t.Errorf("%s (%s): expected cost %g, want %g", tc.id, tc.whereFrom, got, tc.want)
		}
	}
}

func TestSchedulerOrderReadsTheStore(t *testing.T) {
	t.Parallel()
	// A store whose manifests say the cells of "w/b" took long: a new
	// config of the same cells (version bump) starts with b.
	costs := map[string]int{"a": 1, "b": 1, "c": 1}
	st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
	g := costGraph(t, costs, nil)
	runOrder(t, st, g, 1)
	err := st.WalkManifests(func(m *artifacts.Manifest) error {
		if m.CellID == "w/b" {
			m.Provenance.CPUSecs = 100
			return st.PutManifest(m)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	g.Stages["w"].Version = 2
	order, _ := runOrder(t, st, g, 1)
	if len(order) != 3 || order[0] != "w/b" {
		t.Errorf("start order %v, want w/b first (100 s last time)", order)
	}
}

func TestSchedulerOrderReadsHistoryRemotes(t *testing.T) {
	t.Parallel()
	// A ledger records that "w/b" took long; a run from an empty store
	// that only reads the ledger's history (as repro run --no-remote does)
	// starts with b, and still computes every cell itself.
	costs := map[string]int{"a": 1, "b": 1, "c": 1}
	g := costGraph(t, costs, nil)
	done, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
	runOrder(t, done, g, 1)
	ledger, err := artifacts.OpenDirRemote("ledger", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	err = done.WalkManifests(func(m *artifacts.Manifest) error {
		if m.CellID == "w/b" {
			m.Provenance.CPUSecs = 100
		}
		return ledger.PutManifest(m)
	})
	if err != nil {
		t.Fatal(err)
	}
	for _, hist := range [][]artifacts.Remote{nil, {ledger}} {
		st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
		ex := &orderExecutor{Executor: &LocalExecutor{Store: st, Stages: g.Stages}}
		rep, err := Run(context.Background(), st, g, RunOptions{Profile: "p", Jobs: 1, Executor: ex, History: hist})
		if err != nil {
			t.Fatal(err)
		}
		if rep.Executed != 3 || rep.Remote != 0 {
			t.Errorf("history %d remotes: %d executed, %d from a remote; want 3 and 0", len(hist), rep.Executed, rep.Remote)
		}
		want := "w/a" // equal costs: by ID
		if hist != nil {
			want = "w/b" // 100 s in the ledger
		}
		if ex.order[0] != want {
			t.Errorf("history %d remotes: start order %v, want %s first", len(hist), ex.order, want)
		}
	}
}

func TestRunRecordsIdleCoreSeconds(t *testing.T) {
	t.Parallel()
	costs := map[string]int{}
	for i := range 6 {
		costs[fmt.Sprint(i)] = i + 1
	}
	st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
	g := costGraph(t, costs, nil)
	_, rep := runOrder(t, st, g, 3)
	r, err := st.GetLastRun("p")
	if err != nil {
		t.Fatal(err)
	}
	if r.Jobs != 3 || r.Executed != 6 || r.Executor != "local" || r.BusySecs != rep.Busy.Seconds() {
		t.Errorf("run record %+v, report %+v", r, rep)
	}
	if r.BusySecs <= 0 || r.IdleSecs() < 0 || r.WallSecs < r.BusySecs/3 {
		t.Errorf("busy %g s, wall %g s, idle %g core-s: inconsistent", r.BusySecs, r.WallSecs, r.IdleSecs())
	}
	// A run with nothing to do keeps the record of the last real one.
	runOrder(t, st, g, 1)
	if r2, err := st.GetLastRun("p"); err != nil || r2.Jobs != 3 {
		t.Errorf("a no-op run replaced the run record: %+v, %v", r2, err)
	}
}

// ExperimentOf pools the seeds and splits of an experiment and keeps every
// other digit, so that CIFAR-10 and CIFAR-100 cells stay apart.
func TestExperimentOf(t *testing.T) {
	for id, want := range map[string]string{
		"train/full/sequential/split1234/seed3":      "train/full/sequential/split/seed",
		"train/full/sequential/split5678/seed0":      "train/full/sequential/split/seed",
		"train/cifar100-full/static/split1234/seed2": "train/cifar100-full/static/split/seed",
		"train/cifar10-full/static/split1234/seed2":  "train/cifar10-full/static/split/seed",
		"streams/mnist-static-split1234":             "streams/mnist-static-split",
		"split/mnist-1234":                           "split/mnist-1234",
		"synth/l3/c19":                               "synth/l3/c19",
	} {
		if got := ExperimentOf(id); got != want {
			t.Errorf("ExperimentOf(%q) = %q, want %q", id, got, want)
		}
	}
}

// The work left counts no cell the plan expects the store or a remote to
// hold (RunOptions.Held): the ETA of a fresh clone's run, which takes most
// cells from the results ledger, is the time of the few it computes.
func TestRunWorkLeftSkipsRemoteCells(t *testing.T) {
	t.Parallel()
	g := costGraph(t, map[string]int{"a": 2, "b": 8, "c": 5, "e": 1, "f": 9}, map[string]string{"f": "e"})
	st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
	var first *Event
	ex := &LocalExecutor{Store: st, Stages: g.Stages}
	_, err := Run(context.Background(), st, g, RunOptions{Profile: "p", Jobs: 1, Executor: ex,
		Held: func(c *Cell) bool { return c.ID == "w/b" || c.ID == "w/f" },
		Events: func(ev Event) {
			if ev.Kind == EventStart && first == nil {
				first = &ev
			}
		}})
	if err != nil {
		t.Fatal(err)
	}
	if first == nil || first.WorkLeft != 8 { // a, c, e: 2+5+1
		t.Fatalf("first start: %+v, want 8 s of work left", first)
	}
}

// The events count the run's work: all of it is left when the first cell
// starts (the cost model's 25 s), and at the end none is, and the work
// done is the CPU time the cells' records give.
func TestRunEventsCountWork(t *testing.T) {
	t.Parallel()
	costs := map[string]int{"a": 2, "b": 8, "c": 5, "e": 1, "f": 9}
	g := costGraph(t, costs, map[string]string{"f": "e"})
	st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
	var mu sync.Mutex
	var evs []Event
	ex := &LocalExecutor{Store: st, Stages: g.Stages}
	_, err := Run(context.Background(), st, g, RunOptions{Profile: "p", Jobs: 2, Executor: ex, Events: func(ev Event) {
		mu.Lock()
		evs = append(evs, ev)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	if first := evs[0]; first.Kind != EventStart || first.Cell.ID != "w/e" || first.Cost != 1 || first.WorkDone != 0 || first.WorkLeft != 25 {
		t.Errorf("first event %+v: want w/e's start (cost 1, the longest chain) with 25 s of work left", first)
	}
	cpu := 0.0
	st.WalkManifests(func(m *artifacts.Manifest) error {
		cpu += m.Provenance.CPUSecs
		return nil
	})
	for i, ev := range evs[1:] {
		if ev.WorkDone < evs[i].WorkDone {
			t.Errorf("event %d %+v after %+v: the work done fell", i+1, ev, evs[i])
		}
	}
	if last := evs[len(evs)-1]; math.Abs(last.WorkDone-cpu) > 1e-9 || last.WorkLeft != 0 {
		t.Errorf("last event %+v: want %g s done (the records), 0 left", last, cpu)
	}
}

// A cell's estimate is its config's mean in this run once one has
// finished, else its expected cost scaled by this run's ratio of CPU time
// to expected (from ratioPrior seconds at 1); a cached cell leaves the
// work without adding to the work done.
func TestWorkTrackerLearnsFromTheRun(t *testing.T) {
	a, b, c, d := &Cell{ID: "a"}, &Cell{ID: "b"}, &Cell{ID: "c"}, &Cell{ID: "d"}
	tr := newWorkTracker(
		map[*Cell]float64{a: 100, b: 100, c: 20, d: 40},
		map[*Cell]string{a: "x", b: "x", c: "y", d: "z"},
		map[*Cell]bool{a: true, b: true, c: true, d: true})
	near := func(got, want float64) bool { return math.Abs(got-want) < 1e-9 }
	if got := tr.workLeft(); !near(got, 260) {
		t.Fatalf("work left at the start %g, want 260", got)
	}
	tr.finish(a, true, 300) // x took three times its expected time
	r := (300 + ratioPrior) / (100 + ratioPrior)
	if !near(tr.estimate(b), 300) || !near(tr.estimate(c), 20*r) || !near(tr.estimate(d), 40*r) || !near(tr.workLeft(), 300+60*r) {
		t.Errorf("after a: estimates of b, c, d %g, %g, %g, work left %g; want 300, %g, %g, %g",
			tr.estimate(b), tr.estimate(c), tr.estimate(d), tr.workLeft(), 20*r, 40*r, 300+60*r)
	}
	tr.finish(b, false, 0) // found cached
	tr.finish(b, true, 99) // a second report of a finished cell is ignored
	if !near(tr.workLeft(), 60*r) || tr.cpu != 300 {
		t.Errorf("after b: work left %g, done %g; want %g and 300", tr.workLeft(), tr.cpu, 60*r)
	}
}

// Plan.Held is what a run without remotes passes as RunOptions.Held: the
// cells the store holds count no work (a warm store's ETA once counted
// every cell the scheduler had not met yet).
func TestPlanHeld(t *testing.T) {
	t.Parallel()
	g := costGraph(t, map[string]int{"a": 2, "b": 8, "c": 5, "e": 1, "f": 9}, map[string]string{"f": "e"})
	st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
	cold, err := MakePlan(st, g, "p")
	if err != nil {
		t.Fatal(err)
	}
	ex := &LocalExecutor{Store: st, Stages: g.Stages}
	if _, err := Run(context.Background(), st, g, RunOptions{Profile: "p", Jobs: 1, Executor: ex, Only: func(c *Cell) bool { return c.ID != "w/c" }}); err != nil {
		t.Fatal(err)
	}
	warm, err := MakePlan(st, g, "p")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range g.Cells {
		if cold.Held(c) {
			t.Errorf("%s held by the plan of an empty store", c.ID)
		}
		if want := c.ID != "w/c"; warm.Held(c) != want {
			t.Errorf("%s: held %v after a run without it, want %v", c.ID, warm.Held(c), want)
		}
	}
	var first *Event
	if _, err := Run(context.Background(), st, g, RunOptions{Profile: "p", Jobs: 1, Executor: ex, Held: warm.Held, Events: func(ev Event) {
		if ev.Kind == EventStart && first == nil {
			first = &ev
		}
	}}); err != nil {
		t.Fatal(err)
	}
	if first == nil || first.Cell.ID != "w/c" || first.WorkLeft != 5 {
		t.Errorf("first start %+v: want w/c's with its 5 s left, no more", first)
	}
}
