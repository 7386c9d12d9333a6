package verdict

import (
	"math"
	"sort"
)

// Family is the tests one report makes: their p values (every mean's,
// every spread's, every count of failures) are adjusted together by
// Benjamini-Hochberg before any differs is final.
//
// Why Benjamini-Hochberg: the report is a screen of several hundred
// numbers, each differs being a finding to follow up. Controlling the
// false discovery rate at 5% keeps the expected share of false findings
// among the differs at 5%; a familywise correction (Holm) over ~400 tests
// would demand p < 1.3e-4 of a six-seed comparison, so that a number from
// three seeds could almost never be said to differ however far off it is.
type Family struct {
	members []*Judgement
}

// Add puts j in the family; its outcome is provisional until Settle. A
// comparison restated elsewhere is added once.
func (f *Family) Add(j *Judgement) { f.members = append(f.members, j) }

// Settle adjusts every test's p value (Benjamini-Hochberg step-up over the
// family's means, spreads and failure counts) and fixes the outcomes:
//
//   - differs: the mean's adjusted p is below Alpha, or the spreads' or
//     the failures' is (In says which); a differing spread or failure
//     count withdraws an agrees;
//   - agrees: the interval lies inside the margin (and a claimed sign is
//     shown) and neither the spread nor the failures differ;
//   - inconclusive otherwise, with its Reason: the seeds of ours that
//     would settle it (MoreSeeds, Settle), or none would (PaperUncertain).
func (f *Family) Settle() {
	type test struct {
		p   float64
		set func(float64)
	}
	var tests []test
	for _, j := range f.members {
		if j.Outcome == NotRun || j.Reason == NoNoiseModel {
			continue
		}
		tests = append(tests, test{j.P, func(a float64) { j.PAdj = a }})
		if s := j.Spread; s != nil {
			tests = append(tests, test{s.P, func(a float64) { s.PAdj = a }})
		}
		if c := j.Failures; c != nil && c.PaperKnown {
			tests = append(tests, test{c.P, func(a float64) { c.PAdj = a }})
		}
	}
	ps := make([]float64, len(tests))
	for i, t := range tests {
		ps[i] = t.p
	}
	for i, a := range BH(ps) {
		tests[i].set(a)
	}
	for _, j := range f.members {
		if j.Outcome == NotRun || j.Reason == NoNoiseModel {
			continue
		}
		j.final()
	}
}

// final fixes the outcome once the adjusted p values are known.
func (j *Judgement) final() {
	j.In, j.Reason, j.Settle = nil, NoReason, -1
	if !j.equivalent && j.PAdj < Alpha {
		j.In = append(j.In, j.aspect)
	}
	if s := j.Spread; s != nil && s.PAdj < Alpha {
		j.In = append(j.In, InSpread)
	}
	if c := j.Failures; c != nil && c.PaperKnown && c.PAdj < Alpha {
		j.In = append(j.In, InFailures)
	}
	switch {
	case len(j.In) > 0:
		j.Outcome = Differs
	case j.equivalent:
		j.Outcome = Agrees
	default:
		j.Outcome = Inconclusive
		j.Reason = MoreSeeds
		if j.aspect == InFailures {
			j.Reason = FewRuns
		}
		if j.settle != nil {
			// The level this test had to meet after the adjustment
			// (BH's rank/m share of Alpha, which is p/PAdj).
			level := Alpha
			if j.PAdj > 0 && j.P > 0 {
				level = Alpha * j.P / j.PAdj
			}
			if n := seedsToSettle(j.settle, level); n > 0 {
				j.Reason, j.Settle = MoreSeeds, n
			} else {
				j.Reason = PaperUncertain
			}
		}
	}
	j.certify()
}

// certify sets Certified, the tightest margin the data certify.
func (j *Judgement) certify() {
	lo, hi := math.Abs(j.Lo), math.Abs(j.Hi)
	switch {
	case j.Outcome == Differs && len(j.In) > 0 && j.In[0] == InMean && j.Lo*j.Hi > 0:
		j.Certified = math.Min(lo, hi)
	default:
		j.Certified = math.Max(lo, hi)
	}
}

// BH returns the Benjamini-Hochberg adjusted p values of ps (in their
// order): p_(i) m / i, made monotone from the largest down, capped at 1.
func BH(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return ps[idx[a]] < ps[idx[b]] })
	out := make([]float64, m)
	run := 1.0
	for r := m - 1; r >= 0; r-- {
		i := idx[r]
		run = math.Min(run, ps[i]*float64(m)/float64(r+1))
		out[i] = run
	}
	return out
}
