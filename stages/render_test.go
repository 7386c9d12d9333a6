package stages

import (
	"encoding/json"
	"strings"
	"testing"
)

func tinyRender() *RenderParams {
	cells := func() []RenderCell { return []RenderCell{{Decimals: 1}, {Decimals: 1}} }
	return &RenderParams{Table: "tiny", Label: "tab:tiny", Caption: `\textbf{Tiny} table`, Size: `\small`, Header: "Variant",
		Columns:    []RenderColumn{{Title: "Sequential", Bold: true}, {Title: `i.i.d.\ (static)`}},
		ParamTitle: "lr",
		Rows: []RenderRow{
			{Label: "row a", Param: `$10^{-4}$`, Cells: cells()},
			{Label: `\quad row b`, Param: `$3{\cdot}10^{-5}$`, Cells: cells()},
			{Label: "row c", Midrule: true, Reference: true, Cells: cells()},
		},
		Stamp: "SMOKE_TEST 100%", Profile: "smoke"}
}

// TestRender renders the tiny aggregate: the .tex is pinned by a golden
// file (readable, so a layout change shows as a diff), and the sidecar
// lists every number with its provenance.
func TestRender(t *testing.T) {
	t.Parallel()
	p, in := tinyAggregate()
	agg, _ := runStage(t, Aggregate, p, in, nil)
	out, order := runStage(t, Render, tinyRender(), map[string]outputs{"aggregate": agg}, nil)
	tex := string(out["tex"])
	checkGolden(t, "render-tiny.tex", tex)
	checkGolden(t, "render-tiny", digestLines(out, order))
	for _, want := range []string{
		`row a & $10^{-4}$ & $\mathbf{91.6\pm0.3}$ & $94.1\pm0.0$ \\`, // best sequential value is bold
		`$87.7\pm0.4$\,{\scriptsize($n{=}2$)} & --- \\`,               // a missing seed shows n; n/a shows ---
		"\\midrule\nrow c &  &  & \\\\",                               // not run: blank
		`\toprule`, `\bottomrule`, `SMOKE\_TEST 100\%`,
	} {
		if !strings.Contains(tex, want) {
			t.Errorf("tex lacks %q:\n%s", want, tex)
		}
	}
	var sc Sidecar
	if err := json.Unmarshal(out["ids"], &sc); err != nil {
		t.Fatal(err)
	}
	if len(sc.Numbers) != 6 || sc.Numbers[2].ID != "tiny/b/sequential" || sc.Numbers[2].Row != 2 || sc.Numbers[2].Column != 1 || len(sc.Numbers[2].Results) != 2 {
		t.Errorf("sidecar numbers: %+v", sc.Numbers)
	}
}

// TestRenderShowNotRun: with show_not_run a cell not run says so, with
// a letter per distinct reason explained under the table; without, it is
// blank (TestRender's row c).
func TestRenderShowNotRun(t *testing.T) {
	t.Parallel()
	rec := &AggregateRecord{Table: "tiny", Protocols: []string{"sequential", "static"}, Rows: [][]AggCell{
		{{ID: "tiny/a/sequential", Status: "not run: download cifar100: no network & no mirror"}, {ID: "tiny/a/static", Status: "n/a"}},
		{{ID: "tiny/b/sequential", Status: "not run: no preset"}, {ID: "tiny/b/static", Status: "not run: download cifar100: no network & no mirror"}},
	}}
	p := tinyRender()
	p.Rows = p.Rows[:2]
	p.ShowNotRun = true
	tex, _, err := RenderTable(p, rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`row a & $10^{-4}$ & {\scriptsize not run$^{a}$} & --- \\`,
		`& {\scriptsize not run$^{b}$} & {\scriptsize not run$^{a}$} \\`,
		`\par\smallskip{\scriptsize Not run: $^{a}$\,download cifar100: no network \& no mirror; $^{b}$\,no preset.\par}`,
	} {
		if !strings.Contains(tex, want) {
			t.Errorf("tex lacks %q:\n%s", want, tex)
		}
	}
	p.ShowNotRun = false
	if tex, _, _ := RenderTable(p, rec); strings.Contains(tex, "not run$") || strings.Contains(tex, "Not run:") {
		t.Errorf("show_not_run off, yet:\n%s", tex)
	}
}

