package stages

import (
	"encoding/json"
	"math"
	"testing"

	"repro/cellid"
	"repro/numbers"
)

// TestFigureSelect: a point drawn at the best of its variants plots the
// variant with the higher seed mean (the first on a tie), the sidecar
// names it and every candidate's mean, and a point one of whose variants
// has no result is missing, not drawn at the other.
func TestFigureSelect(t *testing.T) {
	t.Parallel()
	// Point i, variant v (1-based), seed s: final accuracy acc[i][v-1][s].
	acc := [][][]float64{
		{{0.40, 0.42}, {0.44, 0.46}}, // variant 2 wins: 45 > 41
		{{0.50, 0.52}, {0.52, 0.50}}, // a tie at 51: variant 1
		{{0.30, 0.32}, nil},          // variant 2 never ran
	}
	sr := FigSeries{Name: "s", XKind: "value", Errors: "sd", Select: "best_mean", ShowLabels: true}
	in := map[string]outputs{}
	for i, pv := range acc {
		pt := FigPointRef{ID: "fig/f/s/" + string(rune('a'+i)), Experiment: "e" + string(rune('a'+i)), X: float64(i + 1), Status: numbers.Status{Kind: numbers.StatusRun}, Label: "p"}
		for v, seeds := range pv {
			name := pt.Experiment + "-" + string(rune('1'+v))
			ref := &CellRef{Experiment: name, Protocol: "sequential", Prefix: "train/" + name + "/sequential/split1", Seeds: "0 1",
				Input: cellid.FigureInput{Series: 0, Point: i, Variant: v + 1, Role: 'y'}}
			pt.Variants = append(pt.Variants, ref)
			for s, a := range seeds {
				fi := ref.Input
				fi.Seed = s
				in[fi.String()] = outputs{"result": tinyRecord(int64(s), a, 0, 0)}
			}
		}
		sr.Points = append(sr.Points, pt)
	}
	lay := FigLayout{Name: "f", Label: "fig:f", Profile: "test", Panels: []FigPanel{{Series: []FigSeries{sr}}}}
	b, err := json.Marshal(lay)
	if err != nil {
		t.Fatal(err)
	}
	if v := Figure.CellVersion(&FigureParams{Name: "f", Layout: string(b)}); v != 4 {
		t.Errorf("a figure that selects, with point labels, is at version %d, want 4", v)
	}
	out, _ := runStage(t, Figure, &FigureParams{Name: "f", Layout: string(b)}, in, nil)
	var side numbers.FigureSidecar
	if err := json.Unmarshal(out["ids"], &side); err != nil {
		t.Fatal(err)
	}
	want := []struct {
		chosen string
		y      float64
		means  []float64
	}{{"ea-2", 45, []float64{41, 45}}, {"eb-1", 51, []float64{51, 51}}}
	for i, w := range want {
		p := side.Points[i]
		sel := p.Selection
		if p.Status.Kind != numbers.StatusOK || sel == nil || sel.Rule != "best_mean" || sel.Chosen != w.chosen || p.Experiment != w.chosen || p.YCell.Experiment != w.chosen ||
			math.Abs(p.Y-w.y) > 1e-9 || len(sel.Candidates) != 2 {
			t.Fatalf("point %d: %+v, selection %+v; want %s at %v", i, p, sel, w.chosen, w.y)
		}
		for v, m := range w.means {
			// Means of two accuracies x100: exact to rounding.
			if c := sel.Candidates[v]; math.Abs(c.Mean-m) > 1e-9 || c.N != 2 || c.Status.Kind != numbers.StatusOK {
				t.Errorf("point %d candidate %d: %+v, want mean %v over 2 seeds", i, v, c, m)
			}
		}
	}
	if p := side.Points[2]; p.Status.Kind != numbers.StatusMissing || p.Experiment != "ec-2" || p.Selection.Chosen != "" {
		t.Errorf("point with a variant missing: %+v, selection %+v", p, p.Selection)
	}
	// Each drawing feature raises the version of the figures that use it
	// only (Figure's version history).
	for _, c := range []struct {
		series FigSeries
		xlog   bool
		want   int
	}{
		{FigSeries{Name: "s"}, true, 1},
		{FigSeries{Name: "s", Offset: 0.1}, false, 1},
		{FigSeries{Name: "s", Select: "best_mean"}, false, 2},
		{FigSeries{Name: "s", Offset: 0.1}, true, 3},
		{FigSeries{Name: "s", ShowLabels: true}, false, 4},
	} {
		lay := FigLayout{Panels: []FigPanel{{XLog: c.xlog, Series: []FigSeries{c.series}}}}
		b, _ := json.Marshal(lay)
		if v := Figure.CellVersion(&FigureParams{Layout: string(b)}); v != c.want {
			t.Errorf("series %+v (xlog %v): version %d, want %d", c.series, c.xlog, v, c.want)
		}
	}
}

// TestOurCaption: a caption's references to our numbers are filled from the
// points (mean, s.d., seeds below 60%, seed range, the frontier), and a
// reference to a point the figure lacks says so.
func TestOurCaption(t *testing.T) {
	t.Parallel()
	yes, no := true, false
	side := &numbers.FigureSidecar{Figure: "b", Points: []numbers.FigurePoint{
		{ID: "fig/b/iso/2", Status: numbers.Status{Kind: numbers.StatusOK}, Label: "isolated", Dominant: &yes, YCell: &numbers.AggCell{N: 6, Acc: numbers.Stat{Mean: 76.01, SD: 12.77},
			Values: []float64{86.3, 52.5, 57.2, 83.9, 80.6, 85.5}}},
		{ID: "fig/b/unm/2", Status: numbers.Status{Kind: numbers.StatusOK}, Experiment: "unmasked", Dominant: &no, YCell: &numbers.AggCell{N: 6, Acc: numbers.Stat{Mean: 83.0, SD: 3.0},
			Values: []float64{77.8, 86.9, 84, 83, 82, 84.3}}},
	}}
	got := ourCaption("A [[ours:iso/2]] (seeds [[seeds:iso/2]]), B [[ours:unm/2]]; front: [[nondominated]]; [[ours:gone/4]].", "b", side)
	want := "A $76.0\\pm12.8$ ($2$ of $6$ seeds below $60\\%$) (seeds $52.5$--$86.3$), B $83.0\\pm3.0$; front: isolated; (no such point: gone/4)."
	if got != want {
		t.Errorf("ourCaption =\n%s\nwant\n%s", got, want)
	}
}
