package stages

import "testing"

func TestSynthGolden(t *testing.T) {
	t.Parallel()
	a, order := runStage(t, Synth, &SynthParams{Index: 1, Work: 10, Scale: 1}, nil, nil)
	b, _ := runStage(t, Synth, &SynthParams{Index: 2, Work: 10, Scale: 1}, map[string]outputs{"a": a}, nil)
	checkGolden(t, "synth", digestLines(a, order)+digestLines(b, order))
	if _, _, err := runStageErr(Synth, &SynthParams{Index: 3, Fail: true}, nil); err == nil {
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
