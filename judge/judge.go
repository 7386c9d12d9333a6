package judge

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"repro/numbers"
	"repro/published"
	"repro/verdict"
)

// Params are what the paper is judged on, the reproduction cell's params
// (so its key): the paper's published values (in the published files'
// order), its claims, its restatements and the numbers no cell runs, the
// disputed rows, and the input names of the tables and figures whose
// numbers are judged against them.
type Params struct {
	Tables []string `toml:"tables"` // input names: the tables' aggregate cells
	// Figures are the input names of the figure cells ("fig:<name>",
	// output "ids"), whose points are numbers too.
	Figures []string          `toml:"figures,omitzero"`
	Values  []published.Value `toml:"values"`
	Stamp   string            `toml:"stamp"`
	Profile string            `toml:"profile"`
	// Claims are the comparisons the paper states.
	Claims []published.Claim `toml:"claims,omitzero"`
	// NotRun are the paper's numbers no cell of the profile computes.
	NotRun []published.NotRunGroup `toml:"not_run,omitzero"`
	// PaperNumbers is how many numbers the paper states.
	PaperNumbers int `toml:"paper_numbers,omitzero"`
	// Disputed are the rows settled by more seeds on both codes
	// ([disputed] in pipeline.toml); ours come from the input "disputed".
	Disputed []DisputedRow `toml:"disputed,omitzero"`
	// Restatements are the paper's numbers that restate a value.
	Restatements []published.Restatement `toml:"restatements,omitzero"`
}

// AddPublished appends the published values and claims of a file to the
// report's.
func (rp *Params) AddPublished(p *published.File) {
	rp.Values = append(rp.Values, p.Value...)
	rp.Claims = append(rp.Claims, p.Claim...)
	rp.NotRun = append(rp.NotRun, p.NotRun...)
	rp.Restatements = append(rp.Restatements, p.Restatement...)
	rp.PaperNumbers += p.PaperNumbers
}

// DisputedInput is the reproduction cell's input holding ours for the
// disputed rows: an aggregate cell with one row per experiment.
const DisputedInput = "disputed"

// DisputedTable names the disputed rows' aggregate cell
// (aggregate/disputed) and its record's table.
const DisputedTable = "disputed"

// Reproduce judges every published value and claim of p against the
// numbers of recs (tables' aggregates and figures' records) and, when p
// has disputed rows, the disputed runs of disputed (their seeds pooled
// into the rows they judge; the table of disputed rows judged too).
func Reproduce(p *Params, recs []*numbers.AggregateRecord, disputed *numbers.AggregateRecord) (*Report, error) {
	ns := ourNumbers(recs)
	pool(ns, p.Disputed, disputed)
	rep := &Report{Profile: p.Profile, Stamp: p.Stamp, NotRun: p.NotRun, PaperNumbers: p.PaperNumbers}
	rep.judgeValues(p.Values, ns)
	rep.addRestatements(p.Restatements)
	rep.judgeClaims(p.Claims, ns)
	rep.count(p.NotRun)
	if len(p.Disputed) > 0 && disputed != nil {
		var err error
		if rep.Disputed, err = judgeDisputed(p, disputed); err != nil {
			return nil, err
		}
	}
	return rep, nil
}

// judgeValues adds a row per published value, judged against ns, the
// values one family: one comparison per quantity and printing (a value
// printed alike elsewhere restates the first that prints it, and shares
// its judgement).
func (rep *Report) judgeValues(vs []published.Value, ns map[string]*ours) {
	sds := printedSDs(vs, ns)
	first := map[string]int{}
	for i := range vs {
		v := &vs[i]
		r := judgeValue(v, ns, sds)
		if o := ns[v.ID]; o != nil && r.Judgement != nil {
			k := o.key + "|" + printingKey(v, effectiveN(v, o))
			if at, ok := first[k]; ok {
				r.Restates = rep.Rows[at].ID
				rep.Rows[at].RestatedAt = append(rep.Rows[at].RestatedAt, v.Line)
			} else {
				first[k] = len(rep.Rows)
			}
		}
		rep.Rows = append(rep.Rows, r)
	}
	var fam verdict.Family
	for i := range rep.Rows {
		if j := rep.Rows[i].Judgement; j != nil && rep.Rows[i].Restates == "" {
			fam.Add(j)
		}
	}
	fam.Settle()
}

