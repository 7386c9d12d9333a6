package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"repro/pipeline"
	"repro/verdict"
)

// ReproductionParams are the paper's published values (in the published
// files' order), its claims and the numbers no cell runs, and the tables
// and figures whose numbers are judged against them.
type ReproductionParams struct {
	Tables []string `toml:"tables"` // input names: the tables' aggregate cells
	// Figures are the input names of the figure cells ("fig:<name>",
	// output "ids"), whose points are numbers too.
	Figures []string         `toml:"figures,omitzero"`
	Values  []PublishedValue `toml:"values"`
	Stamp   string           `toml:"stamp"`
	Profile string           `toml:"profile"`
	// Claims are the comparisons the paper states.
	Claims []Claim `toml:"claims,omitzero"`
	// NotRun are the paper's numbers no cell of the profile computes.
	NotRun []NotRunGroup `toml:"not_run,omitzero"`
	// PaperNumbers is how many numbers the paper states.
	PaperNumbers int `toml:"paper_numbers,omitzero"`
	// Disputed are the rows settled by more seeds on both codes
	// ([disputed] in pipeline.toml); ours come from the input "disputed".
	Disputed []DisputedRow `toml:"disputed,omitzero"`
	// Restatements are the paper's numbers that restate a value.
	Restatements []Restatement `toml:"restatements,omitzero"`
}

// ReproRow is one published number judged against ours.
type ReproRow struct {
	ID    string `json:"id"`
	Group string `json:"group"` // the table or figure it belongs to
	Cite  string `json:"cite,omitempty"`
	Line  int    `json:"line,omitempty"` // of paper.tex
	// Published and Ours are the numbers as printed ("" when we have none).
	Published string `json:"published"`
	Ours      string `json:"ours"`
	// Verdict is the three-way verdict, NotRun when we have no number;
	// Judgement what it rests on (nil when not run).
	Verdict   verdict.Outcome    `json:"verdict"`
	Judgement *verdict.Judgement `json:"judgement,omitempty"`
	// Note says how it was judged when not the plain way (a single run, a
	// missing seed, why not run); Cause what is known of a difference.
	Note  string `json:"note,omitempty"`
	Cause string `json:"cause,omitempty"`
}

// ConditionResult is one condition of a claim, judged.
type ConditionResult struct {
	Text      string             `json:"text"`
	Verdict   verdict.Outcome    `json:"verdict"`
	Judgement *verdict.Judgement `json:"judgement,omitempty"`
	// Detail gives the operands' values ("why not run" when not run).
	Detail string `json:"detail"`
}

// ClaimResult is one claim of the paper judged on our numbers: agrees when
// every condition agrees, differs when one differs, not run when an operand
// has no number here, inconclusive otherwise.
type ClaimResult struct {
	ID         string            `json:"id"`
	Text       string            `json:"text"`
	Cite       string            `json:"cite"`
	Line       int               `json:"line"`
	Verdict    verdict.Outcome   `json:"verdict"`
	Conditions []ConditionResult `json:"conditions"`
	// Cause is what is known of a difference (published.toml).
	Cause string `json:"cause,omitempty"`
}

// Tally counts verdicts.
type Tally struct {
	Judged       int `json:"judged"`
	Agree        int `json:"agree"`
	Differ       int `json:"differ"`
	Inconclusive int `json:"inconclusive"`
	NotRun       int `json:"not_run"`
	// Untranscribed counts the paper's numbers not in published.toml yet.
	Untranscribed int `json:"not_transcribed,omitempty"`
}

// Add counts one outcome.
func (t *Tally) Add(o verdict.Outcome) {
	switch o {
	case verdict.Agrees:
		t.Agree++
	case verdict.Differs:
		t.Differ++
	case verdict.Inconclusive:
		t.Inconclusive++
	default:
		t.NotRun++
		return
	}
	t.Judged++
}

// Total is the judged and the not-run.
func (t Tally) Total() int { return t.Judged + t.NotRun + t.Untranscribed }

// String is the tally as the summary line prints it.
func (t Tally) String() string {
	s := fmt.Sprintf("%d judged, %d agree, %d differ, %d inconclusive, %d not run", t.Judged, t.Agree, t.Differ, t.Inconclusive, t.NotRun)
	if t.Untranscribed > 0 {
		s += fmt.Sprintf(", %d not transcribed", t.Untranscribed)
	}
	return s
}

