package verdict

import (
	"math"
	"sync"

	"gonum.org/v1/gonum/integrate/quad"
	"gonum.org/v1/gonum/stat/distuv"
)

// OrderStat judges one of the paper's runs that it prints by itself: the
// rank-th lowest of its n runs (rank 1 the lowest, rank n the highest),
// printed as x with half unit half, against our m runs (ours: their mean
// and per-run s.d., m >= 2).
//
// Our seed i draws other initial weights than the paper's seed i, so a
// single run has no counterpart of ours; what both sides share is the
// distribution the runs are drawn from. The model: both sides' runs are
// normal with one spread, the paper's shifted by delta from ours. Then
// T = (Y_(rank) - mean(ours)) / sd(ours) has a distribution that depends
// on rank, n and m alone (a pivot: the k-th of n standard normals against
// the mean and s.d. of m others), so
//
//   - the test of delta = 0 is exact: P is two-sided from T's
//     distribution, with x taken at the end of its printing least
//     favourable to a difference;
//   - the 90% interval of ours - published (-delta) is mean(ours) +
//     [q05, q95] sd(ours) - x, widened by the printing; Diff its median
//     estimate, mean(ours) + q50 sd(ours) - x;
//   - agrees, differs and the margin are a mean's (Margin(k)): the paper's
//     run is what our distribution, shifted by at most the margin, draws
//     as the rank-th of n.
//
// A run the paper prints among its runs that did not fail is judged the
// same way against ours that did not fail (the caller passes those; the
// count of failures is judged by itself). The printed run's own sampling
// spread (an extreme of n varies by about a seed s.d.) stays in the
// interval however many seeds we add: when it alone is wider than the
// margin, no count of our seeds settles the comparison (PaperUncertain).
func OrderStat(ours Sample, x float64, rank, n int, half float64, k Kind) Judgement {
	j := Judgement{Kind: k, Margin: Margin(k, x, half), Settle: -1, Rank: &Rank{Rank: rank, Of: n}}
	if ours.N < 2 || !(ours.SD > 0) || rank < 1 || rank > n {
		j.Diff = ours.Mean - x
		j.noNoiseModel()
		j.Note = "one of the paper's runs against fewer than two of ours (or no spread of ours): no distribution to draw it from"
		return j
	}
	o := orderInput{mean: ours.Mean, sd: ours.SD, x: x, half: half, rank: rank, n: n, margin: j.Margin}
	p := o.pivot(ours.N)
	q05, q50, q95 := p.quantile(0.05), p.quantile(0.5), p.quantile(0.95)
	j.Diff = o.mean + q50*o.sd - x
	j.Lo, j.Hi = o.mean+q05*o.sd-x-half, o.mean+q95*o.sd-x+half
	j.DF = float64(ours.N - 1)
	j.P = o.p(p)
	j.equivalent = j.Lo >= -j.Margin && j.Hi <= j.Margin
	j.provisional()
	j.DF = float64(ours.N - 1)
	j.settle = &o
	return j
}

// Rank places a printed run among the paper's: the Rank-th lowest of Of.
type Rank struct{ Rank, Of int }

// orderInput is one printed run of the paper's and our fitted sample:
// what OrderStat judges, and what Settle varies (our seed count, the
// observed mean and s.d. held).
type orderInput struct {
	mean, sd, x, half float64
	rank, n           int
	margin            float64
}

// p is the two-sided p value of delta = 0 under the pivot p, the printed
// run taken at the end of its printing nearest our distribution's median.
func (o *orderInput) p(pv orderPivot) float64 {
	lo := pv.cdf((o.x - o.half - o.mean) / o.sd)
	hi := pv.cdf((o.x + o.half - o.mean) / o.sd)
	switch {
	case hi < 0.5:
		return math.Min(1, 2*hi)
	case lo > 0.5:
		return math.Min(1, 2*(1-lo))
	}
	return 1
}

// at says whether m of our seeds (0: infinitely many) would settle the
// comparison at level, our mean and s.d. held as observed.
func (o *orderInput) at(m int, level float64) bool {
	if m == 1 {
		return false // one seed of ours has no spread to fit
	}
	pv := o.pivot(m)
	lo := o.mean + pv.quantile(0.05)*o.sd - o.x - o.half
	hi := o.mean + pv.quantile(0.95)*o.sd - o.x + o.half
	if lo >= -o.margin && hi <= o.margin {
		return true
	}
	// p < level, by T's quantiles (the same test as o.p, memoised): the
	// printed run's nearest end lies beyond the level/2 tail.
	tLo, tHi := (o.x-o.half-o.mean)/o.sd, (o.x+o.half-o.mean)/o.sd
	return tHi < pv.quantile(level/2) || tLo > pv.quantile(1-level/2)
}

