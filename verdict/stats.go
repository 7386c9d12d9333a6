package verdict

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// welchDF is the Welch-Satterthwaite degrees of freedom of a variance
// total (of a difference of means) of which e1 and e2 are estimated, with
// df1 and df2 degrees of freedom; the rest (the printing's, a spread known
// exactly) is known and adds nothing to the denominator. +Inf when nothing
// is estimated: normal quantiles.
func welchDF(total, e1, df1, e2, df2 float64) float64 {
	den := 0.0
	if e1 > 0 && df1 > 0 {
		den += e1 * e1 / df1
	}
	if e2 > 0 && df2 > 0 {
		den += e2 * e2 / df2
	}
	if den == 0 {
		return math.Inf(1)
	}
	return total * total / den
}

// tQuantile is the p quantile of Student's t with df degrees of freedom
// (the normal's for df = +Inf or 0).
func tQuantile(p, df float64) float64 {
	if math.IsInf(df, 1) || df <= 0 {
		return distuv.UnitNormal.Quantile(p)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Quantile(p)
}

// tSF is the upper tail P(T > t) of Student's t with df degrees of freedom.
func tSF(t, df float64) float64 {
	if math.IsInf(df, 1) || df <= 0 {
		return distuv.UnitNormal.Survival(t)
	}
	return distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}.Survival(t)
}

// spreadTest is the two-sided F test of equal per-run spreads of ours and
// pub (each with an s.d. of its own): the printed s.d. is taken at the end
// of its printing least favourable to a difference (its upper end when
// ours is the wider, its lower end when ours is the narrower).
func spreadTest(ours, pub Sample) *SpreadTest {
	t := &SpreadTest{Ours: ours.SD, Paper: pub.SD, Wider: ours.SD > pub.SD}
	d1, d2 := float64(ours.DF), float64(pub.DF)
	f := distuv.F{D1: d1, D2: d2}
	hi := pub.SD + pub.Half
	lo := math.Max(pub.SD-pub.Half, 0)
	pWider := f.Survival(ours.SD * ours.SD / (hi * hi))
	pNarrower := 1.0
	if lo > 0 {
		pNarrower = f.CDF(ours.SD * ours.SD / (lo * lo))
	}
	t.P = math.Min(1, 2*math.Min(pWider, pNarrower))
	t.PAdj = t.P
	return t
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
