package experiments

import (
	"slices"
	"testing"
)

// TestSections: every stage's section has a key of its own and a load, and
// exactly one of cells and report (which decides when it is loaded and
// where its cells go).
func TestSections(t *testing.T) {
	t.Parallel()
	var keys []string
	for i, s := range sections {
		switch {
		case s.key == "" || slices.Contains(keys, s.key):
			t.Errorf("section %d: key %q empty or listed twice", i, s.key)
		case s.load == nil:
			t.Errorf("section %s: no load", s.key)
		case (s.cells == nil) == (s.report == nil):
			t.Errorf("section %s: want exactly one of cells and report", s.key)
		}
		keys = append(keys, s.key)
	}
}