// pivot is T's distribution for m of our seeds (m = 0: ours known
// exactly).
func (o *orderInput) pivot(m int) orderPivot {
	return orderPivot{rank: o.rank, n: o.n, m: m}
}

// orderPivot is the distribution of T = (Y_(rank) - mean(X)) / sd(X), Y
// n standard normals and X m others (m = 0: mean 0 and s.d. 1 known).
type orderPivot struct{ rank, n, m int }

// atLeast is P(Binomial(n, p) >= rank): the probability that the rank-th
// lowest of n draws lies below a point below which one draw lies with
// probability p.
func (pv orderPivot) atLeast(p float64) float64 {
	if p <= 0 {
		return 0
	}
	if p >= 1 {
		return 1
	}
	// sum_{j >= rank} C(n, j) p^j (1-p)^(n-j), term by term from j = rank.
	q := 1 - p
	term := binom(pv.n, pv.rank) * powInt(p, pv.rank) * powInt(q, pv.n-pv.rank)
	s := term
	for j := pv.rank; j < pv.n; j++ {
		term *= float64(pv.n-j) / float64(j+1) * p / q
		s += term
	}
	return math.Min(1, s)
}

// powInt is x^k for k >= 0, by multiplication.
func powInt(x float64, k int) float64 {
	r := 1.0
	for ; k > 0; k-- {
		r *= x
	}
	return r
}

// binom is C(n, k).
func binom(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// The quadrature T's distribution is integrated with: Gauss-Hermite over
// mean(X) (normal), Gauss-Legendre over the quantiles of sd(X) (a scaled
// chi). TestOrderPivot checks it against simulation.
const (
	orderHermite  = 32
	orderLegendre = 48
)

var orderNodes = sync.OnceValue(func() (nodes struct{ hx, hw, lu, lw []float64 }) {
	nodes.hx, nodes.hw = make([]float64, orderHermite), make([]float64, orderHermite)
	quad.Hermite{}.FixedLocations(nodes.hx, nodes.hw, math.Inf(-1), math.Inf(1))
	nodes.lu, nodes.lw = make([]float64, orderLegendre), make([]float64, orderLegendre)
	quad.Legendre{}.FixedLocations(nodes.lu, nodes.lw, 0, 1)
	return nodes
})

// sdNodes are the values of sd(X)/sigma for m runs at the Legendre nodes
// of its quantiles (memoised: the chi quantiles are the costly part).
func sdNodes(m int) []float64 {
	if v, ok := sdNodeCache.Load(m); ok {
		return v.([]float64)
	}
	nodes := orderNodes()
	chi := distuv.ChiSquared{K: float64(m - 1)}
	out := make([]float64, len(nodes.lu))
	for i, u := range nodes.lu {
		out[i] = math.Sqrt(chi.Quantile(u) / float64(m-1))
	}
	sdNodeCache.Store(m, out)
	return out
}

var sdNodeCache sync.Map // m -> []float64

// cdf is P(T <= t).
func (pv orderPivot) cdf(t float64) float64 {
	if pv.m == 0 {
		return pv.atLeast(distuv.UnitNormal.CDF(t))
	}
	nodes := orderNodes()
	sqm := math.Sqrt(float64(pv.m))
	total := 0.0
	for b, sd := range sdNodes(pv.m) {
		inner := 0.0
		for a, z := range nodes.hx {
			// Hermite's weight is exp(-z^2): mean(X) = sqrt(2) z / sqrt(m).
			inner += nodes.hw[a] * pv.atLeast(distuv.UnitNormal.CDF(math.Sqrt2*z/sqm+t*sd))
		}
		total += nodes.lw[b] * inner / math.SqrtPi
	}
	return math.Min(1, math.Max(0, total))
}

// quantiles memoises orderPivot.quantile: a pivot's quantiles depend on
// rank, n, m and q alone.
var quantiles sync.Map // orderQuantile -> float64

type orderQuantile struct {
	pv orderPivot
	q  float64
}

// quantile is the q quantile of T, by bisection.
func (pv orderPivot) quantile(q float64) float64 {
	key := orderQuantile{pv, q}
	if v, ok := quantiles.Load(key); ok {
		return v.(float64)
	}
	v := pv.bisect(q)
	quantiles.Store(key, v)
	return v
}

func (pv orderPivot) bisect(q float64) float64 {
	lo, hi := -1.0, 1.0
	for pv.cdf(lo) > q {
		lo *= 2
		if lo < -1e6 {
			return lo
		}
	}
	for pv.cdf(hi) < q {
		hi *= 2
		if hi > 1e6 {
			return hi
		}
	}
	for range 60 {
		mid := (lo + hi) / 2
		if pv.cdf(mid) < q {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo < 1e-7 {
			break
		}
	}
	return (lo + hi) / 2
}
