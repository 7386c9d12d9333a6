package verdict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sync"

	"gonum.org/v1/gonum/stat/distuv"
)

// End is which end of a range a published number is: the lowest or the
// highest of its rows.
type End int

// The ends of a range.
const (
	Lowest End = iota
	Highest
)

var endNames = [...]string{"lowest", "highest"}

// String names the end.
func (e End) String() string { return endNames[e] }

// MarshalText writes the end's name.
func (e End) MarshalText() ([]byte, error) { return []byte(e.String()), nil }

// UnmarshalText reads an end's name.
func (e *End) UnmarshalText(b []byte) error {
	x, err := ParseEnd(string(b))
	*e = x
	return err
}

// ParseEnd reads an end's name ("lowest" or "highest").
func ParseEnd(s string) (End, error) {
	for i, n := range endNames {
		if n == s {
			return End(i), nil
		}
	}
	return 0, fmt.Errorf("extreme %q: want lowest or highest", s)
}

// Extreme places a published number as one end of a range the paper
// states over rows it names: the End of Rows rows' means, or of their
// seed s.d.s (Spread).
type Extreme struct {
	End    End
	Rows   int
	Spread bool `json:",omitempty"`
}

// ExtremeStat judges a number the paper prints as the lowest or the
// highest (end) of a range over rows it names: of the rows' means ("84--88
// at every rate"; a row may be a mean of per-seed paired differences, "1.4
// to 1.9 points ahead at every level") or, with spread, of the rows' seed
// s.d.s ("seed deviations 1.8--4.1"). Each of the paper's rows is over n
// runs; x is printed with half unit half; rows[i] is our row i: its mean,
// per-run s.d. and count of runs (N >= 2, SD > 0).
//
// The paper prints no row by itself, so no row has a counterpart of ours;
// what both sides share is the rows' distributions. The model, for means:
// the paper's row i is the mean of n runs of N(mu_i + delta, sigma_i^2),
// ours the mean of m_i runs of N(mu_i, sigma_i^2): the paper's rows are
// ours shifted by one delta. An extreme commutes with a common shift, so
// with E our extreme (the same end over our rows)
//
//	E - x = -delta + W,  W = ext_i(mu_i + sigma_i Z_i/sqrt(m_i)) - ext_i(mu_i + sigma_i Z'_i/sqrt(n)),
//
// Z, Z' standard normals: W has no delta in it. For s.d.s the model is one
// of scale: the paper's row i has per-run s.d. rho sigma_i, so its printed
// s.d. is rho sigma_i chi_{n-1}/sqrt(n-1), ours sigma_i
// chi_{m_i-1}/sqrt(m_i-1). On the log scale that is the model of means
// (log E - log x = -log rho + W, W the two sides' log extremes apart at
// rho = 1); with one row it is the F test of two spreads.
//
// W's distribution depends on the unknown mu_i and sigma_i. It is drawn by
// a parametric bootstrap from ours: mu_i at our row means, and each draw's
// sigma_i from our s.d.'s fiducial distribution (s_i sqrt((m_i-1)/X), X
// chi-squared with m_i-1 degrees of freedom), so that three runs' s.d. is
// as uncertain as it is: with one row of means the interval is Welch's
// with our s.d. lent to the paper, at our df. Fitted means lie apart by
// their own noise, and an extreme of rows apart varies more than one of
// tied rows, so the fit errs towards a wider W, not a narrower one
// (calibrated by simulation, tied and apart: TestCalibration,
// TestExtremeTied). Then
//
//   - the 90% interval of ours - published (-delta) is E - x - [q95,
//     q05] of W, widened by the printing; Diff is E - x - q50, a median
//     estimate. For s.d.s the same on the log scale, for -log rho; in the
//     number's unit ours - published is then x (1/rho - 1): what the
//     paper's extreme would have printed with our spreads, less what it
//     printed;
//   - the test of delta = 0 (rho = 1) is two-sided from W's
//     distribution, with x taken at the end of its printing least
//     favourable to a difference;
//   - agrees, differs and the margin are the number's (Margin(k)).
//
// The bootstrap is extremeDraws draws from fixed seeds (the same inputs
// give the same judgement); its p value is resolved to 2/(extremeDraws+1).
// A row with fewer than two of our runs or no spread, or an s.d. printed
// as zero, has no distribution: inconclusive, no noise model. Safe for
// concurrent use.
// The paper's rows' own sampling (the lowest of three three-run s.d.s
// varies by a factor of two) stays in the interval however many seeds we
// add: when it alone is wider than the margin, no count of our seeds
// settles the comparison (PaperUncertain). Settle grows every row of ours
// to one count of runs, our means and s.d.s held.
func ExtremeStat(rows []Sample, x float64, end End, spread bool, n int, half float64, k Kind) Judgement {
	j := Judgement{Kind: k, Margin: Margin(k, x, half), Settle: -1, Extreme: &Extreme{End: end, Rows: len(rows), Spread: spread}}
	e := &extremeInput{end: end, spread: spread, n: n, x: x, half: half, margin: j.Margin}
	minM := math.MaxInt
	for _, r := range rows {
		e.mean = append(e.mean, r.Mean)
		e.sd = append(e.sd, r.SD)
		e.m = append(e.m, r.N)
		minM = min(minM, r.N)
	}
	switch {
	case len(rows) == 0 || n < 2:
		if len(rows) > 0 {
			j.Diff = e.observed() - x
		}
		j.noNoiseModel()
		j.Note = "an extreme of no rows of ours, or of the paper's rows of fewer than two runs: no distribution to draw it from"
		return j
	case minM < 2 || slices.ContainsFunc(e.sd, func(s float64) bool { return !(s > 0) }):
		j.Diff = e.observed() - x
		j.noNoiseModel()
		j.Note = "an extreme over rows one of which has fewer than two of our runs, or no spread: no distribution to draw it from"
		return j
	case spread && !(x-half > 0):
		j.Diff = e.observed() - x
		j.noNoiseModel()
		j.Note = "an s.d. printed as zero: no scale to compare"
		return j
	}
	w := e.draws(e.m)
	j.Diff = e.diff(e.x, w.quantile(0.5))
	j.Lo, j.Hi = e.interval(w)
	j.DF = float64(minM - 1)
	j.P = e.p(w)
	j.equivalent = j.Lo >= -j.Margin && j.Hi <= j.Margin
	j.provisional()
	j.DF = float64(minM - 1)
	j.settle = e
	return j
}

