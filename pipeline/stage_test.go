package pipeline

import (
	"math/rand/v2"
	"testing"
)

// TestCellVersion: a cell's version is the largest of the stage's Version
// and every history entry that applies to it, so an entry can raise a cell
// above Version but never lower it, and bumping Version reruns every cell.
func TestCellVersion(t *testing.T) {
	t.Parallel()
	above := func(n int) func(any) bool { return func(p any) bool { return p.(int) >= n } }
	history := []Bump{
		{Version: 2, Applies: above(2), Why: "params from 2"},
		{Version: 5, Applies: above(5), Why: "params from 5"},
		{Version: 3, Applies: func(p any) bool { return p.(int)%2 == 1 }, Why: "odd params"},
	}
	for _, c := range []struct {
		version int
		history []Bump
		param   int
		want    int
	}{
		{version: 3, param: 7, want: 3},
		{version: 1, history: history, param: 0, want: 1},
		{version: 1, history: history, param: 1, want: 3},
		{version: 1, history: history, param: 2, want: 2},
		{version: 1, history: history, param: 3, want: 3},
		{version: 1, history: history, param: 6, want: 5},
		{version: 4, history: history, param: 3, want: 4},
		{version: 6, history: history, param: 6, want: 6},
	} {
		s := &Stage{Name: "s", Version: c.version, History: c.history}
		if got := s.CellVersion(c.param); got != c.want {
			t.Errorf("Version %d, %d history entries, param %d: CellVersion = %d, want %d", c.version, len(c.history), c.param, got, c.want)
		}
	}
}

// TestCellVersionOrderFree: the order of a history's entries does not
// change any cell's version (the rule is a maximum, not a first match).
func TestCellVersionOrderFree(t *testing.T) {
	t.Parallel()
	var history []Bump
	for v := 2; v <= 9; v++ {
		history = append(history, Bump{Version: v, Applies: func(p any) bool { return p.(int)%v == 0 }, Why: "multiples"})
	}
	want := map[int]int{}
	s := &Stage{Name: "s", Version: 1, History: history}
	for p := range 100 {
		want[p] = s.CellVersion(p)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		shuffled := append([]Bump(nil), history...)
		rng.Shuffle(len(shuffled), func(i, j int) { shuffled[i], shuffled[j] = shuffled[j], shuffled[i] })
		s := &Stage{Name: "s", Version: 1, History: shuffled}
		for p := range 100 {
			if got := s.CellVersion(p); got != want[p] {
				t.Fatalf("param %d: CellVersion = %d after a shuffle, %d before", p, got, want[p])
			}
		}
	}
	if want[0] != 9 || want[1] != 1 || want[12] != 6 || want[35] != 7 {
		t.Errorf("CellVersion of 0, 1, 12, 35 = %d %d %d %d, want 9 1 6 7", want[0], want[1], want[12], want[35])
	}
}
