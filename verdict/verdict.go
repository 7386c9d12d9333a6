package verdict

import (
	"fmt"
	"math"
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

// Aspect is what a differs is about: the means, the seeds' spread, or
// the count of severe failures.
type Aspect int

// The aspects of a comparison.
const (
	InMean Aspect = iota
	InSpread
	InFailures
)

// String names the aspect as a report prints it.
func (a Aspect) String() string {
	return [...]string{"mean", "spread", "failures"}[a]
}

// MarshalText writes the aspect's name.
func (a Aspect) MarshalText() ([]byte, error) { return []byte(a.String()), nil }

// UnmarshalText reads an aspect's name.
func (a *Aspect) UnmarshalText(b []byte) error {
	for _, x := range []Aspect{InMean, InSpread, InFailures} {
		if x.String() == string(b) {
			*a = x
			return nil
		}
	}
	return fmt.Errorf("verdict: unknown aspect %q", b)
}

// Reason says why a comparison is inconclusive, and so who could settle
// it: more of our seeds, or nothing we run.
type Reason int

// The reasons an outcome is inconclusive.
const (
	// NoReason: the outcome is not inconclusive.
	NoReason Reason = iota
	// MoreSeeds: more of our seeds would settle it (Judgement.Settle says
	// how many, the paper's side held as printed).
	MoreSeeds
	// PaperUncertain: no count of our seeds settles it: the published
	// value's own uncertainty (its seeds, its printing) is too wide for
	// the margin, and the observed gap too small to exceed it.
	PaperUncertain
	// NoNoiseModel: a single published run against a single run of ours
	// with no declared source of seed noise: nothing to judge a
	// difference against.
	NoNoiseModel
	// FewRuns: a count of failures over so few runs that equal rates
	// cannot be shown, only different ones.
	FewRuns
)

var reasonNames = [...]string{"", "more seeds", "paper uncertain", "no noise model", "few runs"}

// String names the reason.
func (r Reason) String() string { return reasonNames[r] }

// MarshalText writes the reason's name.
func (r Reason) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// UnmarshalText reads a reason's name.
func (r *Reason) UnmarshalText(b []byte) error {
	for i, n := range reasonNames {
		if n == string(b) {
			*r = Reason(i)
			return nil
		}
	}
	return fmt.Errorf("verdict: unknown reason %q", b)
}

// Alpha is the level of every test: the Welch test (before the
// multiplicity adjustment), the equivalence test's one-sided tests (the
// 90% interval), the F test of the spreads and Fisher's test.
const Alpha = 0.05

// Sample is one side of a comparison.
type Sample struct {
	Mean float64
	// SD is the s.d. of one run: over the N runs the mean is of, or
	// borrowed from other runs (Lender names them; DF is then the
	// lender's degrees of freedom).
	SD float64
	N  int
	// DF is the degrees of freedom of SD: N-1 for an s.d. over N runs, the
	// lender's for a borrowed one, 0 when SD is not estimated (none is
	// known, or it is known exactly).
	DF int
	// Half is half a unit of the last printed digit: the printing's own
	// uncertainty (0 for a number we compute at full precision).
	Half float64
	// Lender is where a borrowed SD comes from ("" when SD is the
	// sample's own). A borrowed spread is never tested against the other
	// side's.
	Lender string
	// Shared: the borrowed SD is the other side's own estimate (or both
	// sides borrow it from one lender): the two sides' estimated variances
	// are one estimate, with the other side's degrees of freedom, not two.
	Shared bool
}

// Ours is our side: a mean and s.d. over n runs.
func Ours(mean, sd float64, n int) Sample {
	return Sample{Mean: mean, SD: sd, N: n, DF: max(n-1, 0)}
}

// HalfUnit is the printing's half unit of a number printed with decimals
// digits after the point, times 10^exponent (a number printed as
// 1.2×10^5: decimals 1, exponent 5, half unit 5,000).
func HalfUnit(decimals, exponent int) float64 {
	return 0.5 * math.Pow(10, float64(exponent-decimals))
}

// Printed is the paper's side: a mean printed with half unit half and,
// when sd is not nil, its s.d. over n runs printed the same way (an s.d.
// printed below the half unit, 0.0, is the half unit). Without an s.d. the
// sample's spread is unknown until one is lent (Borrow).
func Printed(mean float64, sd *float64, n int, half float64) Sample {
	s := Sample{Mean: mean, N: max(n, 1), Half: half}
	if sd != nil {
		s.SD = math.Max(*sd, half)
		s.DF = max(n-1, 0)
	}
	return s
}

// Borrow gives s the per-run spread sd with df degrees of freedom from
// lender: the spread of the same quantity printed elsewhere.
func (s Sample) Borrow(sd float64, df int, lender string) Sample {
	s.SD, s.DF, s.Lender = sd, df, lender
	return s
}

// BorrowShared gives s the other side's own spread estimate (sd with df
// degrees of freedom, from lender): the two sides' variances are then one
// estimate.
func (s Sample) BorrowShared(sd float64, df int, lender string) Sample {
	s = s.Borrow(sd, df, lender)
	s.Shared = true
	return s
}

// varMean is the variance of the sample's mean, and the part of it that
// is estimated (with DF degrees of freedom); the rest, the printing's and
// a spread known exactly, is known.
func (s Sample) varMean() (total, estimated float64) {
	v := s.SD * s.SD / float64(max(s.N, 1))
	if s.DF > 0 {
		estimated = v
	}
	return v + s.Half*s.Half/3, estimated
}

// hasSpread says whether the sample's spread is known or estimated at
// all: a single run with nothing lent to it has none.
func (s Sample) hasSpread() bool { return s.SD > 0 || s.DF > 0 }

// Judgement is the verdict on one comparison and what it rests on.
type Judgement struct {
	Outcome Outcome
	Kind    Kind
	// In is what a differs is about (the mean, the spread, the failures;
	// empty unless Outcome is Differs).
	In []Aspect `json:",omitempty"`
	// Reason is why an inconclusive is one (NoReason otherwise).
	Reason Reason
	// Diff is ours - published; Lo, Hi its 90% interval; Margin the
	// equivalence margin it was held to.
	Diff, Lo, Hi, Margin float64
	// Certified is the tightest margin the data certify: for agrees, the
	// half width within which the difference lies ("agrees within
	// ±Certified"); for a differs in the mean, the least difference
	// ("differs by at least Certified"); for inconclusive, the largest
	// difference the data still allow.
	Certified float64
	// P is the two-sided Welch p value (one-sided against a claim), PAdj
	// after the family's adjustment; DF the Welch-Satterthwaite degrees of
	// freedom (0 when every variance is known: normal quantiles).
	P, PAdj, DF float64
	// Paired: a difference of per-seed pairs against a published
	// difference.
	Paired bool
	// Signed: the published value claims a sign (its interval excludes
	// zero), so agreement needs ours to show the same sign; SignShown
	// whether it does (our own one-sided 95% bound).
	Signed    bool `json:",omitempty"`
	SignShown bool `json:",omitempty"`
	// Against: P is one-sided, the evidence against a claimed direction
	// (claims of > and >=).
	Against bool
	// Settle is, for an inconclusive judgement with Reason MoreSeeds, the
	// seeds of ours that would settle it at the observed difference and
	// spreads, the paper's side as printed (-1: not applicable).
	Settle int
	// Spread is the F test of the two sides' spreads (nil when one side
	// has no s.d. of its own).
	Spread *SpreadTest `json:",omitempty"`
	// Failures counts the severe failures of each side with Fisher's
	// exact test (nil when not counted).
	Failures *Failures `json:",omitempty"`
	// Rank: the published value is one of the paper's runs, printed by
	// itself (OrderStat; nil otherwise).
	Rank *Rank `json:",omitempty"`
	// Extreme: the published value is one end of a range over rows the
	// paper names (ExtremeStat; nil otherwise).
	Extreme *Extreme `json:",omitempty"`
	// Note says what the judgement could not see.
	Note string
	// equivalent: the interval lies inside the margin (agrees unless the
	// spread or the failures differ).
	equivalent bool
	// settle is what Settle needs once the outcome is final.
	settle settler
	// aspect is what the judgement's own test is about (InFailures for a
	// count of failures).
	aspect Aspect
}

// SpreadTest is the two-sided F test of equal per-run spreads, the
// printed s.d. taken at the end of its printing least favourable to a
// difference.
type SpreadTest struct {
	Ours, Paper float64
	P, PAdj     float64
	// Wider: ours is the wider.
	Wider bool
}

// MaxSettle is the largest seed count Settle reports.
const MaxSettle = 1000

// Welch judges ours against the published sample pub for a number of kind
// k: the 90% interval of the difference against the margin, Welch's test
// (raw p; Family.Settle adjusts it and fixes the outcome) and, where both
// sides have a spread of their own, the F test of the spreads. A single
// published run against a single run of ours with no spread on either side
// is inconclusive: no noise model. A number of kind Exact is judged by
// Exact.
func Welch(ours, pub Sample, k Kind) Judgement {
	if k == Exact {
		return exact(ours, pub)
	}
	j := Judgement{Kind: k, Diff: ours.Mean - pub.Mean, Margin: Margin(k, pub.Mean, pub.Half), Settle: -1}
	if !ours.hasSpread() && !pub.hasSpread() {
		j.noNoiseModel()
		return j
	}
	j.welch(ours, pub)
	if ours.Lender == "" && pub.Lender == "" && ours.DF > 0 && pub.DF > 0 {
		j.Spread = spreadTest(ours, pub)
	}
	return j
}

// Paired judges our per-seed differences d (ours, paired by seed) against
// the published difference pub. The published side carries its printed
// 95% interval, or a spread lent to it (Sample.Borrow): without either,
// ours. A published difference whose own interval excludes zero claims a
// sign: ours agrees only when it shows the same sign.
func Paired(d []float64, pub Sample) Judgement { return PairedKind(d, pub, Points) }

// PairedKind is Paired for a difference of numbers of kind k (a relative
// diagnostic's difference is held to k's margin).
func PairedKind(d []float64, pub Sample, k Kind) Judgement {
	m, sd := MeanSD(d)
	ours := Ours(m, sd, len(d))
	if !pub.hasSpread() && len(d) > 1 {
		pub = pub.BorrowShared(sd, len(d)-1, "our per-seed differences")
	}
	j := Judgement{Kind: k, Diff: ours.Mean - pub.Mean, Margin: Margin(k, pub.Mean, pub.Half), Paired: true, Settle: -1}
	if !ours.hasSpread() && !pub.hasSpread() {
		j.noNoiseModel()
		j.Note = "a single paired seed and no published interval: no spread on either side"
		return j
	}
	// The paper's own 95% interval (printed or modelled) says whether it
	// claims a sign.
	vp, ep := pub.varMean()
	dfp := math.Inf(1)
	if ep > 0 {
		dfp = welchDF(vp, ep, float64(pub.DF), 0, 0)
	}
	j.Signed = pub.Mean != 0 && math.Abs(pub.Mean) > tQuantile(0.975, dfp)*math.Sqrt(vp)
	j.welch(ours, pub)
	if len(d) < 2 && j.Note == "" {
		j.Note = "a single paired seed: no spread of our own"
	}
	return j
}

// PairedInterval is the published side of a paired difference printed as
// mean [lo, hi] (a 95% interval over n seeds, bootstrap or t: its half
// width over the normal quantile is the standard error of the mean, with
// n-1 degrees of freedom).
func PairedInterval(mean, lo, hi float64, n int, half float64) Sample {
	se := (hi - lo) / (2 * 1.959963984540054)
	n = max(n, 2)
	return Sample{Mean: mean, SD: se * math.Sqrt(float64(n)), N: n, DF: n - 1, Half: half}
}

// welch sets the interval, the raw p value and the provisional outcome of
// a comparison of two samples with a spread.
func (j *Judgement) welch(ours, pub Sample) {
	vo, eo := ours.varMean()
	vp, ep := pub.varMean()
	shared := pub.Shared || ours.Shared
	if shared {
		// One estimate of the spread on both sides.
		j.DF = welchDF(vo+vp, eo+ep, float64(max(ours.DF, pub.DF)), 0, 0)
	} else {
		j.DF = welchDF(vo+vp, eo, float64(ours.DF), ep, float64(pub.DF))
	}
	// Our own one-sided bound for a claimed sign.
	if j.Signed {
		dfO := math.Inf(1)
		if eo > 0 {
			dfO = float64(ours.DF)
		}
		j.SignShown = ours.Mean*pub.Mean > 0 && math.Abs(ours.Mean) > tQuantile(0.95, dfO)*math.Sqrt(vo)
	}
	j.decide(math.Sqrt(vo + vp))
	j.settle = &settleInput{d: j.Diff, sdOurs: ours.SD, estOurs: ours.DF > 0,
		kOurs: ours.Half * ours.Half / 3, vOther: vp, eOther: ep, dfOther: float64(pub.DF), shared: shared,
		margin: j.Margin, dir: Similar, signed: j.Signed, pubMean: pub.Mean}
}

// decide sets the interval, the raw p value and the provisional outcome
// (agrees, or inconclusive until the family adjusts the p value).
func (j *Judgement) decide(se float64) {
	t90 := tQuantile(0.95, j.DF)
	j.Lo, j.Hi = j.Diff-t90*se, j.Diff+t90*se
	j.equivalent = j.Lo >= -j.Margin && j.Hi <= j.Margin && (!j.Signed || j.SignShown)
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
	j.In = nil
	switch {
	case j.equivalent:
		j.Outcome = Agrees
	case j.P < Alpha:
		j.Outcome = Differs
		j.In = []Aspect{j.aspect}
	}
}

// noNoiseModel makes j a comparison of two single runs with no spread on
// either side: inconclusive, never differs, and out of the family.
func (j *Judgement) noNoiseModel() {
	j.Outcome, j.Reason, j.P, j.PAdj = Inconclusive, NoNoiseModel, 1, 1
	j.Lo, j.Hi = j.Diff, j.Diff
	j.Certified = math.Abs(j.Diff)
	j.Note = "inconclusive: single run, no noise model (one run on each side and no declared source of seed noise)"
}

// exact judges a number of kind Exact: the published value states it to
// within its printing, [pub - Half, pub + Half]; ours, a mean over seeds
// that should all give one value, agrees when it lies inside (its own 90%
// interval, when its seeds spread), differs when it lies outside.
func exact(ours, pub Sample) Judgement {
	h := pub.Half
	j := Judgement{Kind: Exact, Diff: ours.Mean - pub.Mean, Margin: h, Settle: -1}
	vo, eo := ours.varMean()
	se := math.Sqrt(vo)
	j.DF = math.Inf(1)
	if eo > 0 {
		j.DF = float64(ours.DF)
	}
	t90 := tQuantile(0.95, j.DF)
	j.Lo, j.Hi = j.Diff-t90*se, j.Diff+t90*se
	const tol = 1e-9
	j.equivalent = j.Lo >= -h*(1+tol)-tol && j.Hi <= h*(1+tol)+tol
	gap := math.Abs(j.Diff) - h
	switch {
	case gap <= 0:
		j.P = 1
	case se == 0:
		j.P = 0
	default:
		j.P = 2 * tSF(gap/se, j.DF)
	}
	j.provisional()
	if ours.SD > 0 {
		j.Note = fmt.Sprintf("an exact count whose seeds spread (s.d. %.3g): judged on our mean's interval", ours.SD)
	}
	return j
}
