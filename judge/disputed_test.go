package judge

import (
	"strings"
	"testing"

	"repro/numbers"
	"repro/published"
	"repro/verdict"
)

func disputedFixture() (*Params, *numbers.AggregateRecord) {
	sd, lo, hi := 3.5, 0.2, 0.8
	p := &Params{
		Values: []published.Value{
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
	cell := func(exp string, vals ...float64) numbers.AggCell {
		c := numbers.AggCell{ID: "disputed/" + exp + "/sequential", Experiment: exp, Protocol: "sequential", Status: numbers.Status{Kind: numbers.StatusOK}, N: len(vals), Expected: 8, Values: vals}
		for i := range vals {
			c.Seeds = append(c.Seeds, int64(i))
		}
		c.Acc = numbers.MeanSD(vals)
		return c
	}
	rec := &numbers.AggregateRecord{Table: "disputed", Protocols: []string{"sequential"}, Rows: [][]numbers.AggCell{
		{cell("mirror", 72, 73, 71, 74, 70, 72, 73, 71)},
		{cell("rot", 88, 87, 89, 88, 86, 88, 40, 87)},
	}}
	return p, rec
}

func TestJudgeDisputed(t *testing.T) {
	t.Parallel()
	p, rec := disputedFixture()
	rows, err := judgeDisputed(p, rec)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 3 {
		t.Fatalf("%d rows, want 3", len(rows))
	}
	mirror := rows[0]
	if mirror.Paper.Mean == nil || *mirror.Paper.Mean != 79.4 || mirror.Paper.N != 6 || !mirror.Paper.FailedKnown || mirror.Paper.Failed != 0 {
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
	// 79.4 ± 3.5 over six seeds implies no seed below 60% (Samuelson's
	// bound): the paper's failure count is known, 0.
	if mirror.Pairs[0].Failures == nil || mirror.Pairs[2].Failures == nil {
		t.Errorf("mirror failure judgements: paper/authors %v, authors/ours %v", mirror.Pairs[0].Failures, mirror.Pairs[2].Failures)
	}

	br := rows[1]
	if br.Paper.Mean != nil || !br.Paper.FailedKnown || br.Paper.Failed != 3 || br.Paper.N != 6 {
		t.Errorf("br2 paper side = %+v", br.Paper)
	}
	if br.Authors.Failed != 2 || br.Ours.Failed != 1 {
		t.Errorf("br2 failed: authors %d (want 2), ours %d (want 1)", br.Authors.Failed, br.Ours.Failed)
	}
	if br.Pairs[0].Mean != nil || br.Pairs[0].Failures == nil || br.Pairs[0].Failures.Failures.Ours != 2 {
		t.Errorf("br2 paper/authors = %+v: want no mean verdict and a failure count", br.Pairs[0])
	}

	diff := rows[2]
	if diff.Paper.N != 0 || diff.Paper.Lo == nil || sideText(diff.Paper, true) != "+0.5 [+0.2, +0.8]" {
		t.Errorf("difference row's paper side = %q (n %d), want its interval and no n", sideText(diff.Paper, true), diff.Paper.N)
	}
	if diff.Ours.N != 8 || diff.Ours.FailedKnown || diff.Pairs[1].Mean == nil || !diff.Pairs[1].Mean.Paired {
		t.Errorf("difference row = %+v: want 8 paired seeds, no collapse count, a paired verdict", diff)
	}
	if diff.Authors.N != 0 || diff.Authors.Note != "none finished" || diff.Pairs[0].Mean != nil || diff.Pairs[2].Mean != nil {
		t.Errorf("difference row without the authors' runs = %+v", diff)
	}

	tex := disputedTeX(rows)
	for _, want := range []string{"Disputed rows", "mirror & ", "\\texttt{ablation/\\allowbreak{}mirror/\\allowbreak{}sequential}", "authors per seed: s0 79.7", "3 failed", "authors - paper: not judged"} {
		if !strings.Contains(tex, want) {
			t.Errorf("disputedTeX lacks %q", want)
		}
	}
	if disputedTeX(nil) != "" {
		t.Error("disputedTeX(nil) is not empty")
	}
}

func TestJudgeDisputedMissingCell(t *testing.T) {
	t.Parallel()
	p, rec := disputedFixture()
	p.Disputed[0].Experiment = "absent"
	if _, err := judgeDisputed(p, rec); err == nil || !strings.Contains(err.Error(), "no cell absent sequential") {
		t.Errorf("judgeDisputed with a missing cell: error %v", err)
	}
}

// TestJudgeDisputedColumn: a row on another split reads its own column of
// the aggregate, not the protocol's.
func TestJudgeDisputedColumn(t *testing.T) {
	t.Parallel()
	p, rec := disputedFixture()
	p.Disputed = p.Disputed[:1]
	p.Disputed[0].Column = "sequential-split4321"
	if _, err := judgeDisputed(p, rec); err == nil || !strings.Contains(err.Error(), "no cell mirror sequential-split4321") {
		t.Errorf("no such column: error %v", err)
	}
	c := rec.Rows[0][0]
	c.Protocol, c.Values = "sequential-split4321", []float64{60, 61, 62}
	c.Seeds, c.N = c.Seeds[:3], 3
	rec.Rows[0] = append(rec.Rows[0], c)
	rows, err := judgeDisputed(p, rec)
	if err != nil {
		t.Fatal(err)
	}
	if rows[0].Ours.N != 3 || *rows[0].Ours.Mean != 61 {
		t.Errorf("ours = %+v, want the split-2 column's three seeds", rows[0].Ours)
	}
	// The authors' runs of that split say so (run_seq.py --val-seed).
	p.Disputed[0].RefValSeed = 4321
	if rows, err = judgeDisputed(p, rec); err != nil {
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

// TestDisputedFailures: a column counts its severe failures by the paper's
// definition (a final accuracy below 60%), a paired difference none; a row
// says which of the authors' scripts ran its runs.
func TestDisputedFailures(t *testing.T) {
	t.Parallel()
	low := computedSide([]int64{0, 1, 2, 3, 4, 5}, []float64{96, 14, 12, 95, 11, 10}, false)
	if low.Failed != 4 || sideText(low, false) != "39.7 ± 43.3, n=6, med 13.0, 4 failed" {
		t.Errorf("four failed: %+v, text %q", low, sideText(low, false))
	}
	healthy := computedSide([]int64{0, 1, 2, 3}, []float64{96, 95, 40, 94}, false)
	if healthy.Failed != 1 || !strings.HasSuffix(sideText(healthy, false), ", 1 failed") {
		t.Errorf("one failed: %+v, text %q", healthy, sideText(healthy, false))
	}
	if d := computedSide([]int64{0, 1, 2}, []float64{50, -40, 1}, true); d.FailedKnown || d.Failed != 0 {
		t.Errorf("a paired difference has no failure count: %+v", d)
	}
	r := DisputedResult{Label: "spike", ID: "substrate/x/acc", Reference: "v6_spiketrain8", RefScript: "run_mnist", Authors: low}
	notes := strings.Join(r.Notes(), "\n")
	if want := "authors' config v6_spiketrain8 (run_mnist.py, the official test set)"; !strings.Contains(notes, want) {
		t.Errorf("notes lack %q:\n%s", want, notes)
	}
	if tex := disputedTeX([]DisputedResult{r}); !strings.Contains(tex, `med 13.0, 4 failed`) {
		t.Errorf("disputedTeX: no failure count:\n%s", tex)
	}
}
