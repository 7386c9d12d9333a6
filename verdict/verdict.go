package verdict

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// Outcome is the three-way verdict of one comparison, or NotRun when our
// side has no number.
type Outcome int

// The outcomes, in the order a report lists them.
const (
	NotRun Outcome = iota
	Differs
	Inconclusive
	Agrees
)

// String is the outcome as a report prints it.
func (o Outcome) String() string {
	switch o {
	case Agrees:
		return "agrees"
	case Differs:
		return "differs"
	case Inconclusive:
		return "inconclusive"
	}
	return "not run"
}

// MarshalText writes the outcome's name (JSON reports carry the word).
func (o Outcome) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// UnmarshalText reads an outcome's name.
func (o *Outcome) UnmarshalText(b []byte) error {
	for _, x := range []Outcome{NotRun, Differs, Inconclusive, Agrees} {
		if x.String() == string(b) {
			*o = x
			return nil
		}
	}
	return fmt.Errorf("verdict: unknown outcome %q", b)
}

// Kind is what a number measures; it sets the equivalence margin.
type Kind int

// The kinds of number.
const (
	// Points: an accuracy, forgetting, duty or share in percentage
	// points (x100), or a difference of two of them.
	Points Kind = iota
	// Relative: an energy (nJ), a count (updates, events, synaptic
	// operations) or a fraction of a count: judged relative to the
	// published magnitude.
	Relative
)

// String names the kind.
func (k Kind) String() string {
	if k == Relative {
		return "relative"
	}
	return "points"
}

// The equivalence margins, chosen once, here, before any verdict was read
// (docs/verdicts.md gives the same reasons):
//
//   - PointsMargin, 1.0 percentage point: the paper's headline rows have a
//     seed s.d. of 0.2 to 1.0 points; it calls differences of 0.1 to 0.3
//     "within seed noise" and treats differences from about 1.5 points on
//     as findings (the full system "loses 1.9 at 4", isolation's margin of
//     1 to 3 points). A reproduction within one point on either side
//     changes none of the paper's statements about that number.
//   - RelativeMargin, 5% of the published magnitude: energies and counts
//     are deterministic functions of the configuration up to the seed's
//     effect on activity; the paper's energy and count contrasts are
//     factors of 1.5 or more, so 5% leaves every one of them intact.
const (
	PointsMargin   = 1.0
	RelativeMargin = 0.05
)

// Margin is the equivalence margin of a number of kind k whose published
// value is pub, in the number's own unit.
func Margin(k Kind, pub float64) float64 {
	if k == Relative {
		return RelativeMargin * math.Abs(pub)
	}
	return PointsMargin
}

// Alpha is the level of every test: the Welch test (before the
// multiplicity adjustment), the equivalence test's one-sided tests (the
// 90% interval), the F test and Fisher's test.
const Alpha = 0.05

// Sample is one side of a comparison.
type Sample struct {
	Mean float64
	// SD is the s.d. of one run (over N runs, or borrowed from another
	// configuration's seeds for a single run: DF then says how many).
	SD float64
	N  int
	// DF is the degrees of freedom of SD: N-1 for an s.d. over N runs, the
	// lender's for a borrowed one, 0 when SD is not known (a single run
	// with nothing to lend it a spread).
	DF int
	// Half is half a unit of the last printed digit: the printing's own
	// uncertainty (0 for a number we compute at full precision).
	Half float64
}

// Ours is our side: a mean and s.d. over n runs.
func Ours(mean, sd float64, n int) Sample {
	return Sample{Mean: mean, SD: sd, N: n, DF: max(n-1, 0)}
}

// Printed is the paper's side: a mean printed with decimals digits (0 for
// an integer) and, when sd is not nil, its s.d. over n runs printed the
// same way. A printed s.d. below the half unit (0.0) is the half unit.
func Printed(mean float64, sd *float64, n, decimals int) Sample {
	h := 0.5 * math.Pow(10, -float64(decimals))
	s := Sample{Mean: mean, N: max(n, 1), Half: h}
	if sd != nil {
		s.SD = math.Max(*sd, h)
		s.DF = max(n-1, 0)
	}
	return s
}

// varMean is the variance of the sample's mean, and the part of it with
// DF degrees of freedom (the rest, the printing's, is known exactly).
func (s Sample) varMean() (total, estimated float64) {
	if s.DF > 0 {
		estimated = s.SD * s.SD / float64(s.N)
	}
	return estimated + s.Half*s.Half/3, estimated
}