// GroupTally is the tally of one table or figure.
type GroupTally struct {
	Group string `json:"group"`
	Tally
}

// ReproReport is the "report" output of the reproduction cell.
type ReproReport struct {
	Profile string        `json:"profile"`
	Stamp   string        `json:"stamp,omitempty"`
	Rows    []ReproRow    `json:"rows"`
	Claims  []ClaimResult `json:"claims,omitempty"`
	NotRun  []NotRunGroup `json:"not_run_groups,omitempty"`
	// Numbers and ClaimTally count the verdicts; Groups per table and
	// figure (and one "paper only" group for NotRun), in report order.
	Numbers    Tally        `json:"numbers"`
	ClaimTally Tally        `json:"claim_tally"`
	Groups     []GroupTally `json:"groups"`
	// PaperNumbers is how many numbers the paper states (0: not counted).
	PaperNumbers int `json:"paper_numbers,omitempty"`
	// Disputed is the table of disputed rows (JudgeDisputed).
	Disputed []DisputedResult `json:"disputed,omitempty"`
}

// Summary is the report's verdict in one line: the counts of numbers and
// of claims. `repro show reproduction --summary` prints it, and so does
// `make paper`, last.
func (rep *ReproReport) Summary() string {
	of := ""
	if n := rep.Numbers.Total(); rep.PaperNumbers > 0 && n >= rep.PaperNumbers {
		// The paper's count is of numbers printed with a decimal point;
		// integers, counts in words and plotted points come on top.
		of = fmt.Sprintf(": the paper's %d with a decimal point and %d others", rep.PaperNumbers, n-rep.PaperNumbers)
	}
	return fmt.Sprintf("reproduction (profile %s): numbers: %s (%d in all%s); claims: %s (%d in all)",
		rep.Profile, rep.Numbers, rep.Numbers.Total(), of, rep.ClaimTally, rep.ClaimTally.Total())
}

// Reproduction judges every published number and claim against the
// numbers of the tables (inputs: one aggregate cell per table, named by the
// table) and figures (inputs "fig:<name>": the figure cells' "ids").
// Outputs: "tex" (paper/reproduction.tex) and "report" (JSON ReproReport).
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
var Reproduction = &pipeline.Stage{
	Name:      "reproduction",
	Version:   13,
	NewParams: func() any { return &ReproductionParams{} },
	Run: func(ctx context.Context, rc *pipeline.RunContext) error {
		p := rc.Params.(*ReproductionParams)
		var recs []*AggregateRecord
		for _, t := range p.Tables {
			b, err := rc.Input(t).Read(ctx, "aggregate")
			if err != nil {
				return fmt.Errorf("input %s: %w", t, err)
			}
			rec := &AggregateRecord{}
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
			side := &FigureSidecar{}
			if err := json.Unmarshal(b, side); err != nil {
				return fmt.Errorf("input %s: %w", f, err)
			}
			recs = append(recs, FigureRecord(side))
		}
		rep, err := Reproduce(p, recs)
		if err != nil {
			return err
		}
		if len(p.Disputed) > 0 {
			b, err := rc.Input(DisputedInput).Read(ctx, "aggregate")
			if err != nil {
				return fmt.Errorf("input %s: %w", DisputedInput, err)
			}
			rec := &AggregateRecord{}
			if err := json.Unmarshal(b, rec); err != nil {
				return fmt.Errorf("input %s: %w", DisputedInput, err)
			}
			if rep.Disputed, err = JudgeDisputed(p, rec); err != nil {
				return err
			}
		}
		b, err := json.MarshalIndent(rep, "", " ")
		if err != nil {
			return err
		}
		rc.Put("tex", []byte(ReproductionTeX(rep)))
		rc.Put("report", append(b, '\n'))
		return nil
	},
}