// addRestatements adds the paper's restatements ([[restatement]]): rows of
// their value's number, each with its own line, sharing its judgement (as
// does every row that restates another).
func (rep *Report) addRestatements(sts []published.Restatement) {
	byID := map[string]int{}
	for i := range rep.Rows {
		if _, ok := byID[rep.Rows[i].ID]; !ok {
			byID[rep.Rows[i].ID] = i
		}
	}
	for _, st := range sts {
		at, ok := byID[st.Of]
		if !ok {
			continue // published.Parse checks that it names a value
		}
		r := Row{ID: st.Of, Group: group(st.Of), Cite: st.Cite, Line: st.Line, Cause: rep.Rows[at].Cause, Restates: st.Of,
			Published: restatedText(&st), Ours: rep.Rows[at].Ours, Note: rep.Rows[at].Note}
		rep.Rows[at].RestatedAt = append(rep.Rows[at].RestatedAt, st.Line)
		rep.Rows = append(rep.Rows, r)
	}
	for i := range rep.Rows {
		if r := &rep.Rows[i]; r.Restates != "" {
			at := byID[r.Restates]
			for rep.Rows[at].Restates != "" { // a restatement of a restated value
				at = byID[rep.Rows[at].Restates]
			}
			if src := rep.Rows[at].Judgement; src != nil {
				j := *src
				r.Judgement = &j
			}
		}
	}
}

// judgeClaims adds every claim, judged against ns, their conditions one
// family.
func (rep *Report) judgeClaims(cs []published.Claim, ns map[string]*ours) {
	for _, c := range cs {
		rep.Claims = append(rep.Claims, judgeClaim(c, ns))
	}
	var fam verdict.Family
	for i := range rep.Claims {
		for k := range rep.Claims[i].Conditions {
			if j := rep.Claims[i].Conditions[k].Judgement; j != nil {
				fam.Add(j)
			}
		}
	}
	fam.Settle()
}

// count sets every row's and claim's verdict from its settled judgement
// and counts them: the numbers (with notRun, the paper's numbers no cell
// computes, as one "paper only" group), per group in report order, the
// distinct comparisons and the claims.
func (rep *Report) count(notRun []published.NotRunGroup) {
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
		if r.Judgement != nil && r.Restates == "" {
			rep.Comparisons.AddJudgement(r.Judgement)
		}
	}
	for _, g := range notRun {
		t := tally("paper only")
		t.NotRun += g.Count
		rep.Numbers.NotRun += g.Count
		rep.NotRunByCategory.add(g.Category, g.Count)
	}
	for i := range rep.Claims {
		c := &rep.Claims[i]
		c.Verdict = claimOutcome(c.Conditions)
		rep.ClaimTally.Add(c.Verdict)
	}
	for _, g := range order {
		rep.Groups = append(rep.Groups, *groups[g])
	}
}

// printingKey is a published value's printing: two values of one
// quantity printed alike are one comparison.
func printingKey(v *published.Value, n int) string {
	f := func(x *float64) string {
		if x == nil {
			return "-"
		}
		return strconv.FormatFloat(*x, 'g', -1, 64)
	}
	return fmt.Sprintf("%s|%s|%d|%s|%s|%d|%d|%s", f(&v.Mean), f(v.SD), n, f(v.Lo), f(v.Hi), v.Places(), v.Exponent, v.Kind)
}

// effectiveN is the paper's seed count of v: its own, or the row's.
func effectiveN(v *published.Value, o *ours) int {
	switch {
	case v.N > 0:
		return v.N
	case o.cell != nil:
		return o.cell.Expected
	}
	return o.expected
}

// printedSD is an s.d. the paper prints for a quantity, to lend to its
// values printed without one.
type printedSD struct {
	v  *published.Value
	sd float64
}

