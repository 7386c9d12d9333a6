package verdict

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
)

// The calibration of every path of the rule, by simulation: for each
// shape of published value (and each kind of claim), the share of
// comparisons called differs when there is no true difference (false
// differs), and called agrees when the true difference equals the margin
// (false agrees), each as a family of one (before any multiplicity
// adjustment). Each rate is a test: it must stay within its bound (Alpha,
// or 5% for the equivalence test, plus three simulation standard errors).
// docs/verdicts.md carries the table the test measures
// (REPRO_UPDATE_DOCS=1 go test ./verdict -run TestCalibration rewrites it).

const calDraws = 4000

// calPath is one path of the rule: a comparison drawn with true
// difference delta (in the margin's unit) from rng.
type calPath struct {
	name, seeds string
	// draw returns the settled judgement of one simulated comparison
	// with true difference delta (ours - published).
	draw func(rng *rand.Rand, delta float64) Judgement
	// margin is the true difference of the false-agrees arm (0: no such
	// arm, the path cannot agree by equivalence).
	margin float64
	// differsAt is the true difference of the false-differs arm.
	differsAt float64
	// differs, agrees: what counts as the false outcome in each arm.
	falseAgree func(Judgement) bool
}

func isDiffers(j Judgement) bool { return j.Outcome == Differs }
func isAgrees(j Judgement) bool  { return j.Outcome == Agrees }

// round rounds x to d decimals, as the paper prints.
func round(x float64, d int) float64 {
	p := math.Pow(10, float64(d))
	return math.Round(x*p) / p
}

// meanSD draws n runs of N(mu, sd) and returns their mean and s.d.
func meanSD(rng *rand.Rand, n int, mu, sd float64) (float64, float64) {
	return MeanSD(draw(rng, n, mu, sd))
}