// extremeDraws is the bootstrap's size: W's 5% and 95% quantiles to about
// 0.002 in probability (a binomial standard error), a p value resolved to
// 2e-4, and a judgement with its seeds to settle in about a millisecond.
const extremeDraws = 10000

// extremeInput is one published extreme and our fitted rows: what
// ExtremeStat judges and Settle varies (every row's count of our runs,
// the means and s.d.s held).
type extremeInput struct {
	mean, sd []float64
	m        []int
	end      End
	spread   bool
	n        int
	x, half  float64
	margin   float64
}

// ext is the end's extreme of xs.
func (e *extremeInput) ext(xs []float64) float64 {
	if e.end == Highest {
		return slices.Max(xs)
	}
	return slices.Min(xs)
}

// observed is our extreme: of the row means, or of the row s.d.s.
func (e *extremeInput) observed() float64 {
	if e.spread {
		return e.ext(e.sd)
	}
	return e.ext(e.mean)
}

// d is E - x' on W's scale (the log scale for s.d.s), x' the paper's
// extreme.
func (e *extremeInput) d(x float64) float64 {
	if e.spread {
		return math.Log(e.observed()) - math.Log(x)
	}
	return e.observed() - x
}

// diff is ours - published in the number's unit, x' the paper's extreme
// and w a value of W: E - x' - w for means, x (exp(log E - log x' - w) -
// 1) for s.d.s.
func (e *extremeInput) diff(x, w float64) float64 {
	if e.spread {
		return e.x * (math.Exp(e.d(x)-w) - 1)
	}
	return e.d(x) - w
}

// interval is the 90% interval of ours - published for the draws w, the
// paper's extreme at each end of its printing: for means E - x - [q95, q05]
// widened by half; for s.d.s its image in the number's unit.
func (e *extremeInput) interval(w extremeSample) (lo, hi float64) {
	return e.diff(e.x+e.half, w.quantile(0.95)), e.diff(e.x-e.half, w.quantile(0.05))
}

