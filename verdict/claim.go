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
//   - AtLeast: agrees when the interval lies above -margin; differs as for
//     Greater;
//   - Similar: agrees when the interval lies inside +-margin; differs when
//     the two-sided test rejects a = b.
func Claim(a, b Operand, dir Direction, k Kind) Judgement {
	d, se, df, paired := claimStats(a, b)
	j := Judgement{Kind: k, Diff: d, Margin: Margin(k, b.Mean), DF: df, Paired: paired, Settle: -1, WiderP: -1}
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
		if (dir == Similar && math.Abs(d) > j.Margin) || (dir != Similar && d < 0) {
			j.P = 0
		}
	case dir == Similar:
		j.P = 2 * tSF(math.Abs(d)/se, df)
	default:
		j.P = tSF(-d/se, df) // evidence that a < b
	}
	j.PAdj = j.P
	if math.IsInf(j.DF, 1) {
		j.DF = 0
	}
	j.Outcome = Inconclusive
	switch {
	case j.equivalent:
		j.Outcome = Agrees
	case j.P < Alpha:
		j.Outcome = Differs
	}
	j.spread = [3]float64{a.SD, b.SD, 0}
	if paired {
		_, sdd := meanSD(pairedDiffs(a, b))
		j.spread = [3]float64{sdd / math.Sqrt2, sdd / math.Sqrt2, 0}
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
		m, s := meanSD(pd)
		return m, s / math.Sqrt(float64(len(pd))), float64(len(pd) - 1), true
	}
	va, vb := 0.0, 0.0
	if a.N > 1 {
		va = a.SD * a.SD / float64(a.N)
	}
	if b.N > 1 {
		vb = b.SD * b.SD / float64(b.N)
	}
	return a.Mean - b.Mean, math.Sqrt(va + vb), welchDF(va, a.N-1, vb, b.N-1), false
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