func calPaths() []calPath {
	const sigma = 0.8 // a headline row's seed s.d., in points
	printed := func(no, np int) calPath {
		return calPath{name: "mean ± s.d.", seeds: fmt.Sprintf("%d v %d", no, np), margin: PointsMargin,
			draw: func(rng *rand.Rand, delta float64) Judgement {
				om, os := meanSD(rng, no, 90+delta, sigma)
				pm, ps := meanSD(rng, np, 90, sigma)
				return settled(Welch(Ours(om, os, no), pub1(round(pm, 1), round(ps, 1), np), Points))
			}}
	}
	noSD := func(no, np int) calPath {
		return calPath{name: "mean, no s.d. (ours lent)", seeds: fmt.Sprintf("%d v %d", no, np), margin: PointsMargin,
			draw: func(rng *rand.Rand, delta float64) Judgement {
				om, os := meanSD(rng, no, 90+delta, sigma)
				pm, _ := meanSD(rng, np, 90, sigma)
				pub := Printed(round(pm, 1), nil, np, HalfUnit(1, 0)).BorrowShared(os, no-1, "ours")
				return settled(Welch(Ours(om, os, no), pub, Points))
			}}
	}
	lentSD := func(no, np int) calPath {
		return calPath{name: "mean, no s.d. (paper's own lent)", seeds: fmt.Sprintf("%d v %d", no, np), margin: PointsMargin,
			draw: func(rng *rand.Rand, delta float64) Judgement {
				om, os := meanSD(rng, no, 90+delta, sigma)
				pm, ps := meanSD(rng, np, 90, sigma)
				pub := Printed(round(pm, 1), nil, np, HalfUnit(1, 0)).Borrow(math.Max(round(ps, 1), 0.05), np-1, "paper")
				return settled(Welch(Ours(om, os, no), pub, Points))
			}}
	}
	single := calPath{name: "single run v our seeds", seeds: "6 v 1", margin: PointsMargin,
		draw: func(rng *rand.Rand, delta float64) Judgement {
			om, os := meanSD(rng, 6, 90+delta, sigma)
			pm, _ := meanSD(rng, 1, 90, sigma)
			pub := Printed(round(pm, 1), nil, 1, HalfUnit(1, 0)).BorrowShared(os, 5, "ours")
			return settled(Welch(Ours(om, os, 6), pub, Points))
		}}
	singleLent := calPath{name: "single runs, noise_from", seeds: "1 v 1 (lender 6)", margin: PointsMargin,
		draw: func(rng *rand.Rand, delta float64) Judgement {
			om, _ := meanSD(rng, 1, 90+delta, sigma)
			pm, _ := meanSD(rng, 1, 90, sigma)
			_, ls := meanSD(rng, 6, 50, sigma)
			us := Ours(om, 0, 1).Borrow(ls, 5, "lender")
			pub := Printed(round(pm, 1), nil, 1, HalfUnit(1, 0)).BorrowShared(ls, 5, "lender")
			return settled(Welch(us, pub, Points))
		}}
	pairedCI := calPath{name: "paired, with interval", seeds: "6 v 6", margin: PointsMargin,
		draw: func(rng *rand.Rand, delta float64) Judgement {
			const eff = 2.0 // a claimed effect well away from zero
			d := draw(rng, 6, eff+delta, sigma)
			pm, ps := meanSD(rng, 6, eff, sigma)
			h := 1.959963984540054 * ps / math.Sqrt(6)
			return settled(Paired(d, PairedInterval(round(pm, 1), round(pm-h, 1), round(pm+h, 1), 6, HalfUnit(1, 0))))
		}}
	pairedNoCI := calPath{name: "paired, no interval", seeds: "6 v 6", margin: PointsMargin,
		draw: func(rng *rand.Rand, delta float64) Judgement {
			const eff = 2.0
			d := draw(rng, 6, eff+delta, sigma)
			pm, _ := meanSD(rng, 6, eff, sigma)
			return settled(Paired(d, Printed(round(pm, 1), nil, 6, HalfUnit(1, 0))))
		}}
	relative := calPath{name: "relative (energy)", seeds: "6 v 6", margin: RelativeMargin * 500,
		draw: func(rng *rand.Rand, delta float64) Judgement {
			om, os := meanSD(rng, 6, 500+delta, 8)
			pm, ps := meanSD(rng, 6, 500, 8)
			return settled(Welch(Ours(om, os, 6), Printed(round(pm, 0), ptr(round(ps, 0)), 6, HalfUnit(0, 0)), Relative))
		}}
	// An exact count: ours deterministic, the paper printing the true
	// count to one significant decimal of 10^5. No difference: never
	// differs; outside the printing by the smallest step: never agrees.
	exactPath := calPath{name: "exact count (a×10^5)", seeds: "6 v 6", margin: HalfUnit(1, 5) + 1,
		draw: func(rng *rand.Rand, delta float64) Judgement {
			truth := 100000 + math.Floor(rng.Float64()*100000)
			printed := round(truth/1e5, 1) * 1e5
			return settled(Welch(Ours(truth+delta+(printed-truth)*boolf(delta != 0), 0, 6), Printed(printed, nil, 6, HalfUnit(1, 5)), Exact))
		}}
	failures := calPath{name: "failure count (Fisher)", seeds: "12 v 6",
		draw: func(rng *rand.Rand, _ float64) Judgement {
			fail := func(n int) []float64 {
				v := make([]float64, n)
				for i := range v {
					v[i] = 90
					if rng.Float64() < 0.25 {
						v[i] = 10
					}
				}
				return v
			}
			return settled(FailureCount(fail(12), CountFailures(fail(6)), 6))
		}}
	spread := calPath{name: "spread (F test), equal means", seeds: "6 v 6",
		draw: func(rng *rand.Rand, _ float64) Judgement {
			om, os := meanSD(rng, 6, 90, sigma)
			pm, ps := meanSD(rng, 6, 90, sigma)
			j := Welch(Ours(om, os, 6), pub1(round(pm, 1), round(ps, 1), 6), Points)
			j.equivalent, j.P = true, 1 // the mean's test aside: the spread alone
			return settled(j)
		}}
	// One run of the paper's printed by itself: the rank-th lowest of
	// its n runs against the normal fitted to our m (OrderStat). The
	// margin arm shifts the paper's runs by the margin.
	order := func(name string, rank, np, no int, sd float64) calPath {
		return calPath{name: "one run of a row (" + name + ")", seeds: fmt.Sprintf("%d v %d", no, np), margin: PointsMargin,
			draw: func(rng *rand.Rand, delta float64) Judgement {
				om, os := meanSD(rng, no, 90+delta, sd)
				ys := draw(rng, np, 90, sd)
				slices.Sort(ys)
				return settled(OrderStat(Ours(om, os, no), round(ys[rank-1], 1), rank, np, HalfUnit(1, 0), Points))
			}}
	}
	claim := func(dir Direction, name string, agreeAt, differsAt float64) calPath {
		return calPath{name: "claim " + name, seeds: "6 v 6 paired", margin: agreeAt, differsAt: differsAt,
			draw: func(rng *rand.Rand, delta float64) Judgement {
				seeds := []int64{0, 1, 2, 3, 4, 5}
				b := draw(rng, 6, 90, sigma)
				a := make([]float64, 6)
				for i := range a {
					a[i] = b[i] + delta + sigma*rng.NormFloat64()
				}
				oa := Operand{Values: a, Seeds: seeds, N: 6}
				ob := Operand{Values: b, Seeds: seeds, N: 6}
				oa.Mean, oa.SD = MeanSD(a)
				ob.Mean, ob.SD = MeanSD(b)
				return settled(Claim(oa, ob, dir, Points))
			}}
	}
	return []calPath{
		printed(6, 6), printed(6, 3), printed(3, 3), printed(12, 6),
		noSD(6, 6), noSD(6, 3), lentSD(6, 6),
		single, singleLent, pairedCI, pairedNoCI, relative, exactPath, failures, spread,
		// a > b: the claim's boundary is 0 on both arms; a >= b: -margin;
		// a ~= b: differs at 0, agrees at the margin.
		claim(Greater, "a > b", 1e-300, 0), claim(AtLeast, "a >= b", -PointsMargin, -PointsMargin), claim(Similar, "a ~= b", PointsMargin, 0),
		order("highest", 6, 6, 6, sigma), order("lowest", 1, 3, 3, sigma), order("highest, s.d. 0.2", 6, 6, 12, 0.2),
		// A range's end over rows the paper names (ExtremeStat), in the
		// two shapes it prints: the highest of two leads near each other
		// (its 1.4--1.9), the lowest of three rows' s.d.s (its 1.8--4.1);
		// TestExtremeTied sweeps tied and apart rows at more seeds.
		extremePath("range end (highest of 2 means)", Highest, []float64{1.4, 1.9}, 3, 3, false),
		extremePath("range end (lowest of 3 s.d.s)", Lowest, []float64{1.8, 2.9, 4.1}, 3, 3, true),
	}
}

