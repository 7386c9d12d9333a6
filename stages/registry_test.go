package stages

import "testing"

// TestStageHistories: every entry of a stage's version history can raise a
// cell's version (it is above the stage's Version), says which cells it
// applies to and why.
func TestStageHistories(t *testing.T) {
	t.Parallel()
	n := 0
	for _, st := range all() {
		for i, b := range st.History {
			n++
			switch {
			case b.Version <= st.Version:
				t.Errorf("stage %s: history entry %d at version %d, not above the stage's Version %d: it changes no cell", st.Name, i, b.Version, st.Version)
			case b.Applies == nil:
				t.Errorf("stage %s: history entry %d (version %d) has no Applies", st.Name, i, b.Version)
			case len(b.Why) < 20:
				t.Errorf("stage %s: history entry %d (version %d) says why in %q", st.Name, i, b.Version, b.Why)
			}
		}
	}
	if n == 0 {
		t.Error("no stage has a version history")
	}
}