// p is the two-sided p value of delta = 0: the observed E - x' against W,
// x' at the end of its printing nearest W's median.
func (e *extremeInput) p(w extremeSample) float64 {
	lo, hi := e.d(e.x+e.half), e.d(e.x-e.half) // E - x' is largest at x - half
	switch {
	case w.cdf(hi) < 0.5:
		return math.Min(1, 2*w.tailBelow(hi))
	case w.cdf(lo) > 0.5:
		return math.Min(1, 2*w.tailAbove(lo))
	}
	return 1
}

// at says whether m of our runs in every row (0: infinitely many) would
// settle the comparison at level, our means and s.d.s held.
func (e *extremeInput) at(m int, level float64) bool {
	if m == 1 {
		return false // one run of ours has no spread to fit
	}
	ms := make([]int, len(e.m))
	for i := range ms {
		ms[i] = m
	}
	w := e.draws(ms)
	// The interval inside the margin, by counts: its lower end diff(x +
	// half, q95) >= -margin is q95 <= wAt(x + half, -margin), so at least
	// the quantile's order (round(0.95 (K-1)), 0-based) + 1 draws lie at
	// or below it; the upper end likewise with q05.
	k95, k05 := int(math.Round(0.95*float64(extremeDraws-1))), int(math.Round(0.05*float64(extremeDraws-1)))
	if w.atOrBelow(e.wAt(e.x+e.half, -e.margin)) >= k95+1 && w.atOrAbove(e.wAt(e.x-e.half, e.margin)) >= extremeDraws-k05 {
		return true
	}
	return e.p(w) < level
}

// wAt is the value of W at which ours - published, the paper's extreme at
// x, is target (diff's inverse in w): +Inf when no value of W makes it as
// low (an s.d. ratio is never negative).
func (e *extremeInput) wAt(x, target float64) float64 {
	if !e.spread {
		return e.d(x) - target
	}
	if r := 1 + target/e.x; r > 0 {
		return e.d(x) - math.Log(r)
	}
	return math.Inf(1)
}

// draws returns the bootstrap's draws of W with ms[i] of our runs in row i
// (0: infinitely many).
func (e *extremeInput) draws(ms []int) extremeSample {
	w := make([]float64, extremeDraws)
	paper := make([]float64, extremeDraws)
	first := true
	for i, m := range ms {
		b := bankOf(extremeKey{spread: e.spread, m: m, n: e.n, slot: i})
		loc, scale := e.mean[i], e.sd[i]
		if e.spread {
			loc, scale = math.Log(e.sd[i]), 1
		}
		// Running extremes, ours in w and the paper's in paper.
		for k := range w {
			a, p := loc+scale*float64(b.u[k]), loc+scale*float64(b.v[k])
			if first {
				w[k], paper[k] = a, p
				continue
			}
			if (e.end == Highest) == (a > w[k]) {
				w[k] = a
			}
			if (e.end == Highest) == (p > paper[k]) {
				paper[k] = p
			}
		}
		first = false
	}
	for k := range w {
		w[k] -= paper[k]
	}
	return extremeSample{w: w, q: map[float64]float64{}}
}

// extremeSample is W's draws, with the quantiles asked for so far.
type extremeSample struct {
	w []float64
	q map[float64]float64
}

// quantile is the q quantile of the draws: the order statistic at
// round(q (K-1)), found by selection (the draws are reordered, never
// changed).
func (s extremeSample) quantile(q float64) float64 {
	if v, ok := s.q[q]; ok {
		return v
	}
	i := min(max(int(math.Round(q*float64(len(s.w)-1))), 0), len(s.w)-1)
	v := nth(s.w, i)
	s.q[q] = v
	return v
}

// nth is the i-th smallest of a (0-based), by quickselect with a
// median-of-three pivot; it reorders a.
func nth(a []float64, i int) float64 {
	lo, hi := 0, len(a)-1
	for lo < hi {
		mid := lo + (hi-lo)/2
		if a[mid] < a[lo] {
			a[mid], a[lo] = a[lo], a[mid]
		}
		if a[hi] < a[lo] {
			a[hi], a[lo] = a[lo], a[hi]
		}
		if a[hi] < a[mid] {
			a[hi], a[mid] = a[mid], a[hi]
		}
		pivot := a[mid]
		l, r := lo, hi
		for l <= r {
			for a[l] < pivot {
				l++
			}
			for a[r] > pivot {
				r--
			}
			if l <= r {
				a[l], a[r] = a[r], a[l]
				l++
				r--
			}
		}
		switch {
		case i <= r:
			hi = r
		case i >= l:
			lo = l
		default:
			return a[i]
		}
	}
	return a[i]
}