// Judgement is the verdict on one comparison and what it rests on.
type Judgement struct {
	Outcome Outcome
	Kind    Kind
	// Diff is ours - published; Lo, Hi its 90% interval; Margin the
	// equivalence margin it was held to.
	Diff, Lo, Hi, Margin float64
	// P is the two-sided Welch (or paired t) p value, PAdj after the
	// family's adjustment; DF the Welch-Satterthwaite degrees of freedom
	// (0 when only the printing is uncertain: normal quantiles).
	P, PAdj, DF float64
	// Paired: a one-sample t test of per-seed differences.
	Paired bool
	// Against: P is one-sided, the evidence against a claimed direction
	// (claims of > and >=).
	Against bool
	// Settle is, for an inconclusive judgement, the seeds per side that
	// would settle it at the observed difference and spreads (0: none up
	// to MaxSettle, -1: not applicable).
	Settle int
	// WiderP is the F test's p value that our spread is wider than the
	// paper's (-1 when not computed: no s.d. on one side).
	WiderP float64
	// Collapse counts, when set, the collapsed seeds on each side with
	// Fisher's exact p value.
	Collapse *Collapse
	// Note says what the judgement could not see (a single run, no spread).
	Note string
	// equivalent: the interval lies inside the margin (agrees whatever
	// the family's adjustment).
	equivalent bool
	// spread is what Settle needs: the per-run s.d. of each side and the
	// printing's known variance (Family.Settle computes Settle from it,
	// once the outcome is final).
	spread [3]float64
}

// Collapse is the collapsed seeds of each side and Fisher's exact test of
// equal collapse rates.
type Collapse struct {
	Ours, OursN, Paper, PaperN int
	P                          float64
}

// MaxSettle is the largest seed count Settle reports.
const MaxSettle = 1000

// Welch judges ours against the published sample pub for a number of kind
// k: the 90% interval of the difference against the margin, then Welch's
// test (raw p; Family.Settle adjusts it and fixes the outcome). With no
// estimated spread on either side and no printing uncertainty the test
// cannot be made: the judgement is inconclusive with a note.
func Welch(ours, pub Sample, k Kind) Judgement {
	vo, eo := ours.varMean()
	vp, ep := pub.varMean()
	se2 := vo + vp
	df := welchDF(eo, ours.DF, ep, pub.DF)
	j := Judgement{Kind: k, Diff: ours.Mean - pub.Mean, Margin: Margin(k, pub.Mean), DF: df, Settle: -1, WiderP: -1}
	if ours.DF > 0 && pub.DF > 0 {
		j.WiderP = widerP(ours, pub)
	}
	j.decide(math.Sqrt(se2))
	j.spread = [3]float64{ours.SD, pub.SD, ours.Half*ours.Half/3 + pub.Half*pub.Half/3}
	return j
}

// Paired judges a mean of per-seed differences d (ours, paired by seed)
// against a published difference pub, printed with decimals digits and,
// when lo and hi are set, its 95% interval (whose half width over 1.96
// stands in for the paper's standard error: the paper's intervals are
// bootstrap percentiles of a mean over n seeds).
func Paired(d []float64, pub float64, lo, hi *float64, decimals int) Judgement {
	n := len(d)
	m, sd := MeanSD(d)
	h := 0.5 * math.Pow(10, -float64(decimals))
	vo := 0.0
	if n > 1 {
		vo = sd * sd / float64(n)
	}
	vp := h * h / 3
	if lo != nil && hi != nil {
		se := (*hi - *lo) / (2 * 1.959963984540054)
		vp += se * se
	}
	j := Judgement{Kind: Points, Diff: m - pub, Margin: PointsMargin, Paired: true, Settle: -1, WiderP: -1}
	j.DF = math.Inf(1)
	if n > 1 {
		// The paper's interval is treated as known (its s.e. over six
		// seeds): the degrees of freedom are ours, widened by Welch's
		// formula as if the paper's side had as many.
		j.DF = welchDF(vo, n-1, vp-h*h/3, n-1)
	}
	j.decide(math.Sqrt(vo + vp))
	j.spread = [3]float64{sd, math.Sqrt(max(vp-h*h/3, 0) * float64(max(n, 1))), h * h / 3}
	if n < 2 {
		j.Note = "a single paired seed: no spread of our own"
	}
	return j
}

// decide sets the interval, the raw p value and the provisional outcome
// (agrees, or inconclusive until the family adjusts the p value).
func (j *Judgement) decide(se float64) {
	t90 := tQuantile(0.95, j.DF)
	j.Lo, j.Hi = j.Diff-t90*se, j.Diff+t90*se
	j.equivalent = j.Lo >= -j.Margin && j.Hi <= j.Margin
	switch {
	case se == 0 && j.Diff == 0:
		j.P = 1
	case se == 0:
		j.P = 0
	default:
		j.P = 2 * tSF(math.Abs(j.Diff)/se, j.DF)
	}
	j.provisional()
}

// provisional sets the outcome from the interval and the raw p value
// (the family's adjustment may then withdraw a differs) and makes DF fit
// for JSON.
func (j *Judgement) provisional() {
	j.PAdj = j.P
	if math.IsInf(j.DF, 1) {
		j.DF = 0 // known exactly; JSON has no infinity
	}
	j.Outcome = Inconclusive
	switch {
	case j.equivalent:
		j.Outcome = Agrees
	case j.P < Alpha:
		j.Outcome = Differs
	}
}

