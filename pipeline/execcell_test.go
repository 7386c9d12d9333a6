package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/artifacts"
)

// A symlink planted under a cell's log name (in a store others can write)
// is never followed: the cell fails naming the log, and the link's target
// is left as it was.
func TestCellLogNotThroughSymlink(t *testing.T) {
	t.Parallel()
	st, err := artifacts.Open(filepath.Join(t.TempDir(), "store"), artifacts.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cnt := &counter{}
	c := &Cell{ID: "a/0", Stage: newStage("a", 1, cnt), Params: &valParams{Name: "a/0", V: 1}}
	g, err := NewGraph([]*Cell{c})
	if err != nil {
		t.Fatal(err)
	}
	p, err := MakePlan(st, g, "p")
	if err != nil {
		t.Fatal(err)
	}
	victim := filepath.Join(t.TempDir(), "victim")
	os.WriteFile(victim, []byte("someone's file"), 0o644)
	if err := os.Symlink(victim, st.LogPath(p.Cells[0].Key)); err != nil {
		t.Fatal(err)
	}
	rep, err := Run(t.Context(), st, g, RunOptions{Profile: "p", Jobs: 1, Executor: &LocalExecutor{Store: st, Stages: g.Stages}})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Failed != 1 || !strings.Contains(rep.Err().Error(), "too many levels of symbolic links") {
		t.Errorf("run over a planted log symlink: %+v, %v", rep, rep.Err())
	}
	if b, _ := os.ReadFile(victim); string(b) != "someone's file" {
		t.Fatalf("the link's target was written: %q", b)
	}
}
