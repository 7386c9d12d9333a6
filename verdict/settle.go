package verdict

import "math"

// settleInput is what Settle needs to ask, once the family has fixed a
// judgement's level, how many of our seeds would settle it: the observed
// difference and our per-run spread (which more seeds shrink), and the
// other side's variance of its mean, held as it is (the paper's seeds are
// the paper's; a claim's second operand, ours too, grows with ours when
// grows is set).
type settleInput struct {
	d       float64 // ours - published (or a - b)
	sdOurs  float64 // our per-run s.d.
	estOurs bool    // our s.d. is estimated (its df grows with the seeds)
	kOurs   float64 // the known part of our variance of the mean (printing)
	// The other side: variance of its mean (total, estimated) and the
	// estimate's degrees of freedom; or, for a claim between two of our
	// numbers, its per-run s.d. growing with ours.
	vOther, eOther, dfOther float64
	sdGrows                 float64
	grows                   bool
	// shared: the other side's estimated variance is ours too (a lent
	// s.d.): one estimate with our degrees of freedom.
	shared bool
	// What agreement needs: the margin and the direction (Similar: inside
	// +-margin, a number against its published value); a claimed sign
	// (pubMean's) shown by ours alone.
	margin  float64
	dir     Direction
	signed  bool
	pubMean float64
	paired  bool
}

// at says whether n of our seeds would settle the comparison at the test
// level level (agrees or differs), and whether an infinite number would
// (n = 0).
func (s *settleInput) at(n int, level float64) bool {
	var vo, eo, dfo float64
	if n == 0 { // the limit
		vo, eo, dfo = s.kOurs, 0, math.Inf(1)
	} else {
		eo = s.sdOurs * s.sdOurs / float64(n)
		vo = eo + s.kOurs
		dfo = float64(n - 1)
		if !s.estOurs {
			eo = 0
		}
	}
	v2, e2, df2 := s.vOther, s.eOther, s.dfOther
	if s.grows {
		if n == 0 {
			v2, e2, df2 = 0, 0, math.Inf(1)
		} else {
			e2 = s.sdGrows * s.sdGrows / float64(n)
			v2, df2 = e2, float64(n-1)
		}
	}
	total := vo + v2
	var df float64
	switch {
	case s.paired && s.grows:
		// A paired claim: the differences are one sample of n.
		df = dfo
	case s.shared:
		df = welchDF(total, eo+e2, max(dfo, df2), 0, 0)
	default:
		df = welchDF(total, eo, dfo, e2, df2)
	}
	se := math.Sqrt(total)
	t90 := tQuantile(0.95, df)
	lo, hi := s.d-t90*se, s.d+t90*se
	if s.dir == Similar {
		if lo >= -s.margin && hi <= s.margin && s.signShown(n) {
			return true
		}
		return se == 0 && s.d != 0 || se > 0 && 2*tSF(math.Abs(s.d)/se, df) < level
	}
	switch s.dir {
	case Greater:
		if lo > 0 {
			return true
		}
		return se > 0 && tSF(-s.d/se, df) < level // evidence that a < b
	case AtLeast:
		if lo > -s.margin {
			return true
		}
		return se > 0 && tSF(-(s.d+s.margin)/se, df) < level // evidence that a < b - margin
	}
	return false
}

// signShown says whether n of our seeds would show the published sign at
// our observed mean and spread.
func (s *settleInput) signShown(n int) bool {
	if !s.signed {
		return true
	}
	m := s.d + s.pubMean
	if m*s.pubMean <= 0 {
		return false
	}
	if n == 0 {
		return true
	}
	return math.Abs(m) > tQuantile(0.95, float64(n-1))*s.sdOurs/math.Sqrt(float64(n))
}

// settler is what Family.Settle asks of an inconclusive judgement: whether
// n of our seeds (0: infinitely many) would settle it at a test level.
type settler interface {
	at(n int, level float64) bool
}

// seedsToSettle is the least count of our seeds that settles s at level:
// 0 when no count does (the other side's uncertainty alone is too wide),
// else at most maxSeeds (maxSeeds+1 meaning more than that).
func seedsToSettle(s settler, level float64) int {
	if !s.at(0, level) {
		return 0
	}
	const maxSeeds = 1 << 20
	lo, hi := 1, 2
	for !s.at(hi, level) {
		lo = hi
		hi *= 2
		if hi > maxSeeds {
			return maxSeeds + 1
		}
	}
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if s.at(mid, level) {
			hi = mid
		} else {
			lo = mid
		}
	}
	return max(hi, 2)
}
