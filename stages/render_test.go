package stages

import (
	"encoding/json"
	"strings"
	"testing"

	"repro/numbers"
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
		// best sequential value is bold; every number links to its card
		`row a & $10^{-4}$ & \reprocard{tiny.a.sequential}{$\mathbf{91.6\pm0.3}$} & \reprocard{tiny.a.static}{$94.1\pm0.0$} \\`,
		`\reprocard{tiny.b.sequential}{$87.7\pm0.4$\,{\scriptsize($n{=}2$)}} & --- \\`, // a missing seed shows n; n/a shows --- (no link)
		"\\midrule\nrow c &  &  & \\\\", // not run: blank
		`\toprule`, `\bottomrule`, `SMOKE\_TEST 100\%`,
	} {
		if !strings.Contains(tex, want) {
			t.Errorf("tex lacks %q:\n%s", want, tex)
		}
	}
	var sc numbers.Sidecar
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
	rec := &numbers.AggregateRecord{Table: "tiny", Protocols: []string{"sequential", "static"}, Rows: [][]numbers.AggCell{
		{{ID: "tiny/a/sequential", Status: numbers.NotRun("download cifar100: no network & no mirror")}, {ID: "tiny/a/static", Status: numbers.Status{Kind: numbers.StatusNA}}},
		{{ID: "tiny/b/sequential", Status: numbers.NotRun("no preset")}, {ID: "tiny/b/static", Status: numbers.NotRun("download cifar100: no network & no mirror")}},
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

// TestRenderMoreSeeds: a number run on more seeds than the profile's (a
// settled row) is marked, one mark per count, and the note says the count;
// numbers on the profile's seeds or fewer are not.
func TestRenderMoreSeeds(t *testing.T) {
	t.Parallel()
	ok := func(id string, n int) numbers.AggCell {
		return numbers.AggCell{ID: id, Status: numbers.Status{Kind: numbers.StatusOK}, N: n, Expected: n, Acc: numbers.Stat{Mean: 90, SD: 1}}
	}
	rec := &numbers.AggregateRecord{Table: "tiny", DefaultSeeds: 6, Protocols: []string{"sequential", "static"}, Rows: [][]numbers.AggCell{
		{ok("tiny/a/sequential", 12), ok("tiny/a/static", 3)},
		{ok("tiny/b/sequential", 6), ok("tiny/b/static", 24)},
	}}
	p := tinyRender()
	p.Rows = p.Rows[:2]
	tex, side, err := RenderTable(p, rec)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`{$\mathbf{90.0\pm1.0}$}$^{\dagger}$ & \reprocard{tiny.a.static}{$90.0\pm1.0$} \\`,
		`{$90.0\pm1.0$}$^{\ddagger}$ \\`,
		`{\scriptsize $^{\dagger}$\,12 seeds; $^{\ddagger}$\,24 seeds: a number the verdict's estimate says`,
	} {
		if !strings.Contains(tex, want) {
			t.Errorf("tex lacks %q:\n%s", want, tex)
		}
	}
	if n := strings.Count(tex, `$^{\dagger}$`); n != 2 { // the number's and the note's
		t.Errorf("%d daggers, want 2:\n%s", n, tex)
	}
	for _, x := range side.Numbers {
		if strings.Contains(x.Text, "dagger") {
			t.Errorf("the sidecar's text of %s carries the mark: %q", x.ID, x.Text)
		}
	}
}

func TestBestRows(t *testing.T) {
	t.Parallel()
	cell := func(m float64, n, exp int) numbers.AggCell {
		return numbers.AggCell{Status: numbers.Status{Kind: numbers.StatusOK}, N: n, Expected: exp, Acc: numbers.Stat{Mean: m}}
	}
	cases := []struct {
		name string
		col  []numbers.AggCell
		ref  []bool
		want []int
	}{
		{"max", []numbers.AggCell{cell(91.6, 6, 6), cell(91.5, 6, 6)}, nil, []int{0}},
		{"fewer seeds by design do not compete", []numbers.AggCell{cell(91.6, 6, 6), cell(91.8, 3, 3)}, nil, []int{0}},
		{"a missing seed does not compete", []numbers.AggCell{cell(91.6, 6, 6), cell(91.8, 5, 6)}, nil, []int{0}},
		{"a settled row on more seeds competes", []numbers.AggCell{cell(91.6, 6, 6), cell(91.8, 12, 12)}, nil, []int{1}},
		{"reference rows do not compete", []numbers.AggCell{cell(91.6, 6, 6), cell(92.0, 6, 6)}, []bool{false, true}, []int{0}},
		{"ties after rounding", []numbers.AggCell{cell(91.64, 6, 6), cell(91.56, 6, 6), cell(91.0, 6, 6)}, nil, []int{0, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			rec := &numbers.AggregateRecord{DefaultSeeds: 6, Protocols: []string{"sequential"}}
			for _, x := range c.col {
				rec.Rows = append(rec.Rows, []numbers.AggCell{x})
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