// FigureRecord is a figure's numbers as an aggregate record of one row per
// point: its y cell, its x cell when the x axis is a measured number
// (<point>/x), and a margin point's seed-paired difference as a
// comparison (the minuend and subtrahend cells as <point>/a and
// <point>/minus, so the pairs can be rebuilt).
func FigureRecord(side *FigureSidecar) *AggregateRecord {
	rec := &AggregateRecord{Table: "fig/" + side.Figure}
	for _, pt := range append(slices.Clone(side.Points), side.Lines...) {
		var row []AggCell
		if pt.Diff != nil && pt.YCell != nil && pt.BCell != nil {
			a := *pt.YCell
			a.ID = pt.ID + "/a"
			row = append(row, a, *pt.BCell)
			c := *pt.Diff
			c.A, c.B = a.ID, pt.BCell.ID
			rec.Comparisons = append(rec.Comparisons, c)
		} else if pt.YCell != nil {
			row = append(row, *pt.YCell)
		}
		if pt.XCell != nil {
			row = append(row, *pt.XCell)
		}
		if len(row) > 0 {
			rec.Rows = append(rec.Rows, row)
		}
	}
	return rec
}

// ours is what the report knows of one number of ours.
type ours struct {
	cell  *AggCell // a table or figure cell (nil for a comparison)
	stat  *Stat    // the number's mean and s.d. over cell.N seeds
	kind  verdict.Kind
	cmp   *Comparison // a paired difference
	diffs []float64   // its per-seed differences
	// collapse: the number is the cell's count of collapsed seeds.
	collapse bool
}

// numbers indexes every number of recs by ID: each cell's main metric, its
// forgetting, replay updates, syn-ops fraction and count of collapsed seeds
// (<cell>/forgetting, <cell>/replay_updates, <cell>/synops_frac,
// <cell>/collapsed), and each comparison.
func numbers(recs []*AggregateRecord) map[string]*ours {
	out := map[string]*ours{}
	for _, rec := range recs {
		byCell := map[string]*AggCell{}
		for r := range rec.Rows {
			for c := range rec.Rows[r] {
				x := &rec.Rows[r][c]
				byCell[x.ID] = x
				if x.Experiment != "" {
					byCell[x.Experiment+" "+x.Protocol] = x
				}
				out[x.ID] = &ours{cell: x, stat: &x.Acc, kind: metricKind(x.Metric)}
				if x.Status.Kind != StatusOK {
					continue
				}
				out[x.ID+"/collapsed"] = &ours{cell: x, stat: &x.Acc, collapse: true}
				out[x.ID+"/forgetting"] = &ours{cell: x, stat: &x.Forgetting, kind: verdict.Points}
				out[x.ID+"/replay_updates"] = &ours{cell: x, stat: &x.Replay, kind: verdict.Relative}
				if x.SynOps != nil {
					out[x.ID+"/synops_frac"] = &ours{cell: x, stat: x.SynOps, kind: verdict.Relative}
				}
			}
		}
		for i := range rec.Comparisons {
			c := &rec.Comparisons[i]
			a, b := byCell[c.A], byCell[c.B]
			if a == nil || b == nil {
				a, b = byCell[c.A+" "+c.Protocol], byCell[c.B+" "+c.Protocol]
			}
			out[c.ID] = &ours{cmp: c, diffs: seedDiffs(a, b), kind: verdict.Points}
		}
	}
	return out
}

// seedDiffs is a - b seed by seed over the seeds both have (nil when
// either is missing).
func seedDiffs(a, b *AggCell) []float64 {
	if a == nil || b == nil || len(a.Values) != len(a.Seeds) || len(b.Values) != len(b.Seeds) {
		return nil
	}
	var d []float64
	for i, s := range a.Seeds {
		if j := slices.Index(b.Seeds, s); j >= 0 {
			d = append(d, a.Values[i]-b.Values[j])
		}
	}
	return d
}

// metricKind is the kind of number a metric is: energies and counts are
// relative, and so are the mechanism diagnostics (channel widths, asleep
// fractions, overlaps, realised decays, participation ratios, drift rates),
// whose published values are small fractions or rates that a margin of one
// point would never tell apart; accuracies, shares and duties (x100) are
// points.
func metricKind(metric string) verdict.Kind {
	for _, p := range []string{"energy.nj", "replay_updates", "replay_samples", "waking_batches", "synops", "dense_macs",
		"rho[", "asleep[", "overlap[", "lambda[", "pr[", "drift."} {
		if strings.HasPrefix(metric, p) {
			return verdict.Relative
		}
	}
	return verdict.Points
}