// printedSDs indexes, by quantity, the first published value that prints
// an s.d. with its mean.
func printedSDs(vs []published.Value, ns map[string]*ours) map[string]printedSD {
	out := map[string]printedSD{}
	for i := range vs {
		v := &vs[i]
		o := ns[v.ID]
		if o == nil || v.SD == nil || v.N == 1 {
			continue
		}
		if _, ok := out[o.key]; !ok {
			out[o.key] = printedSD{v: v, sd: math.Max(*v.SD, verdict.HalfUnit(v.Places(), v.Exponent))}
		}
	}
	return out
}

// judgeValue judges one published value against our number of the same ID
// in ns (none when no cell computes it), by the published value's shape
// (docs/verdicts.md): mean ± s.d.; a mean without one (the paper's own
// s.d. of the same quantity lent to it, else ours); a paired difference
// with or without its interval; a single run (seed noise from our seeds
// or noise_from, else no noise model); a count of failures; an exact
// count. The judgement is provisional until the family settles.
func judgeValue(v *published.Value, ns map[string]*ours, sds map[string]printedSD) Row {
	switch {
	case v.SeedsOf != "":
		return judgeSeed(v, ns)
	case v.Extreme != "":
		return judgeExtreme(v, ns)
	}
	o := ns[v.ID]
	r := Row{ID: v.ID, Group: group(v.ID), Cite: v.Cite, Line: v.Line, Cause: v.Cause, Published: publishedText(v)}
	half := verdict.HalfUnit(v.Places(), v.Exponent)
	var notes []string
	if o != nil && o.pooled {
		notes = append(notes, "our seeds pooled with the disputed runs' (docs/disputed.md)")
	}
	switch {
	case o == nil:
		r.Note = "no cell of this profile computes this ID"
		return r
	case o.cmp != nil:
		if !o.cmp.Status.OK() || len(o.diffs) == 0 {
			r.Note = string(o.cmp.Status)
			return r
		}
		r.Ours = fmt.Sprintf("%s [%s, %s]", numbers.Signed(o.cmp.Diff, 1), numbers.Signed(o.cmp.Lo, 1), numbers.Signed(o.cmp.Hi, 1))
		n := v.N
		if n == 0 {
			n = max(o.expected, len(o.diffs))
		}
		pub := verdict.Printed(v.Mean, nil, n, half)
		if v.Lo != nil && v.Hi != nil {
			pub = verdict.PairedInterval(v.Mean, *v.Lo, *v.Hi, n, half)
		} else if len(o.diffs) > 1 {
			notes = append(notes, fmt.Sprintf("the paper prints no interval: its spread is our per-seed differences' (%d seeds) over its %d", len(o.diffs), n))
		}
		j := verdict.PairedKind(o.diffs, pub, o.kind)
		r.Judgement = &j
		notes = append(notes, fmt.Sprintf("%s - %s, %s, paired over %d seeds", o.cmp.A, o.cmp.B, o.cmp.Protocol, len(o.diffs)))
		if j.Signed {
			notes = append(notes, "the published difference claims a sign (its interval excludes zero): ours must show it to agree")
		}
		r.Note = strings.Join(notes, "; ")
		return r
	case o.cell.Status.Kind != numbers.StatusOK:
		r.Note = o.cell.Status.String()
		return r
	}
	c := o.cell
	if o.failures {
		n := max(v.N, 1)
		j := verdict.FailureCount(c.Values, int(v.Mean), n)
		r.Judgement = &j
		r.Ours = fmt.Sprintf("%d of %d", j.Failures.Ours, j.Failures.OursN)
		r.Published = fmt.Sprintf("%d of %d", j.Failures.Paper, n)
		r.Note = strings.Join(append(notes, fmt.Sprintf("a failed run: final accuracy below %.0f%% (the paper's definition)", verdict.FailureBelow)), "; ")
		return r
	}
	d := max(v.Places(), 1)
	if v.Exponent != 0 {
		d = max(v.Places()-v.Exponent, 0)
	}
	r.Ours = numbers.Fixed(o.stat.Mean, d)
	if c.N > 1 {
		r.Ours += " ± " + numbers.Fixed(o.stat.SD, d)
	}
	if c.N != c.Expected && !o.pooled {
		notes = append(notes, fmt.Sprintf("n=%d of %d (missing seeds %v)", c.N, c.Expected, c.Missing))
	}
	if o.pooled {
		r.Ours += fmt.Sprintf(" (n=%d)", c.N)
	}
	kind := o.kind
	if v.Kind != "" {
		kind, _ = verdict.ParseKind(v.Kind) // checked by published.Parse
	}
	us := verdict.Ours(o.stat.Mean, o.stat.SD, c.N)
	n := v.N
	if n == 0 {
		n = c.Expected // the paper's seed count is the row's, as ours
	}
	pub := verdict.Printed(v.Mean, v.SD, n, half)
	switch {
	case kind == verdict.Exact:
		notes = append(notes, "an exact count (no randomness): judged against its printing")
	case v.SD == nil && n <= 1:
		// A single published run: against our mean over several seeds it
		// carries our per-run spread; against a single run of ours, both
		// carry the spread of the number noise_from names.
		switch ref := ns[v.NoiseFrom]; {
		case c.N > 1:
			pub = pub.BorrowShared(o.stat.SD, c.N-1, "our seeds")
			notes = append(notes, fmt.Sprintf("the paper's is a single run: its seed noise is our per-run s.d. %s over %d seeds", numbers.Fixed(o.stat.SD, d), c.N))
		case v.NoiseFrom != "" && ref != nil && ref.cell != nil && ref.cell.Status.Kind == numbers.StatusOK && ref.cell.N > 1:
			sd, df := ref.stat.SD, ref.cell.N-1
			us = us.Borrow(sd, df, v.NoiseFrom)
			pub = pub.BorrowShared(sd, df, v.NoiseFrom)
			notes = append(notes, fmt.Sprintf("a single run on each side, each with the per-run s.d. %s of %s over %d seeds (its declared noise source)", numbers.Fixed(sd, d), v.NoiseFrom, ref.cell.N))
		case v.NoiseFrom != "":
			notes = append(notes, fmt.Sprintf("a single run on each side: its noise source %s has no spread here", v.NoiseFrom))
		}
	case v.SD == nil:
		if sib, ok := sds[o.key]; ok {
			pub = pub.Borrow(sib.sd, max(sib.v.N, c.Expected)-1, sib.v.ID)
			notes = append(notes, fmt.Sprintf("the paper prints no s.d. here: its own s.d. of the same number, %s at paper.tex:%d, is lent to it", numbers.Fixed(sib.sd, v.Places()), sib.v.Line))
		} else if c.N > 1 {
			pub = pub.BorrowShared(o.stat.SD, c.N-1, "our seeds")
			notes = append(notes, fmt.Sprintf("the paper prints no s.d.: our per-run s.d. %s is lent to its mean over %d seeds", numbers.Fixed(o.stat.SD, d), n))
		}
	}
	j := verdict.Welch(us, pub, kind)
	if o.stat == &c.Acc && c.Metric == "" && kind == verdict.Points && v.Mean > verdict.FailureBelow && len(c.Values) > 1 {
		// Severe failures (the paper's definition) on each side, where
		// the paper's count is stated or implied.
		if k, known, inferred := paperFailures(v, n); known || verdict.CountFailures(c.Values) > 0 {
			j.Failures = verdict.FailureTest(c.Values, k, n, known, inferred)
		}
	}
	r.Judgement = &j
	r.Note = strings.Join(notes, "; ")
	return r
}

