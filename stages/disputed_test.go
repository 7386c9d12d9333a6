package stages

import (
	"strings"
	"testing"

	"repro/verdict"
)

func disputedFixture() (*ReproductionParams, *AggregateRecord) {
	sd, lo, hi := 3.5, 0.2, 0.8
	p := &ReproductionParams{
		Values: []PublishedValue{
			{ID: "ablation/mirror/sequential", Mean: 79.4, SD: &sd}, // n = 0: the row's own seeds (RowSeeds)
			{ID: "fig/batch/unmasked-rotation/2/collapsed", Mean: 3, N: 6},
			{ID: "bpk/compare/rotation", Mean: 0.5, Lo: &lo, Hi: &hi},
		},
		Disputed: []DisputedRow{
			{ID: "ablation/mirror/sequential", Label: "mirror", Experiment: "mirror", Protocol: "sequential", Reference: "g17_mirror_s10", RowSeeds: 6,
				RefSeeds: []int64{0, 1, 2, 3, 4, 5}, RefAcc: []float64{79.7, 71.4, 77.9, 84.4, 72.4, 83.6}},
			{ID: "fig/batch/unmasked-rotation/2", Label: "br2 unmasked", Experiment: "rot", Protocol: "sequential", Reference: "g26",
				RefSeeds: []int64{0, 1, 2, 3, 4, 5}, RefAcc: []float64{83.4, 85.4, 11.2, 9.9, 84.9, 86.0}},
			{ID: "bpk/compare/rotation", Label: "rotation - none", Experiment: "rot", Minus: "mirror", Protocol: "sequential", RefNote: "none finished"},
		},
	}
	cell := func(exp string, vals ...float64) AggCell {
		c := AggCell{ID: "disputed/" + exp + "/sequential", Experiment: exp, Protocol: "sequential", Status: Status{Kind: StatusOK}, N: len(vals), Expected: 8, Values: vals}
		for i := range vals {
			c.Seeds = append(c.Seeds, int64(i))
		}
		c.Acc = MeanSD(vals)
		return c
	}
	rec := &AggregateRecord{Table: "disputed", Protocols: []string{"sequential"}, Rows: [][]AggCell{
		{cell("mirror", 72, 73, 71, 74, 70, 72, 73, 71)},
		{cell("rot", 88, 87, 89, 88, 86, 88, 40, 87)},
	}}
	return p, rec
}

