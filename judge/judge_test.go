package judge

import (
	"strings"
	"testing"

	"repro/numbers"
	"repro/published"
	"repro/verdict"
)

func fp(x float64) *float64 { return &x }
func ip(x int) *int         { return &x }

// TestReproduceWideSD: our wide spread is its own test (F) and never
// borrows the paper's s.d.; a spread that differs after the family's
// adjustment makes the number differ in spread, even with its mean
// unsettled.
func TestReproduceWideSD(t *testing.T) {
	t.Parallel()
	rec := &numbers.AggregateRecord{Table: "t", Rows: [][]numbers.AggCell{{
		{ID: "t/a/s", Status: numbers.Status{Kind: numbers.StatusOK}, N: 6, Expected: 6, Acc: numbers.Stat{Mean: 85.4, SD: 12.5}},
		{ID: "t/b/s", Status: numbers.Status{Kind: numbers.StatusOK}, N: 6, Expected: 6, Acc: numbers.Stat{Mean: 91.7, SD: 0.4}},
		{ID: "t/c/s", Status: numbers.Status{Kind: numbers.StatusOK}, N: 6, Expected: 6, Acc: numbers.Stat{Mean: 91.6, SD: 3.0}},
	}}}
	p := &Params{}
	p.AddPublished(&published.File{Value: []published.Value{
		{ID: "t/a/s", Mean: 79.0, SD: fp(3.5), N: 6, Cite: "x", Line: 1},
		{ID: "t/b/s", Mean: 91.6, SD: fp(0.3), N: 6, Cite: "y", Line: 2},
		{ID: "t/c/s", Mean: 91.6, SD: fp(0.3), N: 6, Cite: "z", Line: 3},
	}})
	rep, err := Reproduce(p, []*numbers.AggregateRecord{rec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if r := rep.Rows[0]; r.Verdict == verdict.Agrees || r.Judgement.Spread == nil || !r.Judgement.Spread.Wider || r.Judgement.Interval() < 2*12.5/2.45 {
		t.Errorf("wide: %+v", r)
	}
	if r := rep.Rows[1]; r.Verdict != verdict.Agrees {
		t.Errorf("narrow: %v (%s)", r.Verdict, r.Judgement)
	}
	if r := rep.Rows[2]; r.Verdict != verdict.Differs || r.Judgement.InText() != "spread" || !strings.Contains(r.Judgement.Certificate(), "differs in spread") {
		t.Errorf("equal means, ten times the spread: %v in %q (%s)", r.Verdict, r.Judgement.InText(), r.Judgement)
	}
}

// TestReproduceSingleRun: a single published run against one of ours is
// judged with the per-run spread of the number noise_from names (stated as
// such); against our six seeds, with our per-run spread on its side.
func TestReproduceSingleRun(t *testing.T) {
	t.Parallel()
	rec := &numbers.AggregateRecord{Table: "t", Rows: [][]numbers.AggCell{
		{{ID: "t/six/acc", Status: numbers.Status{Kind: numbers.StatusOK}, N: 6, Expected: 6, Acc: numbers.Stat{Mean: 68.5, SD: 6.9}}},
		{{ID: "t/one/acc", Status: numbers.Status{Kind: numbers.StatusOK}, N: 1, Expected: 1, Acc: numbers.Stat{Mean: 66.7}}},
		{{ID: "t/one/far", Status: numbers.Status{Kind: numbers.StatusOK}, N: 1, Expected: 1, Acc: numbers.Stat{Mean: 10.0}}},
		{{ID: "t/one/bare", Status: numbers.Status{Kind: numbers.StatusOK}, N: 1, Expected: 1, Acc: numbers.Stat{Mean: 66.7}}},
	}}
	p := &Params{}
	p.AddPublished(&published.File{Value: []published.Value{
		{ID: "t/one/acc", Mean: 68.6, N: 1, Cite: "a", Line: 1, NoiseFrom: "t/six/acc"},
		{ID: "t/one/far", Mean: 68.6, N: 1, Cite: "b", Line: 2, NoiseFrom: "t/six/acc"},
		{ID: "t/one/bare", Mean: 68.6, N: 1, Cite: "c", Line: 3},
		{ID: "t/six/acc", Mean: 68.0, N: 1, Cite: "d", Line: 4},
	}})
	rep, err := Reproduce(p, []*numbers.AggregateRecord{rec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	// A single run on each side with no noise source is inconclusive,
	// never differs, however far apart (fidelity.md: cifar-code).
	want := map[string]verdict.Outcome{"t/one/acc": verdict.Inconclusive, "t/one/far": verdict.Differs, "t/one/bare": verdict.Inconclusive, "t/six/acc": verdict.Inconclusive}
	note := map[string]string{"t/one/acc": "a single run on each side, each with the per-run s.d. 6.9 of t/six/acc over 6 seeds (its declared noise source)",
		"t/six/acc": "the paper's is a single run: its seed noise is our per-run s.d."}
	for _, r := range rep.Rows {
		if r.Verdict != want[r.ID] {
			t.Errorf("%s: %v, want %v (%s; %s)", r.ID, r.Verdict, want[r.ID], r.Judgement, r.Note)
		}
		if !strings.Contains(r.Note, note[r.ID]) {
			t.Errorf("%s: note %q, want it to say %q", r.ID, r.Note, note[r.ID])
		}
		if r.ID == "t/one/bare" && (r.Judgement.Reason != verdict.NoNoiseModel || !strings.Contains(r.Judgement.String(), "single run, no noise model")) {
			t.Errorf("t/one/bare: %s (reason %v), want no noise model", r.Judgement, r.Judgement.Reason)
		}
	}
}

// TestReproduceFailures: a row whose seeds split gets the counts of severe
// failures (below 60%, the paper's definition) of both sides and Fisher's p.
func TestReproduceFailures(t *testing.T) {
	t.Parallel()
	rec := &numbers.AggregateRecord{Table: "t", Rows: [][]numbers.AggCell{{
		{ID: "t/a/s", Status: numbers.Status{Kind: numbers.StatusOK}, N: 6, Expected: 6, Acc: numbers.Stat{Mean: 76.0, SD: 12.8},
			Seeds: []int64{0, 1, 2, 3, 4, 5}, Values: []float64{86.3, 52.5, 57.2, 83.9, 80.6, 85.5}},
	}}}
	p := &Params{}
	p.AddPublished(&published.File{Value: []published.Value{
		{ID: "t/a/s", Mean: 89.7, SD: fp(0.7), N: 6, Collapsed: ip(0), Cite: "x", Line: 1},
	}})
	rep, err := Reproduce(p, []*numbers.AggregateRecord{rec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	c := rep.Rows[0].Judgement.Failures
	if c == nil || c.Ours != 2 || c.OursN != 6 || c.Paper != 0 || c.PaperN != 6 || c.P < 0.4 || c.P > 0.5 {
		t.Errorf("collapse %+v", c)
	}
}

// TestReproduceClaims: a claim agrees, differs (with our numbers), is
// inconclusive, or is not run when a number it names has none; paired by
// seed when the operands share seeds.
func TestReproduceClaims(t *testing.T) {
	t.Parallel()
	pub, err := published.Parse("p.toml", `
[[claim]]
id = "a-above-b"
text = "a above b"
cite = "x"
line = 1
quote = "q"
holds = ["t/a/s > t/b/s", "t/a/s >= 91.0"]
[[claim]]
id = "b-above-a"
text = "b above a"
cite = "y"
line = 2
quote = "q"
holds = ["t/b/s > t/a/s"]
cause = "the authors' code puts b below a too"
[[claim]]
id = "c"
text = "c"
cite = "z"
line = 3
quote = "q"
holds = ["t/c/s > t/a/s"]
[[claim]]
id = "close"
text = "a and d are within seed noise"
cite = "z"
line = 3
quote = "q"
holds = ["t/a/s ~= t/d/s"]
`)
	if err != nil {
		t.Fatal(err)
	}
	p := &Params{}
	p.AddPublished(pub)
	seeds := []int64{0, 1, 2}
	rec := &numbers.AggregateRecord{Table: "t", Rows: [][]numbers.AggCell{{
		{ID: "t/a/s", Status: numbers.Status{Kind: numbers.StatusOK}, N: 3, Expected: 3, Acc: numbers.Stat{Mean: 91.7, SD: 0.2}, Seeds: seeds, Values: []float64{91.5, 91.7, 91.9}},
		{ID: "t/b/s", Status: numbers.Status{Kind: numbers.StatusOK}, N: 3, Expected: 3, Acc: numbers.Stat{Mean: 88.3, SD: 0.2}, Seeds: seeds, Values: []float64{88.1, 88.3, 88.5}},
		{ID: "t/d/s", Status: numbers.Status{Kind: numbers.StatusOK}, N: 3, Expected: 3, Acc: numbers.Stat{Mean: 90.0, SD: 3}, Seeds: []int64{3, 4, 5}, Values: []float64{87, 90, 93}},
	}}}
	rep, err := Reproduce(p, []*numbers.AggregateRecord{rec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := []verdict.Outcome{verdict.Agrees, verdict.Differs, verdict.NotRun, verdict.Inconclusive}
	for i, c := range rep.Claims {
		if c.Verdict != want[i] {
			t.Errorf("claim %s: %v (%+v), want %v", c.ID, c.Verdict, c.Conditions, want[i])
		}
	}
	if j := rep.Claims[0].Conditions[0].Judgement; j == nil || !j.Paired {
		t.Errorf("a > b shares seeds but was not paired: %+v", j)
	}
	if j := rep.Claims[3].Conditions[0].Judgement; j == nil || j.Paired {
		t.Errorf("a ~= d has different seeds but was paired")
	}
	if c := rep.Claims[1]; c.Cause != "the authors' code puts b below a too" {
		t.Errorf("claim %s: cause %q", c.ID, c.Cause)
	}
	var tex strings.Builder
	writeClaims(&tex, rep.Claims[1:2])
	if !strings.Contains(tex.String(), `\emph{Cause:} the authors' code puts b below a too.`) {
		t.Errorf("the claim's cause is not in the report:\n%s", tex.String())
	}
	if n := rep.ClaimTally; n.Judged != 3 || n.Agree != 1 || n.Differ != 1 || n.Inconclusive != 1 || n.NotRun != 1 {
		t.Errorf("claim tally %+v", n)
	}
	for _, bad := range []string{"holds = [\"a >> b\"]", "holds = []", "holds = [\"a > \"]"} {
		if _, err := published.Parse("p.toml", "[[claim]]\nid = \"x\"\ntext = \"t\"\ncite = \"c\"\nline = 1\nquote = \"q\"\n"+bad+"\n"); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

// TestReproduceRestatement: one quantity printed alike on two lines (the
// same runs behind two IDs) is one comparison: counted once in the family
// and the comparisons' tally, the second row pointing to the first; a
// value printed without an s.d. borrows the paper's own s.d. of the same
// number from the line that prints one.
func TestReproduceRestatement(t *testing.T) {
	t.Parallel()
	runs := []string{"r0", "r1", "r2", "r3", "r4", "r5"}
	cell := func(id string) numbers.AggCell {
		return numbers.AggCell{ID: id, Status: numbers.Status{Kind: numbers.StatusOK}, N: 6, Expected: 6, Acc: numbers.Stat{Mean: 91.7, SD: 0.4}, Results: runs}
	}
	rec := &numbers.AggregateRecord{Table: "t", Rows: [][]numbers.AggCell{{cell("t/a/s"), cell("u/a/s"), cell("v/a/s")}}}
	p := &Params{}
	p.AddPublished(&published.File{Value: []published.Value{
		{ID: "t/a/s", Mean: 91.6, SD: fp(0.3), N: 6, Cite: "table", Line: 10},
		{ID: "u/a/s", Mean: 91.6, SD: fp(0.3), N: 6, Cite: "text", Line: 20},
		{ID: "v/a/s", Mean: 91.6, N: 6, Cite: "abstract", Line: 30},
	}})
	rep, err := Reproduce(p, []*numbers.AggregateRecord{rec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, u, v := rep.Rows[0], rep.Rows[1], rep.Rows[2]
	if a.Restates != "" || u.Restates != "t/a/s" || len(a.RestatedAt) != 1 || a.RestatedAt[0] != 20 {
		t.Errorf("restatement: a %q %v, u %q", a.Restates, a.RestatedAt, u.Restates)
	}
	if u.Verdict != a.Verdict || u.Judgement.String() != a.Judgement.String() {
		t.Errorf("a restatement has its own judgement: %v vs %v", u.Judgement, a.Judgement)
	}
	// The third prints no s.d.: a comparison of its own, with the
	// table's 0.3 lent to it.
	if v.Restates != "" || !strings.Contains(v.Note, "its own s.d. of the same number, 0.3 at paper.tex:10, is lent to it") {
		t.Errorf("no s.d.: restates %q, note %q", v.Restates, v.Note)
	}
	if c := rep.Comparisons; c.Distinct != 2 || rep.Numbers.Judged != 3 {
		t.Errorf("comparisons %+v, numbers judged %d: want 2 distinct of 3", c, rep.Numbers.Judged)
	}
}

// TestMetricKind: every metric's kind of number.
func TestMetricKind(t *testing.T) {
	t.Parallel()
	for metric, want := range map[string]verdict.Kind{
		"": verdict.Points, "acc": verdict.Points, "forgetting": verdict.Points, "gate_duty": verdict.Points, "channel[0]": verdict.Points,
		"replay_updates": verdict.Relative, "replay_samples": verdict.Relative, "synops_frac": verdict.Relative, "energy.nj": verdict.Relative,
		"rho[0]": verdict.Relative, "asleep[1]": verdict.Relative, "overlap[0]": verdict.Relative, "lambda[0]": verdict.Relative,
		"pr[2]": verdict.Relative, "drift.code_change": verdict.Relative, "drift.margin[0]": verdict.Relative,
	} {
		if got := MetricKind(metric); got != want {
			t.Errorf("MetricKind(%q) = %v, want %v", metric, got, want)
		}
	}
}

// TestReproduceSeed: a run the paper prints by itself is judged against
// the normal fitted to our runs of its row (among the runs that did not
// fail when survivors says so; as per-seed differences with minus, over
// the seeds where neither failed), never seed by seed; without two of our
// runs to fit it is not run.
func TestReproduceSeed(t *testing.T) {
	t.Parallel()
	seeds := []int64{0, 1, 2, 3, 4, 5}
	a := []float64{84.1, 83.0, 9.8, 82.2, 85.0, 58.0}
	b := []float64{80.0, 82.5, 79.0, 10.1, 81.0, 77.7}
	rec := &numbers.AggregateRecord{Table: "t", Rows: [][]numbers.AggCell{{
		{ID: "t/a/s", Status: numbers.Status{Kind: numbers.StatusOK}, N: 6, Expected: 6, Seeds: seeds, Values: a, Acc: numbers.Stat{Mean: 67.0, SD: 30}},
		{ID: "t/b/s", Status: numbers.Status{Kind: numbers.StatusOK}, N: 6, Expected: 6, Seeds: seeds, Values: b, Acc: numbers.Stat{Mean: 68.4, SD: 28}},
		{ID: "t/c/s", Status: numbers.Status{Kind: numbers.StatusOK}, N: 1, Expected: 1, Seeds: seeds[:1], Values: a[:1], Acc: numbers.Stat{Mean: 84.1}},
	}}}
	p := &Params{}
	p.AddPublished(&published.File{Value: []published.Value{
		{ID: "t/a/s/seed3of3", SeedsOf: "t/a/s", Survivors: true, Rank: 3, N: 3, Mean: 84.8, Cite: "x", Line: 1},
		{ID: "t/a/s/seed1of6", SeedsOf: "t/a/s", Rank: 1, N: 6, Mean: 75.5, Cite: "x", Line: 2},
		{ID: "t/a/s/minus/seed1of3", SeedsOf: "t/a/s", Minus: "t/b/s", Survivors: true, Rank: 1, N: 3, Mean: 0.3, Cite: "x", Line: 3},
		{ID: "t/c/s/seed1of3", SeedsOf: "t/c/s", Rank: 1, N: 3, Mean: 80, Cite: "x", Line: 4},
	}})
	rep, err := Reproduce(p, []*numbers.AggregateRecord{rec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Row{}
	for _, r := range rep.Rows {
		by[r.ID] = r
	}
	// Survivors: 84.1, 83.0, 82.2, 85.0 (four of ours).
	r := by["t/a/s/seed3of3"]
	if j := r.Judgement; j == nil || j.Rank == nil || j.Rank.Rank != 3 || j.Rank.Of != 3 || r.Ours != "83.6 ± 1.2 (n=4)" || r.Group != "t" {
		t.Fatalf("survivor: %+v", r)
	}
	if !strings.Contains(r.Note, "that did not fail") || !strings.Contains(r.Note, "fitted to our 4 runs") {
		t.Errorf("survivor note: %s", r.Note)
	}
	// All six, failures and all.
	if r := by["t/a/s/seed1of6"]; r.Judgement == nil || !strings.HasSuffix(r.Ours, "(n=6)") {
		t.Errorf("every seed: %+v", r)
	}
	// Seeds where neither failed: 0, 1, 4: differences 4.1, 0.5, 4.0.
	if r := by["t/a/s/minus/seed1of3"]; r.Judgement == nil || r.Ours != "2.9 ± 2.1 (n=3)" || !strings.Contains(r.Note, "t/a/s - t/b/s") {
		t.Errorf("minus: %+v", r)
	}
	if r := by["t/c/s/seed1of3"]; r.Judgement != nil || r.Verdict != verdict.NotRun || !strings.Contains(r.Note, "fewer than two") {
		t.Errorf("one run of ours: %+v", r)
	}
}

// TestReproduceExtreme: a range's end over named rows is judged against
// the same end of ours (verdict.ExtremeStat): the lowest of three rows'
// s.d.s, the highest of two paired differences (over - over_minus, by
// seed), a row that is a comparison; a row with no cell is not run, with
// the reason.
func TestReproduceExtreme(t *testing.T) {
	t.Parallel()
	seeds := []int64{0, 1, 2}
	ok := numbers.Status{Kind: numbers.StatusOK}
	cell := func(id string, vs ...float64) numbers.AggCell {
		m, sd := verdict.MeanSD(vs)
		return numbers.AggCell{ID: id, Status: ok, N: len(vs), Expected: len(vs), Seeds: seeds[:len(vs)], Values: vs, Acc: numbers.Stat{Mean: m, SD: sd}}
	}
	rec := &numbers.AggregateRecord{Table: "t", Rows: [][]numbers.AggCell{{
		cell("t/a/s", 86.0, 84.0, 87.0), // s.d. 1.5
		cell("t/b/s", 88.0, 83.0, 85.0), // s.d. 2.5
		cell("t/c/s", 80.0, 88.0, 84.0), // s.d. 4.0
		cell("t/f/s", 80.0, 55.0, 84.0),
		cell("t/d/s", 42.0, 43.0, 41.5),
		cell("t/e/s", 40.0, 41.5, 40.5),
	}}, Comparisons: []numbers.Comparison{{ID: "t/compare/d-e", A: "t/d/s", B: "t/e/s", Protocol: "s", Status: "ok", Seeds: seeds, N: 3}}}
	p := &Params{}
	p.AddPublished(&published.File{Value: []published.Value{
		{ID: "t/sd/lowest", Mean: 1.8, N: 3, Cite: "x", Line: 1, Extreme: "lowest", Spread: true, Over: []string{"t/a/s", "t/b/s", "t/c/s"}},
		{ID: "t/lead/highest", Mean: 1.9, N: 3, Cite: "y", Line: 2, Extreme: "highest", Over: []string{"t/d/s", "t/a/s"}, OverMinus: []string{"t/e/s", "t/b/s"}},
		{ID: "t/cmp/highest", Mean: 1.9, N: 3, Cite: "z", Line: 3, Extreme: "highest", Over: []string{"t/compare/d-e", "t/a/s"}},
		{ID: "t/fail/highest", Mean: 4.1, N: 3, Cite: "v", Line: 5, Extreme: "highest", Spread: true, Over: []string{"t/a/s", "t/f/s"}},
		{ID: "t/gone/lowest", Mean: 1.0, N: 3, Cite: "w", Line: 4, Extreme: "lowest", Over: []string{"t/a/s", "t/none/s"}},
	}})
	rep, err := Reproduce(p, []*numbers.AggregateRecord{rec}, nil)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Row{}
	for _, r := range rep.Rows {
		by[r.ID] = r
	}
	r := by["t/sd/lowest"]
	if j := r.Judgement; j == nil || j.Extreme == nil || !j.Extreme.Spread || j.Extreme.End != verdict.Lowest || j.Extreme.Rows != 3 || r.Ours != "1.5 (n=3, 3, 3)" || r.Line != 1 || r.Group != "t" {
		t.Fatalf("s.d.s: %+v", r)
	}
	if !strings.Contains(r.Note, "t/a/s 85.7 ± 1.5 (n=3)") || !strings.Contains(r.Note, "ours scaled") || !strings.Contains(r.Judgement.String(), "the lowest of 3 rows' s.d.s against ours") {
		t.Errorf("s.d.s note: %s; %s", r.Note, r.Judgement)
	}
	// Differences by seed: d - e = 2.0, 1.5, 1.0; a - b = -2.0, 1.0, 2.0.
	r = by["t/lead/highest"]
	if r.Judgement == nil || r.Ours != "1.5 (n=3, 3)" || !strings.Contains(r.Note, "t/d/s - t/e/s (paired by seed) 1.5 ± 0.5 (n=3)") {
		t.Errorf("paired rows: %+v", r)
	}
	// A comparison's row is its per-seed differences.
	if r := by["t/cmp/highest"]; r.Judgement == nil || !strings.Contains(r.Note, "t/compare/d-e 1.5 ± 0.5 (n=3)") {
		t.Errorf("a comparison row: %+v", r)
	}
	if r := by["t/gone/lowest"]; r.Judgement != nil || r.Verdict != verdict.NotRun || !strings.Contains(r.Note, "no cell of this profile computes t/none/s") {
		t.Errorf("a row with no cell: %+v", r)
	}
	if r := by["t/fail/highest"]; r.Judgement == nil || !strings.Contains(r.Note, "1 of our rows' runs lie below 60%") {
		t.Errorf("a row with a failed run: %+v", r)
	}
	if strings.Contains(by["t/sd/lowest"].Note, "below 60%") {
		t.Errorf("no failed run, yet: %s", by["t/sd/lowest"].Note)
	}
	if n := rep.Numbers; n.Judged != 4 || n.NotRun != 1 {
		t.Errorf("tally %+v", n)
	}
}
