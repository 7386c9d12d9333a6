package pipeline

import (
	"testing"

	"repro/artifacts"
)

// A record that names an input by a key the plan no longer gives that
// input is recomputed from the input the plan names, but only when both
// name the same outputs.
func TestReboundInputs(t *testing.T) {
	key := func(s string) artifacts.Key { return artifacts.Key(artifacts.Sum([]byte(s))) }
	out := []artifacts.Output{{Name: "result", Digest: artifacts.Sum([]byte("r"))}}
	other := []artifacts.Output{{Name: "result", Digest: artifacts.Sum([]byte("other"))}}
	up := func(id, k string, outs []artifacts.Output) *PlannedCell {
		return &PlannedCell{Cell: &Cell{ID: id}, Key: key(k), KeyKnown: true, Manifest: &artifacts.Manifest{CellID: id, Key: key(k), Outputs: outs}}
	}
	a, b, c := up("train/a", "a-new", out), up("train/b", "b-new", other), up("train/c", "c", out)
	agg := &PlannedCell{Cell: &Cell{ID: "aggregate/x"}, Manifest: &artifacts.Manifest{CellID: "aggregate/x", Inputs: []artifacts.Input{
		{Name: "a", CellID: "train/a", Key: key("a-old"), Outputs: out}, // same outputs, new key: rebound
		{Name: "b", CellID: "train/b", Key: key("b-old"), Outputs: out}, // other outputs: kept
		{Name: "c", CellID: "train/c", Key: key("c"), Outputs: out},     // same key: kept
		{Name: "d", CellID: "train/gone", Key: key("d"), Outputs: out},  // not planned: kept
	}}}
	p := &Plan{byID: map[string]*PlannedCell{"train/a": a, "train/b": b, "train/c": c, "aggregate/x": agg}}
	m := p.Rebound(agg)
	want := []artifacts.Key{key("a-new"), key("b-old"), key("c"), key("d")}
	for i, in := range m.Inputs {
		if in.Key != want[i] {
			t.Errorf("input %s: key %s, want %s", in.Name, in.Key.Short(), want[i].Short())
		}
	}
	if agg.Manifest.Inputs[0].Key != key("a-old") {
		t.Error("Rebound changed the planned cell's own record")
	}
	if p.Rebound(&PlannedCell{Cell: &Cell{ID: "x"}}) != nil {
		t.Error("Rebound of a cell without a record is not nil")
	}
}