// judgeSeed judges a value that is one of the paper's runs of the number
// v.SeedsOf (the Rank-th lowest of its N, among its survivors, or of its
// per-seed differences with v.Minus) against the normal fitted to our runs
// of the same number (verdict.OrderStat): our seed i draws other initial
// weights than the paper's seed i, so the runs are compared as draws of
// one distribution, not seed by seed.
func judgeSeed(v *published.Value, ns map[string]*ours) Row {
	r := Row{ID: v.ID, Group: group(v.ID), Cite: v.Cite, Line: v.Line, Cause: v.Cause, Published: publishedText(v)}
	xs, why := seedValues(v, ns)
	if why != "" {
		r.Note = why
		return r
	}
	o := ns[v.SeedsOf]
	kind := o.kind
	if v.Kind != "" {
		kind, _ = verdict.ParseKind(v.Kind) // checked by published.Parse
	}
	d := max(v.Places(), 1)
	m, sd := verdict.MeanSD(xs)
	r.Ours = fmt.Sprintf("%s ± %s (n=%d)", numbers.Fixed(m, d), numbers.Fixed(sd, d), len(xs))
	j := verdict.OrderStat(verdict.Ours(m, sd, len(xs)), v.Mean, v.Rank, v.N, verdict.HalfUnit(v.Places(), v.Exponent), kind)
	r.Judgement = &j
	what := v.SeedsOf
	if v.Minus != "" {
		what += " - " + v.Minus + " (paired by seed)"
	}
	among := ""
	if v.Survivors {
		among = fmt.Sprintf(" that did not fail (below %.0f%%)", verdict.FailureBelow)
	}
	r.Note = fmt.Sprintf("one of the paper's runs, number %d from the lowest of its %d%s: against the rank-%d-of-%d run of the normal fitted to our %d runs%s of %s (our seed i is not the paper's)",
		v.Rank, v.N, among, v.Rank, v.N, len(xs), among, what)
	return r
}

