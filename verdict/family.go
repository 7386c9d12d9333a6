package verdict

import (
	"math"
	"slices"
	"sort"
)

// Family is the tests one report makes: their p values are adjusted
// together by Benjamini-Hochberg before any differs is final.
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

// Add puts j in the family; its outcome is provisional until Settle.
func (f *Family) Add(j *Judgement) { f.members = append(f.members, j) }

// Settle adjusts every member's p value (Benjamini-Hochberg step-up) and
// fixes the outcomes: agrees stays; differs needs the adjusted p value
// below Alpha; the rest are inconclusive, with the seeds that would
// settle them.
func (f *Family) Settle() {
	adj := BH(pvalues(f.members))
	for i, j := range f.members {
		j.PAdj = adj[i]
		if j.Outcome == Agrees || j.Outcome == NotRun {
			continue
		}
		if j.PAdj < Alpha {
			j.Outcome = Differs
			j.Settle = -1
		} else {
			j.Outcome = Inconclusive
			// The level this test had to meet after the adjustment
			// (BH's rank/m share of Alpha, which is p/PAdj).
			level := Alpha
			if j.PAdj > 0 && j.P > 0 {
				level = Alpha * j.P / j.PAdj
			}
			if j.spread[0] < 0 {
				continue // a collapse count: no seed count is computed
			}
			j.Settle = settle(j.Diff, j.spread[0], j.spread[1], j.spread[2], j.Margin, level)
		}
	}
}

func pvalues(js []*Judgement) []float64 {
	out := make([]float64, len(js))
	for i, j := range js {
		out[i] = j.P
		if j.Outcome == NotRun {
			out[i] = 1
		}
	}
	return out
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

// CollapseDrop is how far below the median of its row's seeds a seed must
// fall to count as collapsed: 10 accuracy points. The paper's healthy rows
// spread by at most 1.6 points (s.d.), and every seed it calls failed lies
// 20 or more points below its peers, so 10 points separates the two with
// room on both sides.
const CollapseDrop = 10.0

// Collapsed counts the values more than CollapseDrop below their median.
func Collapsed(values []float64) int {
	if len(values) < 2 {
		return 0
	}
	s := slices.Clone(values)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	n := 0
	for _, v := range values {
		if v < med-CollapseDrop {
			n++
		}
	}
	return n
}

// Fisher is the two-sided p value of Fisher's exact test of the 2x2 table
// [[a, b], [c, d]] (rows: ours, the paper's; columns: collapsed, healthy):
// the probability, under equal rates and the observed margins, of a table
// at most as likely as the one observed.
func Fisher(a, b, c, d int) float64 {
	r1, c1, n := a+b, a+c, a+b+c+d
	lo, hi := max(0, c1-(n-r1)), min(r1, c1)
	p := func(x int) float64 {
		return math.Exp(lchoose(r1, x) + lchoose(n-r1, c1-x) - lchoose(n, c1))
	}
	obs := p(a)
	sum := 0.0
	for x := lo; x <= hi; x++ {
		if px := p(x); px <= obs*(1+1e-7) {
			sum += px
		}
	}
	return math.Min(sum, 1)
}

func lchoose(n, k int) float64 {
	a, _ := math.Lgamma(float64(n + 1))
	b, _ := math.Lgamma(float64(k + 1))
	c, _ := math.Lgamma(float64(n - k + 1))
	return a - b - c
}

// CollapseTest counts ours (per-seed values) against the paper's stated
// count of collapsed runs out of paperN, with Fisher's exact p.
func CollapseTest(ours []float64, paper, paperN int) *Collapse {
	k := Collapsed(ours)
	return &Collapse{Ours: k, OursN: len(ours), Paper: paper, PaperN: paperN,
		P: Fisher(k, len(ours)-k, paper, paperN-paper)}
}

// CollapseCount judges our collapsed seeds among values against the
// paper's count of paper collapsed runs out of paperN: agrees when the two
// shares are equal, differs when Fisher's exact test rejects equal rates
// (adjusted with the family), inconclusive otherwise. A count of six or
// fewer runs cannot show two rates equivalent, only equal or different.
func CollapseCount(values []float64, paper, paperN int) Judgement {
	c := CollapseTest(values, paper, paperN)
	j := Judgement{Kind: Relative, Diff: float64(c.Ours) - float64(c.Paper), P: c.P, Settle: -1, WiderP: -1, Collapse: c}
	j.Lo, j.Hi = j.Diff, j.Diff
	j.equivalent = c.Ours*c.PaperN == c.Paper*c.OursN
	j.spread = [3]float64{-1, -1, -1}
	j.provisional()
	return j
}