// group is the table or figure a number ID belongs to.
func group(id string) string {
	parts := strings.SplitN(id, "/", 3)
	if parts[0] == "fig" && len(parts) > 1 {
		return "fig/" + parts[1]
	}
	return parts[0]
}

// Reproduce judges every published value and claim of p against the
// numbers of recs (tables' aggregates and figures' records).
func Reproduce(p *ReproductionParams, recs []*AggregateRecord) (*ReproReport, error) {
	ns := numbers(recs)
	rep := &ReproReport{Profile: p.Profile, Stamp: p.Stamp, NotRun: p.NotRun, PaperNumbers: p.PaperNumbers}
	var fam, claimFam verdict.Family
	for i := range p.Values {
		rep.Rows = append(rep.Rows, judgeValue(&p.Values[i], ns))
	}
	for i := range rep.Rows {
		if j := rep.Rows[i].Judgement; j != nil {
			fam.Add(j)
		}
	}
	fam.Settle()
	for _, c := range p.Claims {
		rep.Claims = append(rep.Claims, judgeClaim(c, ns))
	}
	for i := range rep.Claims {
		for k := range rep.Claims[i].Conditions {
			if j := rep.Claims[i].Conditions[k].Judgement; j != nil {
				claimFam.Add(j)
			}
		}
	}
	claimFam.Settle()
	groups := map[string]*GroupTally{}
	var order []string
	tally := func(g string) *GroupTally {
		if groups[g] == nil {
			groups[g] = &GroupTally{Group: g}
			order = append(order, g)
		}
		return groups[g]
	}
	for i := range rep.Rows {
		r := &rep.Rows[i]
		if r.Judgement != nil {
			r.Verdict = r.Judgement.Outcome
		}
		rep.Numbers.Add(r.Verdict)
		tally(r.Group).Add(r.Verdict)
	}
	for _, g := range p.NotRun {
		t := tally("paper only")
		if g.Status == "not transcribed" {
			t.Untranscribed += g.Count
			rep.Numbers.Untranscribed += g.Count
			continue
		}
		t.NotRun += g.Count
		rep.Numbers.NotRun += g.Count
	}
	for i := range rep.Claims {
		c := &rep.Claims[i]
		c.Verdict = claimOutcome(c.Conditions)
		rep.ClaimTally.Add(c.Verdict)
	}
	for _, g := range order {
		rep.Groups = append(rep.Groups, *groups[g])
	}
	return rep, nil
}