// seedValues are our runs of the number a seed value ranks among (those
// that did not fail when v.Survivors says so), or their per-seed
// differences with v.Minus (the seeds where neither failed), or why there
// are none.
func seedValues(v *published.Value, ns map[string]*ours) ([]float64, string) {
	cellOf := func(id string) (*numbers.AggCell, string) { return perSeedCell(id, ns) }
	a, why := cellOf(v.SeedsOf)
	if why != "" {
		return nil, why
	}
	var b *numbers.AggCell
	if v.Minus != "" {
		if b, why = cellOf(v.Minus); why != "" {
			return nil, why
		}
	}
	var xs []float64
	for i, s := range a.Seeds {
		x := a.Values[i]
		if v.Survivors && x < verdict.FailureBelow {
			continue
		}
		if b != nil {
			k := slices.Index(b.Seeds, s)
			if k < 0 || v.Survivors && b.Values[k] < verdict.FailureBelow {
				continue
			}
			x -= b.Values[k]
		}
		xs = append(xs, x)
	}
	if len(xs) < 2 {
		return nil, fmt.Sprintf("fewer than two of our runs of %s to fit (%d)", v.SeedsOf, len(xs))
	}
	return xs, ""
}

// perSeedCell is the cell of the number id, an accuracy with its per-seed
// values, or why there is none.
func perSeedCell(id string, ns map[string]*ours) (*numbers.AggCell, string) {
	o := ns[id]
	switch {
	case o == nil || o.cell == nil || o.stat != &o.cell.Acc || o.failures:
		return nil, "no cell of this profile computes " + id
	case o.cell.Status.Kind != numbers.StatusOK:
		return nil, o.cell.Status.String()
	case len(o.cell.Values) != len(o.cell.Seeds):
		return nil, id + ": no per-seed values"
	}
	return o.cell, ""
}

