package stages

import (
	"context"
	"encoding/json"
	"fmt"

	"repro/judge"
	"repro/numbers"
	"repro/pipeline"
)

// Reproduction judges every published number and claim against the
// numbers of the tables (inputs: one aggregate cell per table, named by the
// table) and figures (inputs "fig:<name>": the figure cells' "ids").
// Outputs: "tex" (paper/reproduction.tex) and "report" (JSON judge.Report).
//
// Version history:
//
//   - 1: every number against its published value.
//   - 2: a citation column; intervals spaced in math mode.
//   - 3: notes and sources in a wrapped column; numbers blank in the paper
//     and not run here are left out; the counts are JSON fields.
//   - 6: each note on its own line under its number, kept on its page
//     (versions 4 and 5 were never released).
//   - 7: the report's citations read as LaTeX: "tab:x" is a \ref, an
//     opening quote is a real one.
//   - 8: a cell whose s.d. over seeds is more than twice the paper's is
//     judged with the paper's s.d. and flagged.
//   - 9: params are lists of records (published values, claims) instead of
//     parallel slices; the outputs are byte-identical.
//   - 10: a single published run naming noise_from is judged with the s.d.
//     of that number over our seeds (one run's noise on each side) instead
//     of none.
//   - 11: the three-way verdict of package verdict (agrees / differs /
//     inconclusive, Benjamini-Hochberg over the report's tests) for every
//     number and every claim; figure points are numbers too; the report
//     opens with the summary line and a per-group table, then the
//     differs; our spread is never replaced by the paper's.
//   - (11, unchanged) the table of disputed rows when the params have
//     any: new params, so only those keys change; without them the
//     outputs are byte-identical.
//   - 12: means, differences and intervals below the printed precision
//     (realised decays of order 1e-3 and below printed as 0.0) get two
//     significant digits.
//   - 13: the table of disputed rows says which of the authors' scripts
//     ran each row's runs (run_seq.py --val or run_mnist.py on the test
//     set) and marks a collapse count as a lower bound (">=") where the
//     column's median is itself collapsed against its best seed; without
//     disputed rows the outputs are byte-identical.
//   - 14: the verdict of issue 54 (docs/verdicts.md): every published
//     shape carries its uncertainty (an s.d. lent to a mean printed
//     without one, a single run without a noise source inconclusive,
//     a×10^k printings), Welch-Satterthwaite with known variances counted
//     as known, seeds to settle with the paper's n fixed, exact counts,
//     margins no narrower than a printed unit, a claimed sign shown, the
//     spread and the severe failures (below 60%) in the verdict, a
//     restated number one comparison, the disputed rows' seeds pooled;
//     the report's PDF section reads at normal size: one short line per
//     number linked to its card, one per claim.
//   - 15: the PDF's quotes through internal/latex (no "+-" or "x 10^" or
//     raw labels); IDs and claims' conditions break at slashes and
//     hyphens (no box runs past the margin).
//   - 16: intervals may break after their estimate and comma; the number
//     table's columns fit the text width.
//   - 17: the report's lists set ragged right.
//   - 18: the disputed rows' labels through internal/latex.
//   - 19: one of the paper's runs printed by itself (a row's lowest or
//     highest seed, the seeds it lists: seeds_of and rank) is judged
//     against the normal fitted to our runs (verdict.OrderStat) instead
//     of left out; a comparison's margin is its metric's kind (a drift
//     rate's difference is relative, as the rate).
//
// Then reproductionHistory: changes that touch only the reports whose
// params use them.
var Reproduction = &pipeline.Stage{
	Name:      "reproduction",
	Version:   19,
	History:   reproductionHistory,
	NewParams: func() any { return &judge.Params{} },
	Run: func(ctx context.Context, rc *pipeline.RunContext) error {
		p := rc.Params.(*judge.Params)
		var recs []*numbers.AggregateRecord
		for _, t := range p.Tables {
			b, err := rc.Input(t).Read(ctx, "aggregate")
			if err != nil {
				return fmt.Errorf("input %s: %w", t, err)
			}
			rec := &numbers.AggregateRecord{}
			if err := json.Unmarshal(b, rec); err != nil {
				return fmt.Errorf("input %s: %w", t, err)
			}
			recs = append(recs, rec)
		}
		for _, f := range p.Figures {
			b, err := rc.Input(f).Read(ctx, "ids")
			if err != nil {
				return fmt.Errorf("input %s: %w", f, err)
			}
			side := &numbers.FigureSidecar{}
			if err := json.Unmarshal(b, side); err != nil {
				return fmt.Errorf("input %s: %w", f, err)
			}
			recs = append(recs, numbers.FigureRecord(side))
		}
		var disputed *numbers.AggregateRecord
		if len(p.Disputed) > 0 {
			b, err := rc.Input(judge.DisputedInput).Read(ctx, "aggregate")
			if err != nil {
				return fmt.Errorf("input %s: %w", judge.DisputedInput, err)
			}
			disputed = &numbers.AggregateRecord{}
			if err := json.Unmarshal(b, disputed); err != nil {
				return fmt.Errorf("input %s: %w", judge.DisputedInput, err)
			}
		}
		rep, err := judge.Reproduce(p, recs, disputed)
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(rep, "", " ")
		if err != nil {
			return err
		}
		rc.Put("tex", []byte(rep.TeX()))
		rc.Put("report", append(b, '\n'))
		return nil
	},
}

// reproductionHistory is the reproduction stage's version history after
// 19 (pipeline.Stage.CellVersion takes the largest entry that applies).
var reproductionHistory = []pipeline.Bump{
	{Version: 20, Applies: hasExtreme,
		Why: "a published value may be one end of a range over rows the paper names (extreme, over, " +
			"over_minus, spread in published.toml): judged against the same end of our rows, their means " +
			"or seed s.d.s, by a parametric bootstrap of ours at the paper's n (verdict.ExtremeStat). " +
			"Reports whose params name no such value are unchanged."},
}

// hasExtreme says whether a reproduction cell's params name a value that
// is a range's end.
func hasExtreme(params any) bool {
	p, ok := params.(*judge.Params)
	if !ok {
		return false
	}
	for _, v := range p.Values {
		if v.Extreme != "" {
			return true
		}
	}
	return false
}