func TestJudgeDisputed(t *testing.T) {
	t.Parallel()
	p, rec := disputedFixture()
	rows, err := JudgeDisputed(p, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	mirror := rows[0]
	if mirror.Paper.Mean == nil || *mirror.Paper.Mean != 79.4 || mirror.Paper.N != 6 || mirror.Paper.CollapsedKnown {
		t.Errorf("mirror paper side = %+v", mirror.Paper)
	}
	// Median of six: the mean of the middle two; tolerance for rounding.
	if mirror.Authors.N != 6 || abs(*mirror.Authors.Median-78.8) > 1e-9 || *mirror.Authors.Min != 71.4 {
		t.Errorf("mirror authors side = %+v", mirror.Authors)
	}
	if mirror.Ours.N != 8 || mirror.Ours.Note != "" {
		t.Errorf("mirror ours side = %+v", mirror.Ours)
	}
	names := []string{"authors - paper", "ours - paper", "ours - authors"}
	for i, pr := range mirror.Pairs {
		if pr.Name != names[i] || pr.Mean == nil || pr.Outcome == verdict.NotRun {
			t.Errorf("mirror pair %d = %+v", i, pr)
		}
	}
	// Ours - authors: 72.0 - 78.23 over 8 and 6 seeds.
	if d := mirror.Pairs[2].Mean.Diff; abs(d-(72.0-78.2333333)) > 1e-6 {
		t.Errorf("authors/ours diff = %.4f, want -6.2333", d)
	}
	if mirror.Pairs[0].Collapse != nil || mirror.Pairs[2].Collapse == nil {
		t.Errorf("mirror collapse judgements: paper/authors %v (the paper states no count), authors/ours %v", mirror.Pairs[0].Collapse, mirror.Pairs[2].Collapse)
	}

	br := rows[1]
	if br.Paper.Mean != nil || !br.Paper.CollapsedKnown || br.Paper.Collapsed != 3 || br.Paper.N != 6 {
		t.Errorf("br2 paper side = %+v", br.Paper)
	}
	if br.Authors.Collapsed != 2 || br.Ours.Collapsed != 1 {
		t.Errorf("br2 collapsed: authors %d (want 2), ours %d (want 1)", br.Authors.Collapsed, br.Ours.Collapsed)
	}
	if br.Pairs[0].Mean != nil || br.Pairs[0].Collapse == nil || br.Pairs[0].Collapse.Collapse.Ours != 2 {
		t.Errorf("br2 paper/authors = %+v: want no mean verdict and a collapse count", br.Pairs[0])
	}

	diff := rows[2]
	if diff.Paper.N != 0 || diff.Paper.Lo == nil || sideText(diff.Paper, true) != "+0.5 [+0.2, +0.8]" {
		t.Errorf("difference row's paper side = %q (n %d), want its interval and no n", sideText(diff.Paper, true), diff.Paper.N)
	}
	if diff.Ours.N != 8 || diff.Ours.CollapsedKnown || diff.Pairs[1].Mean == nil || !diff.Pairs[1].Mean.Paired {
		t.Errorf("difference row = %+v: want 8 paired seeds, no collapse count, a paired verdict", diff)
	}
	if diff.Authors.N != 0 || diff.Authors.Note != "none finished" || diff.Pairs[0].Mean != nil || diff.Pairs[2].Mean != nil {
		t.Errorf("difference row without the authors' runs = %+v", diff)
	}

	tex := DisputedTeX(rows)
	for _, want := range []string{"Disputed rows", "mirror & ", "\\texttt{ablation/mirror/sequential}", "authors per seed: s0 79.7", "3 coll.", "authors - paper: not judged"} {
		if !strings.Contains(tex, want) {
			t.Errorf("DisputedTeX lacks %q", want)
		}
	}
	if DisputedTeX(nil) != "" {
		t.Error("DisputedTeX(nil) is not empty")
	}
}

func TestJudgeDisputedMissingCell(t *testing.T) {
	t.Parallel()
	p, rec := disputedFixture()
	p.Disputed[0].Experiment = "absent"
	if _, err := JudgeDisputed(p, rec); err == nil || !strings.Contains(err.Error(), "no cell absent sequential") {
		t.Errorf("JudgeDisputed with a missing cell: error %v", err)
	}
}

// TestJudgeDisputedColumn: a row on another split reads its own column of
// the aggregate, not the protocol's.
func TestJudgeDisputedColumn(t *testing.T) {
	t.Parallel()
	p, rec := disputedFixture()
	p.Disputed = p.Disputed[:1]
	p.Disputed[0].Column = "sequential-split4321"
	if _, err := JudgeDisputed(p, rec); err == nil || !strings.Contains(err.Error(), "no cell mirror sequential-split4321") {
		t.Errorf("no such column: error %v", err)
	}
	c := rec.Rows[0][0]
	c.Protocol, c.Values = "sequential-split4321", []float64{60, 61, 62}
	c.Seeds, c.N = c.Seeds[:3], 3
	rec.Rows[0] = append(rec.Rows[0], c)
	rows, err := JudgeDisputed(p, rec)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Ours.N != 3 || *rows[0].Ours.Mean != 61 {
		t.Errorf("ours = %+v, want the split-2 column's three seeds", rows[0].Ours)
	}
	// The authors' runs of that split say so (run_seq.py --val-seed).
	p.Disputed[0].RefValSeed = 4321
	if rows, err = JudgeDisputed(p, rec); err != nil {
		t.Fatal(err)
	}
	want := "(run_seq.py --val --val-seed 4321, the held-out split of seed 4321)"
	if notes := strings.Join(rows[0].Notes(), "\n"); rows[0].RefValSeed != 4321 || !strings.Contains(notes, want) {
		t.Errorf("notes lack %q:\n%s", want, notes)
	}
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// TestDisputedCollapseLowerBound: where half or more of a column's seeds
// collapsed, its median is itself collapsed and the count (measured from
// the median, unchanged) is marked a lower bound; a row says which of the
// authors' scripts ran its runs.
func TestDisputedCollapseLowerBound(t *testing.T) {
	t.Parallel()
	low := computedSide([]int64{0, 1, 2, 3, 4, 5}, []float64{96, 14, 12, 95, 11, 10}, false)
	if low.Collapsed != 0 || !low.CollapsedAtLeast || sideText(low, false) != "39.7 ± 43.3, n=6, med 13.0, >=0 coll." {
		t.Errorf("half collapsed: %+v, text %q", low, sideText(low, false))
	}
	healthy := computedSide([]int64{0, 1, 2, 3}, []float64{96, 95, 40, 94}, false)
	if healthy.Collapsed != 1 || healthy.CollapsedAtLeast || !strings.HasSuffix(sideText(healthy, false), ", 1 coll.") {
		t.Errorf("one collapsed: %+v, text %q", healthy, sideText(healthy, false))
	}
	if d := computedSide([]int64{0, 1, 2}, []float64{50, -40, 1}, true); d.CollapsedAtLeast {
		t.Errorf("a paired difference has no collapse count: %+v", d)
	}
	r := DisputedResult{Label: "spike", ID: "substrate/x/acc", Reference: "v6_spiketrain8", RefScript: "run_mnist", Authors: low}
	notes := strings.Join(r.Notes(), "\n")
	for _, want := range []string{"authors' config v6_spiketrain8 (run_mnist.py, the official test set)",
		"authors: the collapse count is a lower bound: the median (13.0) is itself 83.0 points below the best seed (96.0)"} {
		if !strings.Contains(notes, want) {
			t.Errorf("notes lack %q:\n%s", want, notes)
		}
	}
	if tex := DisputedTeX([]DisputedResult{r}); !strings.Contains(tex, `med 13.0, $\geq$0 coll.`) {
		t.Errorf("DisputedTeX: no lower-bound mark:\n%s", tex)
	}
}