// judgeExtreme judges a value that is one end of a range over rows the
// paper names (v.Over; with v.OverMinus, the per-seed differences
// v.Over[i] - v.OverMinus[i]): the same end of our rows, their means or
// (v.Spread) their seed s.d.s, under the model that the paper's rows are
// ours shifted (for s.d.s, scaled), each at the paper's n
// (verdict.ExtremeStat). Our seed i draws other initial weights than the
// paper's seed i, and the paper prints no row by itself: the rows are
// compared as distributions. A row that is a comparison's ID is its
// per-seed differences.
func judgeExtreme(v *published.Value, ns map[string]*ours) Row {
	r := Row{ID: v.ID, Group: group(v.ID), Cite: v.Cite, Line: v.Line, Cause: v.Cause, Published: publishedText(v)}
	end, _ := verdict.ParseEnd(v.Extreme) // checked by published.Parse
	d := max(v.Places(), 1)
	kind := verdict.Points
	var rows []verdict.Sample
	var ends []float64
	var each, counts []string
	failed := 0
	for i := range v.Over {
		xs, what, k, why := extremeRow(v, i, ns)
		if why != "" {
			r.Note = why
			return r
		}
		if o := ns[v.Over[i]]; len(v.OverMinus) == 0 && o.cell != nil && o.cell.Metric == "" {
			failed += verdict.CountFailures(xs)
		}
		if i == 0 {
			kind = k
		}
		m, sd := verdict.MeanSD(xs)
		rows = append(rows, verdict.Ours(m, sd, len(xs)))
		x := m
		if v.Spread {
			x = sd
		}
		ends = append(ends, x)
		counts = append(counts, strconv.Itoa(len(xs)))
		each = append(each, fmt.Sprintf("%s %s ± %s (n=%d)", what, numbers.Fixed(m, d), numbers.Fixed(sd, d), len(xs)))
	}
	if v.Kind != "" {
		kind, _ = verdict.ParseKind(v.Kind) // checked by published.Parse
	}
	of, ours := "means", slices.Max(ends)
	if end == verdict.Lowest {
		ours = slices.Min(ends)
	}
	if v.Spread {
		of = "seed s.d.s"
	}
	// Our end and each row's seed count, as a number prints in the
	// report's math (the note says what the rows are).
	r.Ours = fmt.Sprintf("%s (n=%s)", numbers.Fixed(ours, d), strings.Join(counts, ", "))
	j := verdict.ExtremeStat(rows, v.Mean, end, v.Spread, v.N, verdict.HalfUnit(v.Places(), v.Exponent), kind)
	r.Judgement = &j
	model := "ours shifted"
	if v.Spread {
		model = "ours scaled"
	}
	r.Note = fmt.Sprintf("the %s of the %s of %d rows the paper names, each over its %d runs: against the same end of ours (%s); the paper's rows %s, drawn at its n by a parametric bootstrap of ours (no row of ours is a seed-by-seed counterpart of the paper's)",
		end, of, len(rows), v.N, strings.Join(each, "; "), model)
	if failed > 0 {
		r.Note += fmt.Sprintf("; %d of our rows' runs lie below %.0f%% (severe failures, the paper's definition), which a normal spread does not describe: they widen ours", failed, verdict.FailureBelow)
	}
	return r
}

// extremeRow is our per-seed values of row i of a range's end v (the
// per-seed differences over - over_minus, paired by seed, or a
// comparison's), what the row is, and its kind of number; or why there
// are none.
func extremeRow(v *published.Value, i int, ns map[string]*ours) (xs []float64, what string, k verdict.Kind, why string) {
	id := v.Over[i]
	if o := ns[id]; o != nil && o.cmp != nil {
		if !o.cmp.Status.OK() || len(o.diffs) < 2 {
			return nil, "", 0, fmt.Sprintf("%s: %s (fewer than two paired seeds of ours)", id, o.cmp.Status)
		}
		return o.diffs, id, o.kind, ""
	}
	a, why := perSeedCell(id, ns)
	if why != "" {
		return nil, "", 0, why
	}
	k = ns[id].kind
	xs, what = a.Values, id
	if len(v.OverMinus) > 0 {
		b, why := perSeedCell(v.OverMinus[i], ns)
		if why != "" {
			return nil, "", 0, why
		}
		xs, what = seedDiffs(a, b), id+" - "+v.OverMinus[i]+" (paired by seed)"
	}
	if len(xs) < 2 {
		return nil, "", 0, fmt.Sprintf("fewer than two of our runs of %s (%d)", what, len(xs))
	}
	return xs, what, k, ""
}

// restatedText is a restatement as the paper prints it.
func restatedText(r *published.Restatement) string {
	if r.Text != "" && !strings.ContainsAny(r.Text, `\$`) {
		return r.Text
	}
	s := numbers.Fixed(r.Mean, r.Places())
	if r.SD != nil {
		s += " ± " + numbers.Fixed(*r.SD, r.Places())
	}
	return s
}