// welchDF is the Welch-Satterthwaite degrees of freedom of a sum of two
// estimated variances of means (v over df each); +Inf when neither is
// estimated (only the printing is uncertain, and that is known).
func welchDF(v1 float64, df1 int, v2 float64, df2 int) float64 {
	num, den := 0.0, 0.0
	for _, c := range []struct {
		v  float64
		df int
	}{{v1, df1}, {v2, df2}} {
		if c.df > 0 && c.v > 0 {
			num += c.v
			den += c.v * c.v / float64(c.df)
		}
	}
	if den == 0 {
		// One side with an s.d. of exactly zero over its seeds and the
		// other without any: the smaller of the two counts, or none.
		lo := 0
		for _, d := range []int{df1, df2} {
			if d > 0 && (lo == 0 || d < lo) {
				lo = d
			}
		}
		if lo == 0 {
			return math.Inf(1)
		}
		return float64(lo)
	}
	return num * num / den
}

// tQuantile is the p quantile of Student's t with df degrees of freedom
// (the normal's for df = +Inf).
func tQuantile(p, df float64) float64 {
	if math.IsInf(df, 1) {
		return distuv.UnitNormal.Quantile(p)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// tSF is the upper tail P(T > t) of Student's t with df degrees of freedom.
func tSF(t, df float64) float64 {
	if math.IsInf(df, 1) {
		return distuv.UnitNormal.Survival(t)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)
}

// widerP is the F test's p value that ours has a wider spread than pub.
func widerP(ours, pub Sample) float64 {
	if pub.SD == 0 {
		if ours.SD == 0 {
			return 1
		}
		return 0
	}
	f := ours.SD * ours.SD / (pub.SD * pub.SD)
	return distuv.F{D1: float64(ours.DF), D2: float64(pub.DF)}.Survival(f)
}

// settle is the seeds per side (the same on both) at which the observed
// difference d with per-run spreads so, sp (and the printing's known
// variance r) would be judged agrees, or differs at the test level level
// (the family's adjusted one); 0 when no count up to MaxSettle would.
func settle(d, so, sp, r, margin, level float64) int {
	ok := func(n int) bool {
		se := math.Sqrt((so*so+sp*sp)/float64(n) + r)
		df := float64(2*n - 2)
		if math.Abs(d)+tQuantile(0.95, df)*se <= margin {
			return true
		}
		return se > 0 && 2*tSF(math.Abs(d)/se, df) < level
	}
	// Both conditions get easier as n grows (the standard error falls):
	// bisect for the first n that meets one.
	if !ok(MaxSettle) {
		return 0
	}
	lo, hi := 1, MaxSettle // ok(hi), and lo is below every n tried
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if ok(mid) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return hi
}

// MeanSD is the mean and sample s.d. of xs (s.d. 0 for fewer than two).
func MeanSD(xs []float64) (mean, sd float64) {
	if len(xs) == 0 {
		return 0, 0
	}
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	ss := 0.0
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

// String states the judgement's numbers in one line of plain text: the
// difference with its 90% interval against the margin, the test's p value
// (raw and adjusted), the seeds that would settle it, the spreads' F test
// when ours is wider, and the collapse counts.
func (j Judgement) String() string {
	prec := 1
	if j.Kind == Relative || math.Abs(j.Diff) < 0.1 && j.Margin < 0.1 {
		prec = 3
	}
	// Rates and decays of order 1e-3 and below would print as 0.0 with a
	// fixed number of decimals: they get two significant digits.
	scale := math.Max(math.Abs(j.Diff), math.Max(math.Abs(j.Lo), math.Abs(j.Hi)))
	f := func(x float64) string {
		if scale > 0 && scale < 0.5*math.Pow(10, -float64(prec)) {
			return fmt.Sprintf("%+.2g", x)
		}
		return fmt.Sprintf("%+.*f", prec, x)
	}
	if c := j.Collapse; c != nil && j.spread[0] < 0 {
		return fmt.Sprintf("collapsed runs %d/%d against %d/%d; Fisher p = %.2g (BH %.2g)", c.Ours, c.OursN, c.Paper, c.PaperN, j.P, j.PAdj)
	}
	test := "Welch"
	if j.Paired {
		test = "paired t"
	}
	df := "known variance"
	if j.DF > 0 {
		df = fmt.Sprintf("df %.1f", j.DF)
	}
	if j.Against {
		test += " p against the claim"
	} else {
		test += " p"
	}
	s := fmt.Sprintf("d %s, 90%% [%s, %s] vs ±%.*f; %s = %.2g (BH %.2g, %s)", f(j.Diff), f(j.Lo), f(j.Hi), prec, j.Margin, test, j.P, j.PAdj, df)
	switch {
	case j.Outcome == Inconclusive && j.Settle > 0:
		s += fmt.Sprintf("; settles at about %d seeds per side", j.Settle)
	case j.Outcome == Inconclusive && j.Settle == 0:
		s += fmt.Sprintf("; no seed count up to %d settles it", MaxSettle)
	}
	if c := j.Collapse; c != nil {
		if c.PaperN > 0 {
			s += fmt.Sprintf("; collapsed seeds: ours %d/%d, paper %d/%d, Fisher p = %.2g", c.Ours, c.OursN, c.Paper, c.PaperN, c.P)
		} else {
			s += fmt.Sprintf("; collapsed seeds: ours %d/%d (the paper states no count)", c.Ours, c.OursN)
		}
	}
	return s
}
