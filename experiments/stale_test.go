package experiments

import (
	"strings"
	"testing"

	"repro/numbers"
)

func TestDiffNumbers(t *testing.T) {
	t.Parallel()
	num := func(id, text string) numbers.NumberRef {
		return numbers.NumberRef{ID: id, Row: 1, Column: 1, Text: text}
	}
	cmp := func(id string, d float64) numbers.Comparison {
		return numbers.Comparison{ID: id, Status: "ok", Diff: d, Lo: d - 1, Hi: d + 1}
	}
	cases := []struct {
		name     string
		old, cur *numbers.Sidecar
		want     []string // substrings, one per stale line, in order
	}{
		{"same", &numbers.Sidecar{Numbers: []numbers.NumberRef{num("t/a/s", "$1.0$")}},
			&numbers.Sidecar{Numbers: []numbers.NumberRef{num("t/a/s", "$1.0$")}}, nil},
		{"changed value", &numbers.Sidecar{Numbers: []numbers.NumberRef{num("t/a/s", "$1.0$"), num("t/b/s", "$2.0$")}},
			&numbers.Sidecar{Numbers: []numbers.NumberRef{num("t/a/s", "$1.0$"), num("t/b/s", "$2.1$")}},
			[]string{`t/b/s (row 1, column 1): committed "$2.0$", would render "$2.1$"`}},
		{"row removed and added", &numbers.Sidecar{Numbers: []numbers.NumberRef{num("t/a/s", "$1.0$")}},
			&numbers.Sidecar{Numbers: []numbers.NumberRef{num("t/c/s", "$1.0$")}},
			[]string{"t/a/s (row 1, column 1): no longer in the table", "t/c/s (row 1, column 1): new"}},
		{"comparison moved past rounding", &numbers.Sidecar{Comparisons: []numbers.Comparison{cmp("t/compare/x", 0.5)}},
			&numbers.Sidecar{Comparisons: []numbers.Comparison{cmp("t/compare/x", 0.56)}},
			[]string{"t/compare/x: committed +0.5 [-0.5, +1.5], would be +0.6 [-0.4, +1.6]"}},
		{"comparison within rounding", &numbers.Sidecar{Comparisons: []numbers.Comparison{cmp("t/compare/x", 0.50)}},
			&numbers.Sidecar{Comparisons: []numbers.Comparison{cmp("t/compare/x", 0.52)}}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := DiffNumbers(c.old, c.cur)
			if len(got) != len(c.want) {
				t.Fatalf("diffNumbers = %q, want %d line(s) %q", got, len(c.want), c.want)
			}
			for i := range got {
				if !strings.Contains(got[i], c.want[i]) {
					t.Errorf("line %d = %q, want it to contain %q", i, got[i], c.want[i])
				}
			}
		})
	}
}