// publishedText is the published value as the paper prints it.
func publishedText(v *published.Value) string {
	d := v.Places()
	if v.Lo != nil {
		e := max(d, 1) // the paper prints its intervals to a tenth
		return fmt.Sprintf("%s [%s, %s]", numbers.Signed(v.Mean, d), numbers.Signed(*v.Lo, e), numbers.Signed(*v.Hi, e))
	}
	if v.Exponent != 0 {
		// a×10^k, as printed.
		return fmt.Sprintf("%s×10^%d", numbers.Fixed(v.Mean/math.Pow(10, float64(v.Exponent)), d), v.Exponent)
	}
	s := numbers.Fixed(v.Mean, d)
	if v.SD != nil {
		s += " ± " + numbers.Fixed(*v.SD, d)
	}
	return s
}

// judgeClaim judges every condition of claim c on our numbers.
func judgeClaim(c published.Claim, ns map[string]*ours) ClaimResult {
	cr := ClaimResult{ID: c.ID, Text: c.Text, Cite: c.Cite, Line: c.Line, Cause: c.Cause}
	kind := verdict.Points
	if c.Kind != "" {
		kind, _ = verdict.ParseKind(c.Kind) // checked by published.Parse
	}
	for _, h := range c.Holds {
		cond := ConditionResult{Text: h}
		a, op, b, err := published.ParseCondition(h)
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
		if ca, cb := ns[a], ns[b]; ca != nil && cb != nil && ca.failures && cb.failures && dir == verdict.Greater {
			// A claim about failures is a claim about counts.
			j = verdict.ClaimFailures(verdict.CountFailures(ca.cell.Values), len(ca.cell.Values), verdict.CountFailures(cb.cell.Values), len(cb.cell.Values))
		} else {
			j = verdict.Claim(x, y, dir, kind)
		}
		cond.Judgement = &j
		test := "Welch"
		switch {
		case j.Failures != nil:
			test = "Fisher's exact test of the failure counts"
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
		case o.cmp != nil && o.cmp.Status.OK() && len(o.diffs) > 0:
			m, sd := verdict.MeanSD(o.diffs)
			return verdict.Operand{Mean: m, SD: sd, N: len(o.diffs), Values: o.diffs, Seeds: o.cmp.Seeds}, ""
		case o.failures && o.cell.Status.Kind == numbers.StatusOK:
			k := float64(verdict.CountFailures(o.cell.Values))
			return verdict.Operand{Mean: k}, ""
		case o.cell != nil && o.cell.Status.Kind == numbers.StatusOK:
			op := verdict.Operand{Mean: o.stat.Mean, SD: o.stat.SD, N: o.cell.N}
			if o.stat == &o.cell.Acc && len(o.cell.Values) == len(o.cell.Seeds) {
				op.Values, op.Seeds = o.cell.Values, o.cell.Seeds
			}
			return op, ""
		case o.cell != nil:
			return verdict.Operand{}, s + ": " + o.cell.Status.String()
		}
		return verdict.Operand{}, s + ": " + string(o.cmp.Status)
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
	return numbers.Fixed(x, 1)
}

// opMean is an operand's mean, as the claims' details print it.
func opMean(s string, ns map[string]*ours) float64 {
	o, _ := operand(s, ns)
	return o.Mean
}

// paperFailures is the paper's count of severe failures (below
// verdict.FailureBelow) among the n runs behind v: stated (collapsed), or
// implied by a mean ± s.d. that leaves no room for one (inferred); known
// is false when neither says.
func paperFailures(v *published.Value, n int) (count int, known, inferred bool) {
	switch {
	case v.Collapsed != nil:
		return *v.Collapsed, true, false
	case v.SD != nil && v.Lo == nil && v.Mean > verdict.FailureBelow && verdict.NoFailuresImplied(v.Mean, *v.SD, verdict.HalfUnit(v.Places(), v.Exponent), n):
		return 0, true, true
	}
	return 0, false, false
}
