package judge

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"repro/numbers"
	"repro/published"
	"repro/verdict"
)

// DisputedRow is one row of the report's table of disputed rows: a
// published number (ID) settled by more seeds on both codes. Ours are the
// train cells of Experiment (minus those of Minus, seed by seed, for a
// paired difference) in Protocol, read from the reproduction cell's input
// "disputed"; the authors' code's are RefSeeds and RefAcc, read by package
// experiments from paper/reference-runs (so they are in the cell's key).
type DisputedRow struct {
	ID         string `toml:"id"`
	Label      string `toml:"label"`
	Experiment string `toml:"experiment"`
	Minus      string `toml:"minus,omitzero"`
	Protocol   string `toml:"protocol"`
	// Column is the aggregate's column holding the row's cells when it is
	// not the protocol's: "<protocol>-split<seed>" for a row on another
	// held-out split than its experiment's first.
	Column string `toml:"column,omitzero"`
	// Reference names the authors' configuration(s) the row's runs are of
	// ("a - b" for a difference); RefNote says why there are none.
	Reference string `toml:"reference,omitzero"`
	// RefScript is the authors' script that ran them: "run_seq" (--val,
	// the held-out split), "run_seq_test" (no --val) or "run_mnist" (both
	// on the official test set).
	RefScript string `toml:"ref_script,omitzero"`
	// RefValSeed is the held-out split's seed of run_seq runs made with
	// --val-seed (a row on another split than 1234); 0 else.
	RefValSeed int64     `toml:"ref_val_seed,omitzero"`
	RefSeeds   []int64   `toml:"ref_seeds,omitzero"`
	RefAcc     []float64 `toml:"ref_acc,omitzero"`
	RefNote    string    `toml:"ref_note,omitzero"`
	// RowSeeds is the seeds the experiment runs for the paper's tables:
	// the paper's n where its value says "the row's own count" (n = 0).
	RowSeeds int `toml:"row_seeds"`
}

// DisputedSide is one column of a disputed row: n runs, their mean, s.d.
// (ddof 1), median, lowest value and count of severe failures
// (verdict.CountFailures: final accuracy below 60%), and the per-seed
// values. For the paper only what it prints: Mean and SD (nil without a
// printed mean) and the count it states (FailedKnown).
type DisputedSide struct {
	N    int      `json:"n"`
	Mean *float64 `json:"mean,omitempty"`
	SD   *float64 `json:"sd,omitempty"`
	// Lo and Hi are the paper's 95% interval of a paired difference.
	Lo          *float64  `json:"lo,omitempty"`
	Hi          *float64  `json:"hi,omitempty"`
	Median      *float64  `json:"median,omitempty"`
	Min         *float64  `json:"min,omitempty"`
	Max         *float64  `json:"max,omitempty"`
	Failed      int       `json:"failed"`
	FailedKnown bool      `json:"failed_known"`
	Seeds       []int64   `json:"seeds,omitempty"`
	Values      []float64 `json:"values,omitempty"`
	// Note says what the side lacks (no runs, no printed mean).
	Note string `json:"note,omitempty"`
}

// DisputedPair is the verdict between two columns of a row: on the means
// (Mean: b - a) and, where both have counts, on the failed seeds.
type DisputedPair struct {
	Name     string             `json:"name"` // "authors - paper", "ours - paper", "ours - authors"
	Mean     *verdict.Judgement `json:"mean,omitempty"`
	Failures *verdict.Judgement `json:"failures,omitempty"`
	// Outcome is the mean's verdict (not run without one).
	Outcome verdict.Outcome `json:"outcome"`
}

// DisputedResult is one row of the table judged.
type DisputedResult struct {
	ID        string `json:"id"`
	Label     string `json:"label"`
	Reference string `json:"reference,omitempty"`
	RefScript string `json:"ref_script,omitempty"`
	// RefValSeed is DisputedRow's: run_seq.py's --val-seed, 0 for 1234.
	RefValSeed int64          `json:"ref_val_seed,omitempty"`
	Paper      DisputedSide   `json:"paper"`
	Authors    DisputedSide   `json:"authors"`
	Ours       DisputedSide   `json:"ours"`
	Pairs      []DisputedPair `json:"pairs"`
}

// computedSide summarises per-seed values of ours or the authors' code.
func computedSide(seeds []int64, values []float64, difference bool) DisputedSide {
	s := DisputedSide{N: len(values), Seeds: seeds, Values: values, FailedKnown: !difference}
	if len(values) == 0 {
		return s
	}
	m, sd := verdict.MeanSD(values)
	sorted := slices.Sorted(slices.Values(values))
	med := sorted[len(sorted)/2]
	if len(sorted)%2 == 0 {
		med = (sorted[len(sorted)/2-1] + sorted[len(sorted)/2]) / 2
	}
	s.Mean, s.SD, s.Median, s.Min, s.Max = &m, &sd, &med, &sorted[0], &sorted[len(sorted)-1]
	if !difference {
		s.Failed = verdict.CountFailures(values)
	}
	return s
}

// sample is a computed side as the verdict package takes it.
func (s DisputedSide) sample() verdict.Sample { return verdict.Ours(*s.Mean, *s.SD, s.N) }