// judgeValue judges one published value against our number of the same ID
// in ns (none when no cell computes it). The judgement is provisional until the family settles.
func judgeValue(v *PublishedValue, ns map[string]*ours) ReproRow {
	o := ns[v.ID]
	r := ReproRow{ID: v.ID, Group: group(v.ID), Cite: v.Cite, Line: v.Line, Cause: v.Cause, Published: publishedText(v)}
	switch {
	case o == nil:
		r.Note = "no cell of this profile computes this ID"
		return r
	case o.cmp != nil:
		if o.cmp.Status != "ok" || len(o.diffs) == 0 {
			r.Note = o.cmp.Status
			return r
		}
		r.Ours = fmt.Sprintf("%s [%s, %s]", signed1(o.cmp.Diff), signed1(o.cmp.Lo), signed1(o.cmp.Hi))
		j := verdict.Paired(o.diffs, v.Mean, v.Lo, v.Hi, v.Places())
		r.Judgement = &j
		r.Note = fmt.Sprintf("%s - %s, %s, paired over %d seeds", o.cmp.A, o.cmp.B, o.cmp.Protocol, len(o.diffs))
		return r
	case o.cell.Status.Kind != StatusOK:
		r.Note = o.cell.Status.String()
		return r
	}
	c := o.cell
	if o.collapse {
		n := max(v.N, 1)
		j := verdict.CollapseCount(c.Values, int(v.Mean), n)
		r.Judgement = &j
		r.Ours = fmt.Sprintf("%d of %d", j.Collapse.Ours, j.Collapse.OursN)
		r.Published = fmt.Sprintf("%d of %d", j.Collapse.Paper, n)
		r.Note = fmt.Sprintf("a seed is collapsed %.0f points below its row's median", verdict.CollapseDrop)
		return r
	}
	d := max(v.Places(), 1)
	r.Ours = fmtN(o.stat.Mean, d)
	if c.N > 1 {
		r.Ours += " ± " + fmtN(o.stat.SD, d)
	}
	var notes []string
	if c.N != c.Expected {
		notes = append(notes, fmt.Sprintf("n=%d of %d (missing seeds %v)", c.N, c.Expected, c.Missing))
	}
	us := verdict.Ours(o.stat.Mean, o.stat.SD, c.N)
	n := v.N
	if n == 0 {
		n = c.Expected // the paper's seed count is the row's, as ours
	}
	pub := verdict.Printed(v.Mean, v.SD, n, v.Places())
	if v.SD == nil && n <= 1 {
		// A single published run (no s.d.): against our mean over several
		// seeds, one run of the paper's carries our per-run spread; against
		// a single run of ours, both carry the spread of the number
		// noise_from names. Said so in the note.
		switch {
		case c.N > 1:
			pub.SD, pub.DF = o.stat.SD, c.N-1
			notes = append(notes, fmt.Sprintf("the paper's is a single run: judged with our per-run s.d. %s over %d seeds", fmtN(o.stat.SD, d), c.N))
		case v.NoiseFrom != "":
			if ref := ns[v.NoiseFrom]; ref != nil && ref.cell != nil && ref.cell.Status.Kind == StatusOK && ref.cell.N > 1 {
				ref := ref.cell
				us.SD, us.DF = ref.Acc.SD, ref.N-1
				pub.SD, pub.DF = ref.Acc.SD, ref.N-1
				notes = append(notes, fmt.Sprintf("a single run on each side (seed 0), judged with the per-run s.d. %s of %s over %d seeds", fmtN(ref.Acc.SD, d), v.NoiseFrom, ref.N))
			} else {
				notes = append(notes, fmt.Sprintf("a single run on each side: %s has no spread here, so only the printing is uncertain", v.NoiseFrom))
			}
		default:
			notes = append(notes, "a single run on each side, no spread to judge it with: only the printing is uncertain")
		}
	} else if v.SD == nil {
		notes = append(notes, fmt.Sprintf("the paper prints no s.d.: its printing (±%s) is its only uncertainty", fmtN(pub.Half, v.Places()+1)))
	}
	j := verdict.Welch(us, pub, o.kind)
	if j.WiderP >= 0 && j.WiderP < verdict.Alpha && o.stat.SD > pub.SD {
		notes = append(notes, fmt.Sprintf("our spread is wider: F-test p = %.2g", j.WiderP))
	}
	if o.stat == &c.Acc && len(c.Values) > 1 {
		paper, paperN := 0, 0
		if v.Collapsed != nil {
			paper, paperN = *v.Collapsed, n
		}
		if k := verdict.Collapsed(c.Values); k > 0 || v.Collapsed != nil {
			j.Collapse = verdict.CollapseTest(c.Values, paper, paperN)
			if paperN == 0 {
				j.Collapse.P = -1
			}
		}
	}
	r.Judgement = &j
	r.Note = strings.Join(notes, "; ")
	return r
}

// publishedText is the published value as the paper prints it.
func publishedText(v *PublishedValue) string {
	d := v.Places()
	if v.Lo != nil {
		e := max(d, 1) // the paper prints its intervals to a tenth
		return fmt.Sprintf("%s [%s, %s]", signedN(v.Mean, d), signedN(*v.Lo, e), signedN(*v.Hi, e))
	}
	s := fmtN(v.Mean, d)
	if v.SD != nil {
		s += " ± " + fmtN(*v.SD, d)
	}
	return s
}

