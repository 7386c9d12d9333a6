package verdict

import (
	"fmt"
	"math"
	"strings"
)

// String states the judgement's numbers in one line of plain text: the
// difference with its 90% interval against the margin, the test's p value
// (raw and adjusted), the spread's and the failures' tests, and what would
// settle an inconclusive one.
func (j Judgement) String() string {
	f := j.formatter()
	if c := j.Failures; c != nil && j.aspect == InFailures {
		return fmt.Sprintf("failed runs (below %.0f%%) %d/%d against %d/%d; Fisher p = %.2g (BH %.2g)", FailureBelow, c.Ours, c.OursN, c.Paper, c.PaperN, j.P, j.PAdj)
	}
	if j.Reason == NoNoiseModel {
		return fmt.Sprintf("d %s; %s", f(j.Diff), j.Note)
	}
	test := "Welch"
	switch {
	case j.Paired:
		test = "paired t"
	case j.Rank != nil:
		test = fmt.Sprintf("run %d of %d (lowest first) against ours", j.Rank.Rank, j.Rank.Of)
	case j.Extreme != nil:
		of := "means"
		if j.Extreme.Spread {
			of = "s.d.s"
		}
		test = fmt.Sprintf("the %s of %d rows' %s against ours", j.Extreme.End, j.Extreme.Rows, of)
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
	margin := "±" + strings.TrimPrefix(f(j.Margin), "+")
	if j.Kind == Exact {
		margin = "the printing ±" + strings.TrimPrefix(f(j.Margin), "+")
	}
	s := fmt.Sprintf("d %s, 90%% [%s, %s] vs %s; %s = %.2g (BH %.2g, %s)", f(j.Diff), f(j.Lo), f(j.Hi), margin, test, j.P, j.PAdj, df)
	if j.Signed && !j.SignShown {
		s += "; the published sign is not shown by ours"
	}
	if sp := j.Spread; sp != nil {
		s += fmt.Sprintf("; spread s.d. %s vs %s, F p = %.2g (BH %.2g)", strings.TrimPrefix(f(sp.Ours), "+"), strings.TrimPrefix(f(sp.Paper), "+"), sp.P, sp.PAdj)
	}
	if c := j.Failures; c != nil {
		switch {
		case c.PaperKnown && c.Inferred:
			s += fmt.Sprintf("; failed runs (below %.0f%%) ours %d/%d, paper %d/%d (implied by its mean and s.d.), Fisher p = %.2g (BH %.2g)", FailureBelow, c.Ours, c.OursN, c.Paper, c.PaperN, c.P, c.PAdj)
		case c.PaperKnown:
			s += fmt.Sprintf("; failed runs (below %.0f%%) ours %d/%d, paper %d/%d, Fisher p = %.2g (BH %.2g)", FailureBelow, c.Ours, c.OursN, c.Paper, c.PaperN, c.P, c.PAdj)
		default:
			s += fmt.Sprintf("; failed runs (below %.0f%%) ours %d/%d (the paper's count is not known)", FailureBelow, c.Ours, c.OursN)
		}
	}
	if r := j.ReasonText(); r != "" {
		s += "; " + r
	}
	return s
}

// ReasonText says why an inconclusive one is, and who could settle it.
func (j Judgement) ReasonText() string {
	if j.Outcome != Inconclusive {
		return ""
	}
	switch j.Reason {
	case MoreSeeds:
		if j.Settle > MaxSettle {
			return fmt.Sprintf("our seeds would settle it only beyond %d", MaxSettle)
		}
		if j.Settle > 0 {
			return fmt.Sprintf("settles at about %d of our seeds", j.Settle)
		}
		return "more of our seeds would settle it"
	case PaperUncertain:
		return "no count of our seeds settles it: the published value's own uncertainty is too wide for the margin"
	case FewRuns:
		return "too few runs to show equal rates"
	case NoNoiseModel:
		return "single run, no noise model"
	}
	return ""
}

// Certificate is the tightest margin the data certify, in words:
// "agrees within ±0.4", "differs by at least 2.1", "allows a difference
// up to ±3.0".
func (j Judgement) Certificate() string {
	f := j.formatter()
	c := strings.TrimPrefix(f(j.Certified), "+")
	switch {
	case j.Outcome == Agrees:
		return "agrees within ±" + c
	case j.Outcome == Differs && len(j.In) > 0 && j.In[0] == InMean && j.Lo*j.Hi > 0:
		return "differs by at least " + c
	case j.Outcome == Differs:
		return "differs in " + j.InText()
	case j.Outcome == Inconclusive && j.Reason != NoNoiseModel:
		return "allows a difference up to ±" + c
	}
	return ""
}

// InText names what a differs is about ("mean", "spread and failures").
func (j Judgement) InText() string {
	var ws []string
	for _, a := range j.In {
		ws = append(ws, a.String())
	}
	return strings.Join(ws, " and ")
}

// formatter prints the judgement's numbers: one decimal for points,
// three for relative and exact ones (or whole units when they are
// large), two significant digits when that would print 0.0.
func (j Judgement) formatter() func(float64) string {
	prec := 1
	switch {
	case j.Kind == Exact && j.Margin > 0:
		prec = max(0, int(-math.Floor(math.Log10(2*j.Margin)+1e-9)))
	case j.Kind != Points && j.Margin > 0:
		prec = max(0, int(-math.Floor(math.Log10(j.Margin)))+1)
	case j.Kind != Points || math.Abs(j.Diff) < 0.1 && j.Margin < 0.1:
		prec = 3
	}
	scale := math.Max(math.Abs(j.Diff), math.Max(math.Abs(j.Lo), math.Abs(j.Hi)))
	return func(x float64) string {
		if scale > 0 && scale < 0.5*math.Pow(10, -float64(prec)) {
			return fmt.Sprintf("%+.2g", x)
		}
		return fmt.Sprintf("%+.*f", prec, x)
	}
}

// Interval is the width of the judgement's 90% interval.
func (j Judgement) Interval() float64 { return j.Hi - j.Lo }
