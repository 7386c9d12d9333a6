package stages

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"

	"repro/pipeline"
)

func TestSynthGolden(t *testing.T) {
	t.Parallel()
	a, order := runStage(t, Synth, &SynthParams{Index: 1, Work: 10, Scale: 1}, nil, nil)
	b, _ := runStage(t, Synth, &SynthParams{Index: 2, Work: 10, Scale: 1}, map[string]outputs{"a": a}, nil)
	checkGolden(t, "synth", digestLines(a, order)+digestLines(b, order))
	if _, _, err := runStageErr(t, Synth, &SynthParams{Index: 3, Fail: true}, nil); err == nil {
		t.Fatal("a failing synthetic cell succeeded")
	}
}

func TestSynthCells(t *testing.T) {
	t.Parallel()
	cells, err := SynthCells(&SynthConfig{Cells: 10, Width: 4, FanIn: 3, Fail: []int{5}})
	if err != nil {
		t.Fatal(err)
	}
	if len(cells) != 10 || len(cells[0].Inputs) != 0 || len(cells[5].Inputs) == 0 || !cells[5].Params.(*SynthParams).Fail {
		t.Fatalf("synthCells layout wrong: %d cells, inputs %d/%d", len(cells), len(cells[0].Inputs), len(cells[5].Inputs))
	}
	for _, bad := range []*SynthConfig{{Cells: 0}, {Cells: 3, FanIn: 9}} {
		if _, err := SynthCells(bad); err == nil {
			t.Errorf("SynthCells(%+v) accepted", bad)
		}
	}
}

// startOrder records the order in which cells start.
type startOrder struct {
	pipeline.Executor
	mu    sync.Mutex
	cells []string
}

func (e *startOrder) Execute(ctx context.Context, j *pipeline.Job) error {
	e.mu.Lock()
	e.cells = append(e.cells, j.CellID)
	e.mu.Unlock()
	return e.Executor.Execute(ctx, j)
}

// runSynth runs a synthetic graph on a fresh store at -j jobs. sleep, if
// set, gives the sleep of the cell at each rank in ID order. With noModel
// the cells lose the stage's cost model (the scheduler then knows nothing
// and starts them in ID order, as it did before it ordered by cost).
func runSynth(tb testing.TB, sc *SynthConfig, sleep func(rank int) int, jobs int, noModel bool) (*startOrder, *pipeline.RunReport, []*pipeline.Cell) {
	tb.Helper()
	cells, err := SynthCells(sc)
	if err != nil {
		tb.Fatal(err)
	}
	bare := *Synth
	bare.Cost = nil
	slices.SortFunc(cells, func(a, b *pipeline.Cell) int { return strings.Compare(a.ID, b.ID) })
	for r, c := range cells {
		if sleep != nil {
			c.Params.(*SynthParams).SleepMS = sleep(r)
		}
		if noModel {
			c.Stage = &bare
		}
	}
	var ex *startOrder
	_, rep := runGraph(tb, cells, pipeline.RunOptions{Profile: "synth", Jobs: jobs}, func(l *pipeline.LocalExecutor) pipeline.Executor {
		ex = &startOrder{Executor: l}
		return ex
	})
	return ex, rep, cells
}

func TestSynthScheduleStartsLongestFirst(t *testing.T) {
	t.Parallel()
	ex, _, cells := runSynth(t, &SynthConfig{Cells: 12, SleepMS: 1, SleepSpread: 5}, nil, 1, false)
	sleep := map[string]int{}
	for _, c := range cells {
		sleep[c.ID] = c.Params.(*SynthParams).SleepMS
	}
	for i := 1; i < len(ex.cells); i++ {
		a, b := ex.cells[i-1], ex.cells[i]
		if sleep[a] < sleep[b] {
			t.Fatalf("started %s (%d ms) before %s (%d ms): %v", a, sleep[a], b, sleep[b], ex.cells)
		}
	}
}

// BenchmarkSynthScheduleTail runs 20 independent cells of 50-450 ms of
// sleep (no CPU, so a loaded machine does not blur it), longest last in ID
// order, at -j 4, and reports the wall time over the ideal, max(total /
// jobs, longest cell), and the idle fraction of the workers (both include
// the store's per-cell overhead): longest-first against the ID order the
// scheduler had before.
func BenchmarkSynthScheduleTail(b *testing.B) {
	sc := &SynthConfig{Cells: 20}
	sleep := func(rank int) int { return 50 + 400*rank/19 }
	const jobs = 4
	for _, bc := range []struct {
		name    string
		noModel bool
	}{{"longest-first", false}, {"id-order", true}} {
		b.Run(bc.name, func(b *testing.B) {
			var ratio, idle float64
			for range b.N {
				_, rep, cells := runSynth(b, sc, sleep, jobs, bc.noModel)
				total, longest := 0.0, 0.0
				for _, c := range cells {
					s := float64(c.Params.(*SynthParams).SleepMS) / 1000
					total += s
					longest = max(longest, s)
				}
				ideal := max(total/jobs, longest)
				ratio += rep.Wall.Seconds() / ideal
				idle += 1 - rep.Busy.Seconds()/(rep.Wall.Seconds()*jobs)
			}
			b.ReportMetric(ratio/float64(b.N), "wall/ideal")
			b.ReportMetric(idle/float64(b.N), "idle-frac")
		})
	}
}