// signedN formats x with d decimals and a sign.
func signedN(x float64, d int) string {
	s := fmtN(x, d)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// judgeClaim judges every condition of claim c on our numbers.
func judgeClaim(c Claim, ns map[string]*ours) ClaimResult {
	cr := ClaimResult{ID: c.ID, Text: c.Text, Cite: c.Cite, Line: c.Line, Cause: c.Cause}
	kind := verdict.Points
	if c.Kind == "relative" {
		kind = verdict.Relative
	}
	for _, h := range c.Holds {
		cond := ConditionResult{Text: h}
		a, op, b, err := parseCondition(h)
		if err != nil {
			cond.Detail = err.Error()
			cr.Conditions = append(cr.Conditions, cond)
			continue
		}
		dir, swap, _ := verdict.ParseOp(op)
		x, xerr := operand(a, ns)
		y, yerr := operand(b, ns)
		if xerr != "" || yerr != "" {
			cond.Detail = strings.Trim(xerr+"; "+yerr, "; ")
			cr.Conditions = append(cr.Conditions, cond)
			continue
		}
		if swap {
			x, y = y, x
			a, b = b, a
		}
		var j verdict.Judgement
		if ca, cb := ns[a], ns[b]; ca != nil && cb != nil && ca.collapse && cb.collapse && dir == verdict.Greater {
			// A claim about failures is a claim about counts.
			j = verdict.ClaimCollapse(verdict.Collapsed(ca.cell.Values), len(ca.cell.Values), verdict.Collapsed(cb.cell.Values), len(cb.cell.Values))
		} else {
			j = verdict.Claim(x, y, dir, kind)
		}
		cond.Judgement = &j
		test := "Welch"
		switch {
		case j.Collapse != nil:
			test = "Fisher's exact test of the collapse counts"
		case j.Paired:
			test = "paired by seed"
		}
		cond.Detail = fmt.Sprintf("%s %s, %s %s; %s", a, fmtSig(opMean(a, ns)), b, fmtSig(opMean(b, ns)), test)
		cr.Conditions = append(cr.Conditions, cond)
	}
	return cr
}

// claimOutcome is a claim's verdict from its conditions' (after the
// family settled).
func claimOutcome(cs []ConditionResult) verdict.Outcome {
	out := verdict.Agrees
	for i := range cs {
		c := &cs[i]
		if c.Judgement == nil {
			return verdict.NotRun
		}
		c.Verdict = c.Judgement.Outcome
		switch {
		case c.Verdict == verdict.Differs:
			out = verdict.Differs
		case c.Verdict == verdict.Inconclusive && out != verdict.Differs:
			out = verdict.Inconclusive
		}
	}
	return out
}

// operand is a claim's operand: a number ID of ours (with its per-seed
// values when it has them) or a constant; the reason when it has none.
func operand(s string, ns map[string]*ours) (verdict.Operand, string) {
	if o := ns[s]; o != nil {
		switch {
		case o.cmp != nil && o.cmp.Status == "ok" && len(o.diffs) > 0:
			m, sd := verdict.MeanSD(o.diffs)
			return verdict.Operand{Mean: m, SD: sd, N: len(o.diffs), Values: o.diffs, Seeds: o.cmp.Seeds}, ""
		case o.collapse && o.cell.Status.Kind == StatusOK:
			k := float64(verdict.Collapsed(o.cell.Values))
			return verdict.Operand{Mean: k}, ""
		case o.cell != nil && o.cell.Status.Kind == StatusOK:
			op := verdict.Operand{Mean: o.stat.Mean, SD: o.stat.SD, N: o.cell.N}
			if o.stat == &o.cell.Acc && len(o.cell.Values) == len(o.cell.Seeds) {
				op.Values, op.Seeds = o.cell.Values, o.cell.Seeds
			}
			return op, ""
		case o.cell != nil:
			return verdict.Operand{}, s + ": " + o.cell.Status.String()
		}
		return verdict.Operand{}, s + ": " + o.cmp.Status
	}
	if v, err := strconv.ParseFloat(s, 64); err == nil {
		return verdict.Constant(v), ""
	}
	return verdict.Operand{}, s + " has no number here"
}

// fmtSig formats an operand's mean with one decimal, or with two
// significant digits when one decimal would print it as 0.0 (the realised
// decays and rates of order 1e-3 and below).
func fmtSig(x float64) string {
	if x != 0 && math.Abs(x) < 0.05 {
		return strconv.FormatFloat(x, 'g', 2, 64)
	}
	return fmt1(x)
}

// opMean is an operand's mean, as the claims' details print it.
func opMean(s string, ns map[string]*ours) float64 {
	o, _ := operand(s, ns)
	return o.Mean
}
