package numdiff

import (
	"slices"
	"strings"
	"testing"

	"repro/site"
)

func build(shift float64) *Build {
	in := site.FixtureInput(shift)
	return FromSidecars(in.Tables, in.Figures)
}

func TestCompare(t *testing.T) {
	t.Parallel()
	// Experiment b's seeds all move: exactly b's numbers (its table
	// cell, the comparison a - b, its figure point and line) move.
	wantB := []string{"fig/sweep/line/b", "fig/sweep/ours/1000", "tab/b/sequential", "tab/compare/a-b"}
	for _, c := range []struct {
		name   string
		shift  float64
		moved  []string
		beyond bool
	}{
		{"unchanged", 0, nil, false},
		{"within noise", 0.05, wantB, false},
		{"beyond noise", 5, wantB, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			r := Compare(build(0), build(c.shift))
			var ids []string
			for _, m := range r.Moves {
				ids = append(ids, m.ID)
				if m.Beyond != c.beyond {
					t.Errorf("%s: Beyond = %v, want %v (%v)", m.ID, m.Beyond, c.beyond, m.Judgement)
				}
				if m.Change != Moved {
					t.Errorf("%s: change %s, want moved", m.ID, m.Change)
				}
				if m.Judgement == nil {
					t.Errorf("%s: no judgement of a move between two values", m.ID)
				}
			}
			if !slices.Equal(ids, c.moved) {
				t.Errorf("moved = %v, want %v", ids, c.moved)
			}
			if total := len(build(0).Numbers); r.Unchanged+len(r.Moves) != total {
				t.Errorf("unchanged %d + moved %d != %d numbers", r.Unchanged, len(r.Moves), total)
			}
		})
	}
}

// A table only one build has is named, not compared number by number;
// a number that gains a value is a status change, not judged; a number
// only one build has is new or removed, not judged.
func TestCompareGroupsAndStatus(t *testing.T) {
	t.Parallel()
	a, b := build(0), build(0)
	fa := site.FixtureInput(0)
	a = FromSidecars(fa.Tables, nil)
	r := Compare(a, b)
	if len(r.Moves) != 0 || !slices.Equal(r.OnlyB, []string{"fig/sweep"}) || len(r.OnlyA) != 0 {
		t.Errorf("Compare(no figure, figure) = %d moves, only in A %v, only in B %v; want 0, [], [fig/sweep]", len(r.Moves), r.OnlyA, r.OnlyB)
	}
	b = build(0)
	n := b.Numbers["tab/b/static"]
	n.Status, n.Mean, n.N = "ok", 93, 1
	r = Compare(build(0), b)
	if len(r.Moves) != 1 || r.Moves[0].ID != "tab/b/static" || r.Moves[0].Change != Status || r.Moves[0].Beyond || r.Moves[0].Judgement != nil || !strings.HasPrefix(string(r.Moves[0].Before.Status), "not run") {
		t.Errorf("a number that gains a value: %+v", r.Moves)
	}
	b = build(0)
	b.Numbers["tab/new/sequential"] = &Number{ID: "tab/new/sequential", Group: "tab", Status: "ok", Mean: 90, SD: 1, N: 3}
	delete(b.Numbers, "tab/a/sequential")
	r = Compare(build(0), b)
	if r.Count(New) != 1 || r.Count(Removed) != 1 || r.Count(Moved) != 0 || r.Beyond() != 0 {
		t.Errorf("one number new, one removed: new %d, removed %d, moved %d, beyond %d; want 1, 1, 0, 0", r.Count(New), r.Count(Removed), r.Count(Moved), r.Beyond())
	}
	for _, m := range r.Moves {
		if m.Judgement != nil {
			t.Errorf("%s (%s): judged against the seed noise with nothing to compare", m.ID, m.Change)
		}
	}
}
