package pipeline

import (
	"testing"

	"repro/artifacts"
)

// TestEstimateSimulatesTheScheduler: on an empty store the estimate sums
// the cost model's seconds and simulates the scheduler (ready cells by
// longest chain first) on -j workers; costs 2 8 5 5 1 9 3, e feeding f.
// The walls below are traced by hand.
func TestEstimateSimulatesTheScheduler(t *testing.T) {
	t.Parallel()
	costs := map[string]int{"a": 2, "b": 8, "c": 5, "d": 5, "e": 1, "f": 9, "g": 3}
	g := costGraph(t, costs, map[string]string{"f": "e"})
	st, _ := artifacts.Open(t.TempDir(), artifacts.Options{})
	p, err := MakePlanWith(st, g, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		jobs       int
		wall, path float64
	}{
		// -j 1: everything in turn.
		{1, 33, 10},
		// -j 2, ranks e 10, f 9, b 8, c 5, d 5, g 3, a 2: at 0 e and b
		// start; e ends at 1, f starts (ends 10); b ends at 8, c starts
		// (ends 13); f ends at 10, d starts (ends 15); c ends at 13, g
		// (ends 16); d ends at 15, a (ends 17).
		{2, 17, 10},
		// Enough workers: the longest chain.
		{16, 10, 10},
	} {
		e := simulate(p, loadHistory(st, nil, nil), tc.jobs, nil)
		if e.Cells != 7 || e.CPU != 33 || e.Known != 0 || e.Wall != tc.wall || e.Path != tc.path {
			t.Errorf("-j %d: %+v, want 7 cells, 33 CPU-s, none known, wall %g, path %g", tc.jobs, e, tc.wall, tc.path)
		}
	}
	// After a run every cost is recorded: a version bump reruns them all,
	// now estimated from their records (Known), and cached cells are not
	// counted.
	runOrder(t, st, g, 2)
	if e := EstimatePlan(mustPlan(t, st, g), st, nil, 2); e.Cells != 0 || e.Wall != 0 {
		t.Errorf("everything cached: %+v, want nothing to run", e)
	}
	g.Stages["w"].Version = 2
	if e := EstimatePlan(mustPlan(t, st, g), st, nil, 2); e.Cells != 7 || e.Known != 7 {
		t.Errorf("after a version bump: %+v, want 7 cells, 7 from records", e)
	}
}

func mustPlan(t *testing.T, st *artifacts.Store, g *Graph) *Plan {
	t.Helper()
	p, err := MakePlanWith(st, g, "p", nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}