// atOrBelow and atOrAbove count the draws at or beyond d.
func (s extremeSample) atOrBelow(d float64) int {
	n := 0
	for _, x := range s.w {
		if x <= d {
			n++
		}
	}
	return n
}

func (s extremeSample) atOrAbove(d float64) int {
	n := 0
	for _, x := range s.w {
		if x >= d {
			n++
		}
	}
	return n
}

// cdf is the share of draws at or below d.
func (s extremeSample) cdf(d float64) float64 {
	return float64(s.atOrBelow(d)) / float64(len(s.w))
}

// tailBelow and tailAbove are the Monte Carlo p values of one tail, (1 +
// the draws at or beyond d) / (1 + K): never zero.
func (s extremeSample) tailBelow(d float64) float64 {
	return float64(1+s.atOrBelow(d)) / float64(1+len(s.w))
}

func (s extremeSample) tailAbove(d float64) float64 {
	return float64(1+s.atOrAbove(d)) / float64(1+len(s.w))
}

// extremeKey names one row's bank of standardised draws: the statistic
// (means or s.d.s), our runs m (0: infinitely many), the paper's n, and
// the row's place among the rows (each row draws independently).
type extremeKey struct {
	spread     bool
	m, n, slot int
}

// extremeBank is one row's standardised draws: u ours, v the paper's,
// each row's value loc + scale u (loc, scale: the row's mean and s.d. for
// means; log s.d. and 1 for s.d.s). For means u = g Z/sqrt(m), v = g
// Z'/sqrt(n), g = sqrt((m-1)/X) the fiducial draw of sigma over our s.d.;
// for s.d.s u = log(sqrt(Y/X)), v = log(sqrt((m-1) V/((n-1) X))), X and Y
// chi-squared with m-1 degrees of freedom, V with n-1. With infinitely
// many of ours, g = 1 and u = 0.
type extremeBank struct{ u, v []float32 }

// The banks a process keeps (at most extremeBanks, 80 KB each: float32
// draws, precise far beyond the bootstrap's own error; past that a bank
// is drawn again when asked for: the same draws, from its key's seed).
const extremeBanks = 512

var (
	extremeMu    sync.Mutex
	extremeCache = map[extremeKey]*extremeBank{}
)

// bankOf returns the bank of k, drawn from a seed of k alone.
func bankOf(k extremeKey) *extremeBank {
	extremeMu.Lock()
	b, ok := extremeCache[k]
	extremeMu.Unlock()
	if ok {
		return b
	}
	b = drawBank(k)
	extremeMu.Lock()
	if len(extremeCache) < extremeBanks {
		extremeCache[k] = b
	}
	extremeMu.Unlock()
	return b
}

// extremeSeed is the bootstrap's fixed seed; a bank's stream is this and
// its key.
const extremeSeed = 0x65787472 // "extr"

func drawBank(k extremeKey) *extremeBank {
	sp := uint64(0)
	if k.spread {
		sp = 1
	}
	src := rand.NewPCG(extremeSeed, sp<<62|uint64(k.slot)<<48|uint64(k.n)<<24|uint64(k.m))
	rng := rand.New(src)
	chi := func(df int) float64 { return distuv.ChiSquared{K: float64(df), Src: src}.Rand() }
	b := &extremeBank{u: make([]float32, extremeDraws), v: make([]float32, extremeDraws)}
	sqn := math.Sqrt(float64(k.n))
	for i := range b.u {
		switch {
		case k.spread && k.m == 0:
			b.v[i] = float32(0.5 * math.Log(chi(k.n-1)/float64(k.n-1)))
		case k.spread:
			x, y, v := chi(k.m-1), chi(k.m-1), chi(k.n-1)
			b.u[i] = float32(0.5 * math.Log(y/x))
			b.v[i] = float32(0.5 * math.Log(float64(k.m-1)*v/(float64(k.n-1)*x)))
		case k.m == 0:
			b.v[i] = float32(rng.NormFloat64() / sqn)
		default:
			g := math.Sqrt(float64(k.m-1) / chi(k.m-1))
			b.u[i] = float32(g * rng.NormFloat64() / math.Sqrt(float64(k.m)))
			b.v[i] = float32(g * rng.NormFloat64() / sqn)
		}
	}
	return b
}