func TestBestRows(t *testing.T) {
	t.Parallel()
	cell := func(m float64, n, exp int) AggCell {
		return AggCell{Status: "ok", N: n, Expected: exp, Acc: Stat{Mean: m}}
	}
	cases := []struct {
		name string
		col  []AggCell
		ref  []bool
		want []int
	}{
		{"max", []AggCell{cell(91.6, 6, 6), cell(91.5, 6, 6)}, nil, []int{0}},
		{"fewer seeds by design do not compete", []AggCell{cell(91.6, 6, 6), cell(91.8, 3, 3)}, nil, []int{0}},
		{"a missing seed does not compete", []AggCell{cell(91.6, 6, 6), cell(91.8, 5, 6)}, nil, []int{0}},
		{"reference rows do not compete", []AggCell{cell(91.6, 6, 6), cell(92.0, 6, 6)}, []bool{false, true}, []int{0}},
		{"ties after rounding", []AggCell{cell(91.64, 6, 6), cell(91.56, 6, 6), cell(91.0, 6, 6)}, nil, []int{0, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := &AggregateRecord{DefaultSeeds: 6, Protocols: []string{"sequential"}}
			for _, x := range c.col {
				rec.Rows = append(rec.Rows, []AggCell{x})
			}
			p := &RenderParams{Columns: []RenderColumn{{Bold: true}}}
			for r := range c.col {
				p.Rows = append(p.Rows, RenderRow{Reference: r < len(c.ref) && c.ref[r], Cells: []RenderCell{{Decimals: 1}}})
			}
			got := bestRows(p, rec)
			if len(got) != len(c.want) {
				t.Fatalf("bold %v, want rows %v", got, c.want)
			}
			for _, r := range c.want {
				if !got[[2]int{r, 0}] {
					t.Errorf("row %d not bold; bold %v", r, got)
				}
			}
		})
	}
}

func TestReproduction(t *testing.T) {
	t.Parallel()
	p, in := tinyAggregate()
	agg, _ := runStage(t, Aggregate, p, in, nil)
	rp := &ReproductionParams{Tables: []string{"tiny"}, Profile: "smoke"}
	sd := func(x float64) *float64 { return &x }
	rp.AddPublished(&Published{Value: []PublishedValue{
		{ID: "tiny/a/sequential", Mean: 91.7, SD: sd(0.3), N: 3, Cite: "Table tiny, row 1"},
		{ID: "tiny/b/sequential", Mean: 80.0, SD: sd(0.5), N: 3, Cite: "Table tiny, row 2"},
		{ID: "tiny/c/sequential", Mean: 50.0, SD: sd(1), N: 3, Cite: "Table tiny, row 3"},
		{ID: "tiny/compare/a-b", Mean: 4.0, Lo: sd(3.0), Hi: sd(5.0), Cite: "text"},
		{ID: "tiny/gone/static", Mean: 1, Cite: "nowhere"},
	}})
	out, order := runStage(t, Reproduction, rp, map[string]outputs{"tiny": agg}, nil)
	checkGolden(t, "reproduction-tiny", digestLines(out, order))
	var rep ReproReport
	if err := json.Unmarshal(out["report"], &rep); err != nil {
		t.Fatal(err)
	}
	by := map[string]ReproRow{}
	for _, r := range rep.Rows {
		by[r.ID] = r
	}
	if r := by["tiny/a/sequential"]; r.Within != "yes" || r.Published != "91.7 ± 0.3" || r.Ours != "91.6 ± 0.3" {
		t.Errorf("a: %+v", r)
	}
	if r := by["tiny/b/sequential"]; r.Within != "no" || !strings.Contains(r.Note, "n=2 of 3") {
		t.Errorf("b: %+v", r)
	}
	if r := by["tiny/c/sequential"]; r.Ours != "" || !strings.HasPrefix(r.Note, "not run") {
		t.Errorf("c: %+v", r)
	}
	if r := by["tiny/compare/a-b"]; r.Within != "yes" {
		t.Errorf("a-b: %+v", r)
	}
	if r := by["tiny/gone/static"]; !strings.Contains(r.Note, "no table") {
		t.Errorf("gone: %+v", r)
	}
	if rep.Compared != 3 || rep.Within != 2 {
		t.Errorf("compared %d, within %d; want 3, 2", rep.Compared, rep.Within)
	}
}

