package stages

import (
	"encoding/json"
	"strings"
	"testing"

	"repro/judge"
	"repro/published"
	"repro/verdict"
)

func fp(x float64) *float64 { return &x }

func TestReproduction(t *testing.T) {
	t.Parallel()
	p, in := tinyAggregate()
	agg, _ := runStage(t, Aggregate, p, in, nil)
	rp := &judge.Params{Tables: []string{"tiny"}, Profile: "smoke"}
	rp.AddPublished(&published.File{Value: []published.Value{
		{ID: "tiny/a/sequential", Mean: 91.7, SD: fp(0.3), N: 3, Cite: "Table tiny, row 1", Line: 1},
		{ID: "tiny/b/sequential", Mean: 80.0, SD: fp(0.5), N: 3, Cite: "Table tiny, row 2", Line: 2},
		{ID: "tiny/c/sequential", Mean: 50.0, SD: fp(1), N: 3, Cite: "Table tiny, row 3", Line: 3},
		{ID: "tiny/compare/a-b", Mean: 4.0, Lo: fp(3.0), Hi: fp(5.0), Cite: "text", Line: 4},
		{ID: "tiny/gone/static", Mean: 1, Cite: "nowhere", Line: 5},
	}, NotRun: []published.NotRunGroup{{What: "an appendix", Lines: []int{10, 20}, Count: 7, Status: "not run", Reason: "not in this profile"}}})
	out, order := runStage(t, Reproduction, rp, map[string]outputs{"tiny": agg}, nil)
	checkGolden(t, "reproduction-tiny", digestLines(out, order))
	var rep judge.Report
	if err := json.Unmarshal(out["report"], &rep); err != nil {
		t.Fatal(err)
	}
	by := map[string]judge.Row{}
	for _, r := range rep.Rows {
		by[r.ID] = r
	}
	if r := by["tiny/a/sequential"]; r.Judgement == nil || r.Published != "91.7 ± 0.3" || r.Ours != "91.6 ± 0.3" || r.Line != 1 {
		t.Errorf("a: %+v", r)
	}
	if r := by["tiny/b/sequential"]; r.Verdict != verdict.Differs || !strings.Contains(r.Note, "n=2 of 3") {
		t.Errorf("b: %+v", r)
	}
	if r := by["tiny/c/sequential"]; r.Ours != "" || r.Verdict != verdict.NotRun || !strings.HasPrefix(r.Note, "not run") {
		t.Errorf("c: %+v", r)
	}
	if r := by["tiny/gone/static"]; r.Verdict != verdict.NotRun || !strings.Contains(r.Note, "no cell") {
		t.Errorf("gone: %+v", r)
	}
	// 4 judged (a, b, the comparison) + 2 not run rows + 7 not run in the
	// appendix.
	if n := rep.Numbers; n.Judged != 3 || n.NotRun != 9 || n.Total() != 12 {
		t.Errorf("tally %+v", n)
	}
	if s := rep.Summary(); !strings.Contains(s, "numbers: 3 judged") || !strings.Contains(s, "9 not run (12 in all") || !strings.Contains(s, "comparisons: 3 distinct, 1 agree, 1 differ, 1 inconclusive (1 they cannot: the paper's own uncertainty)") {
		t.Errorf("summary %q", s)
	}
	tex := string(out["tex"])
	if i, j := strings.Index(tex, "reproduction (profile smoke): numbers:"), strings.Index(tex, "Every number"); i < 0 || j < i {
		t.Errorf("the report does not open with its summary line:\n%s", tex[:min(len(tex), 600)])
	}
}

// TestReproductionVersion: a report whose params name a range's end is at
// version 20; one that names none keeps 19 (its outputs are unchanged).
func TestReproductionVersion(t *testing.T) {
	t.Parallel()
	plain := &judge.Params{Values: []published.Value{{ID: "t/a/s", Mean: 1, N: 3, Cite: "x", Line: 1}}}
	ext := &judge.Params{Values: append(plain.Values, published.Value{ID: "t/r", Mean: 1.8, N: 3, Cite: "y", Line: 2,
		Extreme: "lowest", Spread: true, Over: []string{"t/a/s", "t/b/s"}})}
	if v := Reproduction.CellVersion(plain); v != 19 {
		t.Errorf("no range's end: version %d, want 19", v)
	}
	if v := Reproduction.CellVersion(ext); v != 20 {
		t.Errorf("a range's end: version %d, want 20", v)
	}
}
