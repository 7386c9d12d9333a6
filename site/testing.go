package site

import (
	"fmt"

	"repro/judge"
	"repro/numbers"
	"repro/pipeline"
	"repro/verdict"
)

// FixtureInput is a small site input for tests: a table of two rows by two
// protocols (one cell not run) with a seed-paired comparison, a figure of
// two points and a reference line, a reproduction report judging some of
// them (one differs, one on a cell's forgetting), the seeds' records and
// the default system. shift is added to every seed of experiment "b": two
// fixtures that differ only in it differ in that experiment's numbers.
func FixtureInput(shift float64) *Input {
	ok := numbers.Status{Kind: numbers.StatusOK}
	cell := func(exp, proto string, base float64, status numbers.Status) numbers.AggCell {
		c := numbers.AggCell{ID: "tab/" + exp + "/" + proto, Experiment: exp, Protocol: proto, Status: status, Expected: 3}
		if !status.Is(numbers.StatusOK) {
			return c
		}
		c.Seeds = []int64{0, 1, 2}
		c.Values = []float64{base - 0.4, base + 0.1, base + 0.3}
		if exp == "b" {
			c.Values = []float64{base + shift - 0.1, base + shift + 0.5, base + shift - 0.3}
		}
		c.N = 3
		c.Acc.Mean, c.Acc.SD = verdict.MeanSD(c.Values)
		c.Forgetting = numbers.Stat{Mean: 5, SD: 0.5}
		for _, s := range c.Seeds {
			id := fmt.Sprintf("train/%s/%s/split1234/seed%d", exp, proto, s)
			c.TrainCells = append(c.TrainCells, id)
			c.Results = append(c.Results, fmt.Sprintf("%064x", len(id)*1000+int(s)))
		}
		return c
	}
	dec := 1
	ref := func(row, col int, label string, c numbers.AggCell) numbers.NumberRef {
		return numbers.NumberRef{ID: c.ID, Row: row, Column: col, Label: label, Protocol: c.Protocol, Text: "$x$", Decimals: &dec, AggCell: c}
	}
	a1, a2 := cell("a", "sequential", 90, ok), cell("a", "static", 95, ok)
	b1, b2 := cell("b", "sequential", 85, ok), cell("b", "static", 0, numbers.NotRun("no data"))
	tab := &numbers.Sidecar{Table: "tab", Profile: "paper", Source: "aggregate/tab",
		Numbers: []numbers.NumberRef{ref(1, 1, `\textbf{system a} $+$ rotation`, a1), ref(1, 2, `\textbf{system a} $+$ rotation`, a2),
			ref(2, 1, `baseline b ($\eta{=}0.1$)`, b1), ref(2, 2, `baseline b ($\eta{=}0.1$)`, b2)},
		Comparisons: []numbers.Comparison{{ID: "tab/compare/a-b", A: "a", B: "b", Protocol: "sequential", N: 3, Seeds: []int64{0, 1, 2},
			Diff: a1.Acc.Mean - b1.Acc.Mean, Lo: a1.Acc.Mean - b1.Acc.Mean - 0.5, Hi: a1.Acc.Mean - b1.Acc.Mean + 0.5, Status: numbers.CompareOK}},
	}
	y1, y2 := cell("a", "sequential", 90, ok), cell("b", "sequential", 85, ok)
	pt := func(id, series string, x float64, c numbers.AggCell, line bool) numbers.FigurePoint {
		c.ID = id
		return numbers.FigurePoint{ID: id, Panel: 1, Series: series, Experiment: c.Experiment, Status: ok, X: x, Y: c.Acc.Mean,
			Errors: "sd", YLo: c.Acc.Mean - c.Acc.SD, YHi: c.Acc.Mean + c.Acc.SD, Text: fmt.Sprintf("%.1f ± %.1f", c.Acc.Mean, c.Acc.SD), YCell: &c}
	}
	fig := &numbers.FigureSidecar{Figure: "sweep", Label: "fig:sweep", Profile: "paper", Source: "figure/sweep",
		Points: []numbers.FigurePoint{pt("fig/sweep/ours/100", "ours", 100, y1, false), pt("fig/sweep/ours/1000", "ours", 1000, y2, false)},
		Lines:  []numbers.FigurePoint{pt("fig/sweep/line/b", "reference", 0, y2, true)}}
	judged := func(id string, ours numbers.AggCell, pub, pubSD float64, k verdict.Kind) judge.Row {
		j := verdict.Welch(verdict.Ours(ours.Acc.Mean, ours.Acc.SD, ours.N), verdict.Printed(pub, &pubSD, 3, verdict.HalfUnit(1, 0)), k)
		return judge.Row{ID: id, Group: "tab", Cite: "Table tab:tab, row 1", Line: 100, Published: fmt.Sprintf("%.1f ± %.1f", pub, pubSD),
			Ours: fmt.Sprintf("%.1f ± %.1f", ours.Acc.Mean, ours.Acc.SD), Judgement: &j}
	}
	rows := []judge.Row{judged("tab/a/sequential", a1, 90.1, 0.3, verdict.Points), judged("tab/b/sequential", b1, 70, 0.3, verdict.Points)}
	fg := a1
	fg.Acc = fg.Forgetting
	rows = append(rows, judged("tab/a/sequential/forgetting", fg, 5.1, 0.4, verdict.Points),
		judge.Row{ID: "tab/b/static", Group: "tab", Published: "93.0", Verdict: verdict.NotRun, Note: "not run: no data"})
	var fam verdict.Family
	for i := range rows {
		if rows[i].Judgement != nil {
			fam.Add(rows[i].Judgement)
		}
	}
	fam.Settle()
	rep := &judge.Report{Profile: "paper", Rows: rows}
	for i := range rows {
		if rows[i].Judgement != nil {
			rows[i].Verdict = rows[i].Judgement.Outcome
		}
		rep.Numbers.Add(rows[i].Verdict)
	}
	rep.Groups = []judge.GroupTally{{Group: "tab", Tally: rep.Numbers}}
	conf := func(eta string) []pipeline.Param {
		return []pipeline.Param{{Name: "train.learner", Value: `"local"`}, {Name: "train.local.eta", Value: eta}, {Name: "train.seed", Value: "0"}}
	}
	in := &Input{Profile: "paper", Report: rep, Tables: []*numbers.Sidecar{tab}, Figures: []*numbers.FigureSidecar{fig},
		Records:  map[string]*SeedRecord{},
		Defaults: map[string]DefaultConfig{"local": {Name: "a (default)", Config: conf("0.02")}}}
	for _, c := range []numbers.AggCell{a1, a2, b1} {
		for i, id := range c.TrainCells {
			eta := "0.02"
			if c.Experiment == "b" {
				eta = "0.1"
			}
			in.Records[id+" "+c.Results[i]] = &SeedRecord{Key: fmt.Sprintf("%064x", i+7), Revision: "feedc0ffee00", Config: conf(eta),
				Data: []string{"split/mnist/1234 split sha256:" + fmt.Sprintf("%064x", 42)}}
		}
	}
	return in
}