func TestCiteTeX(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Table tab:ablation, row 1 'full system', column Sequential", "Table~\\ref{tab:ablation}, row 1 `full system', column Sequential"},
		{"subsection X (after tab:bpk): rotation's price", "subsection X (after Table~\\ref{tab:bpk}): rotation's price"},
		{"'a_b' 50%", "`a\\_b' 50\\%"},
		{"no label", "no label"},
	} {
		if got := citeTeX(tc.in); got != tc.want {
			t.Errorf("citeTeX(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// TestReproduceWideSD: a cell that agrees with the paper only because its
// seeds spread more than twice as widely is judged with the paper's s.d.
// (here: no longer within the noise) and flagged.
func TestReproduceWideSD(t *testing.T) {
	t.Parallel()
	rec := &AggregateRecord{Table: "t", Rows: [][]AggCell{{
		{ID: "t/a/s", Status: "ok", N: 6, Expected: 6, Acc: Stat{Mean: 85.4, SD: 12.5}},
		{ID: "t/b/s", Status: "ok", N: 6, Expected: 6, Acc: Stat{Mean: 91.7, SD: 0.4}},
	}}}
	p := &ReproductionParams{}
	wide, narrow := 3.5, 0.3
	p.AddPublished(&Published{Value: []PublishedValue{
		{ID: "t/a/s", Mean: 79.0, SD: &wide, N: 6, Cite: "x"},
		{ID: "t/b/s", Mean: 91.6, SD: &narrow, N: 6, Cite: "y"},
	}})
	rep, err := Reproduce(p, []*AggregateRecord{rec})
	if err != nil {
		t.Fatal(err)
	}
	if rep.WideSD != 1 || rep.Within != 1 || rep.Rows[0].Within != "no" || !strings.Contains(rep.Rows[0].Note, "more than twice the paper's") {
		t.Errorf("report %+v", rep)
	}
	if !strings.Contains(ReproductionTeX(rep), "1 cell(s) have an s.d. over seeds more than twice the paper's") {
		t.Error("the summary does not say so")
	}
}

// TestReproduceSingleRun: a single published run is judged with the s.d.
// of the number noise_from names (one run's noise on each side); without
// it, or when that number has no spread here, it must match to rounding.
func TestReproduceSingleRun(t *testing.T) {
	t.Parallel()
	rec := &AggregateRecord{Table: "t", Rows: [][]AggCell{
		{{ID: "t/six/acc", Status: "ok", N: 6, Expected: 6, Acc: Stat{Mean: 68.5, SD: 6.9}}},
		{{ID: "t/one/acc", Status: "ok", N: 1, Expected: 1, Acc: Stat{Mean: 66.7}}},
		{{ID: "t/one/far", Status: "ok", N: 1, Expected: 1, Acc: Stat{Mean: 40.0}}},
		{{ID: "t/one/bare", Status: "ok", N: 1, Expected: 1, Acc: Stat{Mean: 66.7}}},
		{{ID: "t/one/lost", Status: "ok", N: 1, Expected: 1, Acc: Stat{Mean: 66.7}}},
	}}
	p := &ReproductionParams{}
	p.AddPublished(&Published{Value: []PublishedValue{
		{ID: "t/one/acc", Mean: 68.6, N: 1, Cite: "a", NoiseFrom: "t/six/acc"},   // |d| 1.9 <= 1.96*6.9*sqrt(2)
		{ID: "t/one/far", Mean: 68.6, N: 1, Cite: "b", NoiseFrom: "t/six/acc"},   // |d| 28.6 > 19.2
		{ID: "t/one/bare", Mean: 68.6, N: 1, Cite: "c"},                          // no noise: 1.9 > 0.05
		{ID: "t/one/lost", Mean: 68.6, N: 1, Cite: "d", NoiseFrom: "t/none/acc"}, // names nothing rendered
	}})
	rep, err := Reproduce(p, []*AggregateRecord{rec})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"t/one/acc": "yes", "t/one/far": "no", "t/one/bare": "no", "t/one/lost": "no"}
	for _, r := range rep.Rows {
		if w, ok := want[r.ID]; ok && r.Within != w {
			t.Errorf("%s: within %q, want %q (note %q)", r.ID, r.Within, w, r.Note)
		}
		if r.ID == "t/one/acc" && !strings.Contains(r.Note, "s.d. 6.9 of t/six/acc over 6 seeds") {
			t.Errorf("%s: note %q does not say how it was judged", r.ID, r.Note)
		}
		if r.ID == "t/one/lost" && !strings.Contains(r.Note, "no spread here") {
			t.Errorf("%s: note %q", r.ID, r.Note)
		}
	}
	if _, err := ParsePublished("p.toml", "[[value]]\nid = \"a\"\nmean = 1.0\nn = 3\ncite = \"x\"\nnoise_from = \"b\"\n"); err == nil || !strings.Contains(err.Error(), "noise_from") {
		t.Errorf("noise_from on a three-seed value: err = %v, want one naming noise_from", err)
	}
}

// TestReproduceClaims: a claimed ordering holds, fails (with our numbers)
// or is not computed when a number it names has no value.
func TestReproduceClaims(t *testing.T) {
	t.Parallel()
	pub, err := ParsePublished("p.toml", `
[[claim]]
id = "a-above-b"
text = "a above b"
cite = "x"
holds = ["t/a/s > t/b/s", "t/a/s >= 91.7"]
[[claim]]
id = "b-above-a"
text = "b above a"
cite = "y"
holds = ["t/b/s > t/a/s"]
[[claim]]
id = "c"
text = "c"
cite = "z"
holds = ["t/c/s > t/a/s"]
`)
	if err != nil {
		t.Fatal(err)
	}
	p := &ReproductionParams{}
	p.AddPublished(pub)
	rec := &AggregateRecord{Table: "t", Rows: [][]AggCell{{
		{ID: "t/a/s", Status: "ok", N: 6, Expected: 6, Acc: Stat{Mean: 91.72}},
		{ID: "t/b/s", Status: "ok", N: 6, Expected: 6, Acc: Stat{Mean: 88.3}},
	}}}
	rep, err := Reproduce(p, []*AggregateRecord{rec})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"holds", "fails", "not computed: t/c/s has no value here"}
	for i, c := range rep.Claims {
		if c.Verdict != want[i] {
			t.Errorf("claim %s: %s (%s), want %s", c.ID, c.Verdict, c.Detail, want[i])
		}
	}
	if rep.ClaimsHeld != 1 || !strings.Contains(rep.Claims[1].Detail, "t/b/s 88.3 > t/a/s 91.7") {
		t.Errorf("report %+v", rep.Claims)
	}
	if !strings.Contains(ReproductionTeX(rep), "1 of 3 claimed orderings hold") {
		t.Error("summary lacks the claims")
	}
	for _, bad := range []string{"holds = [\"a >> b\"]", "holds = []", "holds = [\"a > \"]"} {
		if _, err := ParsePublished("p.toml", "[[claim]]\nid = \"x\"\ntext = \"t\"\ncite = \"c\"\n"+bad+"\n"); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestReproSummary(t *testing.T) {
	r := &ReproReport{Compared: 357, Within: 307, NotRun: 8, Claims: make([]ClaimResult, 5), ClaimsHeld: 2}
	if got, want := r.Summary(), "307 of 357 numbers compared with the paper lie within the seed noise, 8 not run; 2 of 5 claimed orderings hold"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
	r = &ReproReport{Compared: 4, Within: 4}
	if got, want := r.Summary(), "4 of 4 numbers compared with the paper lie within the seed noise"; got != want {
		t.Errorf("Summary() = %q, want %q", got, want)
	}
}