// judgeDisputed judges every disputed row of p against the paper's values
// of p and ours in rec (the "disputed" aggregate: one row per experiment).
// The rows' tests are one family (Benjamini-Hochberg over this table
// alone, so the report's other verdicts are as they were without it).
func judgeDisputed(p *Params, rec *numbers.AggregateRecord) ([]DisputedResult, error) {
	pub := map[string]*published.Value{}
	for i := range p.Values {
		pub[p.Values[i].ID] = &p.Values[i]
	}
	var fam verdict.Family
	var out []DisputedResult
	for _, row := range p.Disputed {
		diff := row.Minus != ""
		res := DisputedResult{ID: row.ID, Label: row.Label, Reference: row.Reference, RefScript: row.RefScript, RefValSeed: row.RefValSeed}
		// Ours.
		col := cmp.Or(row.Column, row.Protocol)
		a := rec.Find(row.Experiment, col)
		if a == nil {
			return nil, fmt.Errorf("disputed row %s: no cell %s %s in the disputed aggregate", row.ID, row.Experiment, col)
		}
		seeds, values := a.Seeds, a.Values
		if diff {
			b := rec.Find(row.Minus, col)
			if b == nil {
				return nil, fmt.Errorf("disputed row %s: no cell %s %s in the disputed aggregate", row.ID, row.Minus, col)
			}
			values, seeds = numbers.PairedDiffs(a, b)
		}
		res.Ours = computedSide(seeds, values, diff)
		if a.Status.Kind != numbers.StatusOK {
			res.Ours.Note = a.Status.String()
		} else if a.N < a.Expected {
			res.Ours.Note = fmt.Sprintf("n=%d of %d (missing seeds %v)", a.N, a.Expected, a.Missing)
		}
		// The authors' code.
		res.Authors = computedSide(row.RefSeeds, row.RefAcc, diff)
		if len(row.RefAcc) == 0 {
			res.Authors.Note = cmp.Or(row.RefNote, "no runs of the authors' code")
		}
		// The paper.
		v := pub[row.ID]
		if v != nil && !strings.HasSuffix(v.ID, "/collapsed") {
			res.Paper.N = v.N
			if res.Paper.N == 0 && v.Lo == nil {
				res.Paper.N = row.RowSeeds
			}
			m := v.Mean
			res.Paper.Mean, res.Paper.SD, res.Paper.Lo, res.Paper.Hi = &m, v.SD, v.Lo, v.Hi
			res.Paper.Failed, res.Paper.FailedKnown, _ = paperFailures(v, res.Paper.N)
		} else {
			res.Paper.Note = "the paper prints no mean for this row"
		}
		if c := pub[row.ID+"/collapsed"]; c != nil && !diff {
			res.Paper.Failed, res.Paper.FailedKnown = int(c.Mean), true
			res.Paper.N = max(c.N, res.Paper.N)
		}
		res.Pairs = disputedPairs(&res, v, diff)
		out = append(out, res)
	}
	for i := range out {
		for k := range out[i].Pairs {
			pr := &out[i].Pairs[k]
			for _, j := range []*verdict.Judgement{pr.Mean, pr.Failures} {
				if j != nil {
					fam.Add(j)
				}
			}
		}
	}
	fam.Settle()
	for i := range out {
		for k := range out[i].Pairs {
			if pr := &out[i].Pairs[k]; pr.Mean != nil {
				pr.Outcome = pr.Mean.Outcome
			}
		}
	}
	return out, nil
}

// disputedPairs are a row's three verdicts: the paper against the authors'
// code, the paper against ours, the authors' code against ours (each the
// second minus the first), on the means and the collapse counts, by the
// report's own tests (verdict.Welch, verdict.Paired for a published
// paired difference, verdict.FailureCount).
func disputedPairs(res *DisputedResult, v *published.Value, diff bool) []DisputedPair {
	var out []DisputedPair
	for _, who := range []struct {
		name string
		side *DisputedSide
	}{{"authors", &res.Authors}, {"ours", &res.Ours}} {
		pr := DisputedPair{Name: who.name + " - paper"}
		s := who.side
		if s.N > 0 && res.Paper.Mean != nil {
			var j verdict.Judgement
			half := verdict.HalfUnit(v.Places(), v.Exponent)
			switch {
			case diff && v.Lo != nil && v.Hi != nil:
				j = verdict.Paired(s.Values, verdict.PairedInterval(v.Mean, *v.Lo, *v.Hi, res.Paper.N, half))
			case diff:
				j = verdict.Paired(s.Values, verdict.Printed(v.Mean, nil, res.Paper.N, half))
			default:
				pub := verdict.Printed(v.Mean, v.SD, res.Paper.N, half)
				if v.SD == nil && s.N > 1 {
					pub = pub.BorrowShared(*s.SD, s.N-1, "this column's seeds")
				}
				j = verdict.Welch(s.sample(), pub, verdict.Points)
			}
			pr.Mean = &j
		}
		if s.N > 1 && s.FailedKnown && res.Paper.FailedKnown {
			j := verdict.FailureCount(s.Values, res.Paper.Failed, res.Paper.N)
			pr.Failures = &j
		}
		out = append(out, pr)
	}
	pr := DisputedPair{Name: "ours - authors"}
	if res.Authors.N > 1 && res.Ours.N > 1 {
		j := verdict.Welch(res.Ours.sample(), res.Authors.sample(), verdict.Points)
		pr.Mean = &j
		if !diff {
			c := verdict.FailureCount(res.Ours.Values, res.Authors.Failed, res.Authors.N)
			pr.Failures = &c
		}
	}
	return append(out, pr)
}
