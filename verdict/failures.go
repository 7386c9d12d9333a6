package verdict

import (
	"math"
)

// FailureBelow is the paper's own definition of a severe failure: a final
// accuracy below 60% (paper.tex:704 and 1638, of split-MNIST runs). It
// applies to accuracies whose published level is above it; a row the
// paper prints below it (CIFAR-10, a configuration that fails outright)
// has no failure count.
const FailureBelow = 60.0

// Failures is the count of severe failures on each side of a comparison
// with Fisher's exact test of equal rates.
type Failures struct {
	Ours, OursN, Paper, PaperN int
	// PaperKnown: the paper's count is known, stated or implied by its
	// mean and s.d. (Inferred); without it only ours is shown.
	PaperKnown bool
	Inferred   bool `json:",omitempty"`
	P, PAdj    float64
}

// CountFailures counts the values below FailureBelow (NaN, a run that
// blew up, counts).
func CountFailures(values []float64) int {
	n := 0
	for _, v := range values {
		if math.IsNaN(v) || v < FailureBelow {
			n++
		}
	}
	return n
}

// NoFailuresImplied says whether a published mean ± s.d. over n runs
// (printed with half unit half) rules out any run below FailureBelow: by
// Samuelson's inequality no run lies further than sd (n-1)/sqrt(n) from the
// mean, taken at the printing's least favourable ends.
func NoFailuresImplied(mean, sd, half float64, n int) bool {
	if n < 2 {
		return mean-half >= FailureBelow
	}
	reach := (sd + half) * float64(n-1) / math.Sqrt(float64(n))
	return mean-half-reach >= FailureBelow
}

// FailureTest counts ours (per-run values) against the paper's count of
// failures out of paperN (known says whether it is known; inferred,
// whether it was implied rather than stated), with Fisher's exact p.
func FailureTest(ours []float64, paper, paperN int, known, inferred bool) *Failures {
	k := CountFailures(ours)
	c := &Failures{Ours: k, OursN: len(ours), Paper: paper, PaperN: paperN, PaperKnown: known, Inferred: inferred, P: 1, PAdj: 1}
	if known {
		c.P = Fisher(k, len(ours)-k, paper, paperN-paper)
		c.PAdj = c.P
	}
	return c
}

// FailureCount judges our failures among values against the paper's
// stated count paper out of paperN: agrees when the two shares are equal,
// differs when Fisher's exact test rejects equal rates (adjusted with the
// family), inconclusive otherwise (FewRuns: six runs a side cannot show
// two rates equivalent, only equal or different).
func FailureCount(values []float64, paper, paperN int) Judgement {
	c := FailureTest(values, paper, paperN, true, false)
	j := Judgement{Kind: Exact, Diff: float64(c.Ours) - float64(c.Paper), P: c.P, Settle: -1, Failures: c, aspect: InFailures}
	j.Lo, j.Hi = j.Diff, j.Diff
	j.equivalent = c.Ours*c.PaperN == c.Paper*c.OursN
	// The count's test is the judgement's own: not counted twice.
	c.PaperKnown = false
	j.provisional()
	return j
}

// Fisher is the two-sided p value of Fisher's exact test of the 2x2 table
// [[a, b], [c, d]] (rows: ours, the paper's; columns: failed, healthy):
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
