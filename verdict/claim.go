package verdict

import (
	"fmt"
	"math"
)

// Direction is what a claim states of a - b.
type Direction int

// The directions a claim can state.
const (
	// Greater: a beats b (a - b > 0).
	Greater Direction = iota
	// AtLeast: a is not worse than b by more than the margin.
	AtLeast
	// Similar: a and b are within the margin of each other ("within seed
	// noise", "matches").
	Similar
)

// Op is the direction's operator as claims are written.
func (d Direction) Op() string {
	return [...]string{">", ">=", "~="}[d]
}

// ParseOp reads an operator: > and >= as written, < and <= with the
// operands swapped (swap is true), ~= for similar.
func ParseOp(op string) (d Direction, swap bool, err error) {
	switch op {
	case ">":
		return Greater, false, nil
	case "<":
		return Greater, true, nil
	case ">=":
		return AtLeast, false, nil
	case "<=":
		return AtLeast, true, nil
	case "~=":
		return Similar, false, nil
	}
	return 0, false, fmt.Errorf("operator %q: want one of > < >= <= ~=", op)
}

// Operand is one side of a claim: our per-seed values (Seeds names each
// value's seed; nil values: a constant Mean with no uncertainty).
type Operand struct {
	Mean   float64
	SD     float64
	N      int
	Values []float64
	Seeds  []int64
}

// Constant is an operand the claim states as a number.
func Constant(x float64) Operand { return Operand{Mean: x} }

// Claim judges the claim "a dir b" on our numbers, of kind k: paired by
// seed when both operands have per-seed values on the same seeds (a
// one-sample t test of the differences), otherwise Welch's test. The
// outcome is provisional until the claims' Family settles:
//
//   - Greater: agrees when the 90% interval of a - b lies above 0; differs
//     when the one-sided test rejects a >= b (a is worse);
//   - AtLeast: agrees when the interval lies above -margin; differs when
//     the one-sided test rejects a >= b - margin (a is worse by more than
//     the margin);
//   - Similar: agrees when the interval lies inside +-margin; differs when
//     the two-sided test rejects a = b.
func Claim(a, b Operand, dir Direction, k Kind) Judgement {
	d, se, df, paired := claimStats(a, b)
	j := Judgement{Kind: k, Diff: d, Margin: Margin(k, b.Mean, 0), DF: df, Paired: paired, Against: dir != Similar, Settle: -1}
	t90 := tQuantile(0.95, df)
	j.Lo, j.Hi = d-t90*se, d+t90*se
	switch dir {
	case Greater:
		j.equivalent = j.Lo > 0
	case AtLeast:
		j.equivalent = j.Lo > -j.Margin
	case Similar:
		j.equivalent = j.Lo >= -j.Margin && j.Hi <= j.Margin
	}
	switch {
	case se == 0:
		// Exact operands: the claim holds or not as computed.
		j.P = 1
		if (dir == Similar && math.Abs(d) > j.Margin) || (dir == Greater && d <= 0) || (dir == AtLeast && d < -j.Margin) {
			j.P = 0
		}
	case dir == Similar:
		j.P = 2 * tSF(math.Abs(d)/se, df)
	case dir == AtLeast:
		j.P = tSF(-(d+j.Margin)/se, df) // evidence that a < b - margin
	default:
		j.P = tSF(-d/se, df) // evidence that a < b
	}
	j.provisional()
	in := &settleInput{d: d, margin: j.Margin, dir: dir, grows: true, estOurs: true}
	switch {
	case paired:
		_, sdd := MeanSD(pairedDiffs(a, b))
		in.sdOurs, in.paired = sdd, true
	case b.N > 1:
		in.sdOurs, in.sdGrows = a.SD, b.SD
	default:
		// A constant: only a grows.
		in.sdOurs, in.grows = a.SD, false
	}
	if se > 0 {
		j.settle = in
	}
	if a.N < 2 && a.Values == nil && b.N < 2 && b.Values == nil && se == 0 {
		j.Note = "no spread on either side: decided on the means"
	}
	return j
}

// claimStats is a - b with its standard error and degrees of freedom, and
// whether the operands were paired by seed.
func claimStats(a, b Operand) (d, se, df float64, paired bool) {
	if pd := pairedDiffs(a, b); len(pd) >= 2 {
		m, s := MeanSD(pd)
		return m, s / math.Sqrt(float64(len(pd))), float64(len(pd) - 1), true
	}
	va, vb := 0.0, 0.0
	if a.N > 1 {
		va = a.SD * a.SD / float64(a.N)
	}
	if b.N > 1 {
		vb = b.SD * b.SD / float64(b.N)
	}
	return a.Mean - b.Mean, math.Sqrt(va + vb), welchDF(va+vb, va, float64(a.N-1), vb, float64(b.N-1)), false
}

// pairedDiffs is a - b seed by seed when both operands have values on the
// same seeds (nil otherwise).
func pairedDiffs(a, b Operand) []float64 {
	if len(a.Values) < 2 || len(a.Values) != len(b.Values) || len(a.Seeds) != len(a.Values) || len(b.Seeds) != len(b.Values) {
		return nil
	}
	out := make([]float64, len(a.Values))
	for i := range a.Values {
		if a.Seeds[i] != b.Seeds[i] {
			return nil
		}
		out[i] = a.Values[i] - b.Values[i]
	}
	return out
}

// ClaimFailures judges the claim that a fails severely more often than b
// (a, b: failed runs of na, nb) with Fisher's exact test, one-sided each
// way: agrees when the test for the claim rejects equal rates at Alpha,
// differs when the test against it does (after the family's adjustment).
// With six runs a side only 4 of 6 against 0 of 6 can agree.
func ClaimFailures(a, na, b, nb int) Judgement {
	pFor, pAgainst := 0.0, 0.0
	r1, c1, n := na, a+b, na+nb
	p := func(x int) float64 {
		return math.Exp(lchoose(r1, x) + lchoose(n-r1, c1-x) - lchoose(n, c1))
	}
	for x := max(0, c1-(n-r1)); x <= min(r1, c1); x++ {
		if x >= a {
			pFor += p(x)
		}
		if x <= a {
			pAgainst += p(x)
		}
	}
	c := &Failures{Ours: a, OursN: na, Paper: b, PaperN: nb, P: math.Min(pFor, 1), PAdj: math.Min(pFor, 1)}
	j := Judgement{Kind: Exact, Diff: float64(a)/float64(na) - float64(b)/float64(nb), P: math.Min(pAgainst, 1), Against: true, Settle: -1, Failures: c, aspect: InFailures}
	j.Lo, j.Hi = j.Diff, j.Diff
	j.equivalent = pFor < Alpha
	j.provisional()
	return j
}