func boolf(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

// calRates measures one path: false differs at differsAt, false agrees at
// margin (-1 when the path has no such arm).
func calRates(p calPath, seed uint64, draws int) (differs, agrees float64) {
	rng := rand.New(rand.NewPCG(seed, 54))
	n := 0
	for range draws {
		if isDiffers(p.draw(rng, p.differsAt)) {
			n++
		}
	}
	differs, agrees = float64(n)/float64(draws), -1
	if p.margin != 0 {
		n = 0
		for range draws {
			if isAgrees(p.draw(rng, p.margin)) {
				n++
			}
		}
		agrees = float64(n) / float64(draws)
	}
	return differs, agrees
}

func TestCalibration(t *testing.T) {
	se := math.Sqrt(Alpha * (1 - Alpha) / calDraws)
	bound := Alpha + 3*se
	var b strings.Builder
	b.WriteString("| path | seeds (ours v paper) | false differs, no difference | false agrees, difference = margin |\n|---|---|---|---|\n")
	for i, p := range calPaths() {
		d, a := calRates(p, uint64(i+1), calDraws)
		if d > bound {
			t.Errorf("%s (%s): false differs %.3f > %.3f", p.name, p.seeds, d, bound)
		}
		if a > bound {
			t.Errorf("%s (%s): false agrees %.3f > %.3f", p.name, p.seeds, a, bound)
		}
		as := "—"
		if a >= 0 {
			as = fmt.Sprintf("%.3f", a)
		}
		fmt.Fprintf(&b, "| %s | %s | %.3f | %s |\n", p.name, p.seeds, d, as)
	}
	table := b.String()
	const doc = "../docs/verdicts.md"
	src, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	const open, end = "<!-- calibration: TestCalibration -->\n", "<!-- /calibration -->"
	s := string(src)
	i, k := strings.Index(s, open), strings.Index(s, end)
	if i < 0 || k < i {
		t.Fatalf("%s has no calibration table between %q and %q", doc, open, end)
	}
	if got := s[i+len(open) : k]; got != table {
		if os.Getenv("REPRO_UPDATE_DOCS") == "1" {
			if err := os.WriteFile(doc, []byte(s[:i+len(open)]+table+s[k:]), 0o644); err != nil {
				t.Fatal(err)
			}
			return
		}
		t.Errorf("%s's calibration table is not what the rule measures (REPRO_UPDATE_DOCS=1 go test ./verdict -run TestCalibration); measured:\n%s", doc, table)
	}
}
