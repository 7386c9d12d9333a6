package verdict

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func ptr(x float64) *float64 { return &x }

// settled judges one comparison as a family of one.
func settled(j Judgement) Judgement {
	var f Family
	f.Add(&j)
	f.Settle()
	return j
}

func TestWelchConstructedCases(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		ours Sample
		pub  Sample
		kind Kind
		want Outcome
	}{
		// 3 points apart, s.d. 0.3 over six seeds each: t = 17.
		{"true difference", Ours(88.6, 0.3, 6), Printed(91.6, ptr(0.3), 6, 1), Points, Differs},
		// Equal means, s.d. 0.2: the 90% interval is about +-0.2.
		{"equal mean small spread", Ours(91.6, 0.2, 6), Printed(91.6, ptr(0.2), 6, 1), Points, Agrees},
		// Three seeds each with s.d. 10: t quantiles at ~4 df, interval +-17.
		{"three seeds huge spread", Ours(80, 10, 3), Printed(85, ptr(10), 3, 1), Points, Inconclusive},
		// 2461 nJ printed as an integer, ours 2461.3 at s.d. 0 over six
		// seeds: only the printing is uncertain, 0.3 is inside 5%.
		{"integer printed equal", Ours(2461.3, 0, 6), Printed(2461, nil, 1, 0), Relative, Agrees},
		// 526 nJ printed as an integer, ours 526.4: inside half a unit.
		{"integer printed within half unit", Ours(526.4, 0.2, 6), Printed(526, nil, 1, 0), Relative, Agrees},
		// A count 20% off with no spread anywhere: differs.
		{"count far off", Ours(1200, 0, 6), Printed(1000, nil, 1, 0), Relative, Differs},
		// Printed s.d. 0.0: taken as 0.05, and ours equal.
		{"printed zero sd", Ours(91.7, 0.1, 3), Printed(91.7, ptr(0), 3, 1), Points, Agrees},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			j := settled(Welch(c.ours, c.pub, c.kind))
			if j.Outcome != c.want {
				t.Errorf("Welch = %v (d %.3f, 90%% [%.3f, %.3f], p %.3g, df %.1f), want %v", j.Outcome, j.Diff, j.Lo, j.Hi, j.P, j.DF, c.want)
			}
		})
	}
}

func TestInconclusiveSaysSeedsToSettle(t *testing.T) {
	t.Parallel()
	// Equal means, s.d. 3 on three seeds each: inconclusive now, and
	// agreement within one point needs (3^2+3^2)/n * t^2 <= 1: n ~ 50.
	j := settled(Welch(Ours(90, 3, 3), Printed(90, ptr(3), 3, 1), Points))
	if j.Outcome != Inconclusive {
		t.Fatalf("outcome %v, want inconclusive", j.Outcome)
	}
	if j.Settle < 40 || j.Settle > 60 {
		t.Errorf("Settle = %d, want about 50 seeds per side", j.Settle)
	}
}

func TestWiderSpreadIsItsOwnFinding(t *testing.T) {
	t.Parallel()
	// Our s.d. 3 against the paper's 0.3, six seeds each: F = 100.
	j := Welch(Ours(91, 3, 6), Printed(91.6, ptr(0.3), 6, 1), Points)
	if j.WiderP < 0 || j.WiderP > 1e-3 {
		t.Errorf("WiderP = %g, want a small p", j.WiderP)
	}
	// The paper's s.d. is never borrowed: the interval is ours.
	if j.Hi-j.Lo < 2*3/math.Sqrt(6) {
		t.Errorf("interval [%.2f, %.2f] narrower than our own spread allows", j.Lo, j.Hi)
	}
}

func TestSingleRunWithoutSpread(t *testing.T) {
	t.Parallel()
	// One run on each side, nothing to lend it a spread: only the
	// printing is uncertain. A 0.04 difference agrees, a 2-point one
	// differs: with no seed spread there is nothing else to weigh.
	if j := settled(Welch(Ours(90.04, 0, 1), Printed(90.0, nil, 1, 1), Points)); j.Outcome != Agrees {
		t.Errorf("0.04 apart: %v, want agrees", j.Outcome)
	}
	// Borrowed spread (s.d. 1 over 6 seeds, one run each side): 2 points
	// apart is inside t(5) * sqrt(2) * 1, inconclusive.
	ours := Sample{Mean: 92, SD: 1, N: 1, DF: 5}
	pub := Sample{Mean: 90, SD: 1, N: 1, DF: 5, Half: 0.05}
	if j := settled(Welch(ours, pub, Points)); j.Outcome != Inconclusive {
		t.Errorf("single runs with borrowed spread: %v, want inconclusive", j.Outcome)
	}
}

func TestPairedAgainstPublishedInterval(t *testing.T) {
	t.Parallel()
	d := []float64{1.1, 0.9, 1.3, 1.0, 1.2, 0.8}
	// The paper: +1.0 [+0.7, +1.3]; ours ~ +1.05 with s.d. 0.19.
	if j := settled(Paired(d, 1.0, ptr(0.7), ptr(1.3), 1)); j.Outcome != Agrees || !j.Paired {
		t.Errorf("paired equal: %v (paired %v), want agrees", j.Outcome, j.Paired)
	}
	// The paper: +4.0 [+3.6, +4.4]: three points off, differs.
	if j := settled(Paired(d, 4.0, ptr(3.6), ptr(4.4), 1)); j.Outcome != Differs {
		t.Errorf("paired off: %v, want differs", j.Outcome)
	}
}

func TestCollapsePatternCounted(t *testing.T) {
	t.Parallel()
	// Our batch-2 seeds of the full system: two far below the rest.
	ours := []float64{86.3, 62.5, 57.2, 83.9, 80.6, 85.5}
	c := CollapseTest(ours, 0, 6)
	if c.Ours != 2 || c.OursN != 6 {
		t.Errorf("collapsed %d of %d, want 2 of 6", c.Ours, c.OursN)
	}
	// 2 of 6 against 0 of 6: Fisher's two-sided p = 0.4545 (tables with
	// a collapsed count of 0..2 and 2..4 of the 12 margins' 2).
	if math.Abs(c.P-0.4545) > 1e-3 {
		t.Errorf("Fisher p = %.4f, want 0.4545", c.P)
	}
	if n := Collapsed([]float64{91, 91.5, 90.8}); n != 0 {
		t.Errorf("healthy seeds: %d collapsed", n)
	}
}

func TestFisherKnownValues(t *testing.T) {
	t.Parallel()
	// Fisher's tea tasting: [[3,1],[1,3]], two-sided p = 0.4857.
	if p := Fisher(3, 1, 1, 3); math.Abs(p-0.4857) > 1e-3 {
		t.Errorf("Fisher(3,1,1,3) = %.4f, want 0.4857", p)
	}
	// [[6,0],[0,6]]: 2/924 = 0.002165.
	if p := Fisher(6, 0, 0, 6); math.Abs(p-0.002165) > 1e-5 {
		t.Errorf("Fisher(6,0,0,6) = %.6f, want 0.002165", p)
	}
}

func TestBH(t *testing.T) {
	t.Parallel()
	got := BH([]float64{0.01, 0.04, 0.03, 0.5})
	want := []float64{0.04, 0.04 * 4 / 3, 0.04 * 4 / 3, 0.5}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("BH[%d] = %g, want %g", i, got[i], want[i])
		}
	}
}

func TestClaimDirections(t *testing.T) {
	t.Parallel()
	seeds := []int64{0, 1, 2, 3, 4, 5}
	a := Operand{Values: []float64{91.5, 91.8, 91.2, 91.6, 91.9, 91.4}, Seeds: seeds}
	b := Operand{Values: []float64{88.1, 88.9, 87.5, 88.2, 88.0, 88.6}, Seeds: seeds}
	a.Mean, a.SD = MeanSD(a.Values)
	b.Mean, b.SD = MeanSD(b.Values)
	a.N, b.N = 6, 6
	if j := settled(Claim(a, b, Greater, Points)); j.Outcome != Agrees || !j.Paired {
		t.Errorf("a > b: %v (paired %v), want agrees, paired", j.Outcome, j.Paired)
	}
	if j := settled(Claim(b, a, Greater, Points)); j.Outcome != Differs {
		t.Errorf("b > a: %v, want differs", j.Outcome)
	}
	if j := settled(Claim(a, b, Similar, Points)); j.Outcome != Differs {
		t.Errorf("a ~= b: %v, want differs", j.Outcome)
	}
	if j := settled(Claim(a, Constant(90), Greater, Points)); j.Outcome != Agrees || j.Paired {
		t.Errorf("a > 90: %v, want agrees (Welch)", j.Outcome)
	}
}

// TestFalseDiffersRate draws both sides from one normal distribution
// (no true difference) and checks that Welch's test calls about Alpha of
// them differs, before any multiplicity adjustment, for the seed counts the
// reports use. 4000 draws: the rate's s.e. is 0.0034. The bounds are
// [0.03, 0.08]: Welch's approximate degrees of freedom are known to make
// the test a little liberal when the side with fewer seeds has the wider
// spread (here 3 seeds at s.d. 2 against 6 at 1: about 0.065-0.07).
func TestFalseDiffersRate(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(1, 2))
	for _, n := range [][2]int{{6, 6}, {3, 6}, {3, 3}, {6, 3}} {
		const draws = 4000
		differs := 0
		for range draws {
			o := draw(rng, n[0], 90, 1.0)
			p := draw(rng, n[1], 90, 2.0)
			pm, ps := MeanSD(p)
			// Printed like the paper: one decimal.
			pub := Printed(math.Round(pm*10)/10, ptr(math.Round(ps*10)/10), n[1], 1)
			om, os := MeanSD(o)
			if j := Welch(Ours(om, os, n[0]), pub, Points); j.P < Alpha {
				differs++
			}
		}
		rate := float64(differs) / draws
		if rate < 0.03 || rate > 0.08 {
			t.Errorf("n %v: false differs rate %.3f, want about %.2f", n, rate, Alpha)
		}
	}
}

// TestFalseClaimRate: paired claims a ~= b with no true difference are
// called differs about Alpha of the time.
func TestFalseClaimRate(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 4))
	seeds := []int64{0, 1, 2, 3, 4, 5}
	const draws = 4000
	differs := 0
	for range draws {
		a := Operand{Values: draw(rng, 6, 90, 1), Seeds: seeds, N: 6}
		b := Operand{Values: draw(rng, 6, 90, 1), Seeds: seeds, N: 6}
		a.Mean, a.SD = MeanSD(a.Values)
		b.Mean, b.SD = MeanSD(b.Values)
		if j := Claim(a, b, Similar, Points); j.P < Alpha {
			differs++
		}
	}
	if rate := float64(differs) / draws; rate < 0.03 || rate > 0.07 {
		t.Errorf("false differs rate %.3f, want about %.2f", rate, Alpha)
	}
}

// TestFamilyFalseDiffers: 200 equal pairs in one family: with the
// Benjamini-Hochberg adjustment under no true difference, the chance of
// any differs is about Alpha, so about 5 of 100 families have one (at
// most 12 allowed: +3 s.e.).
func TestFamilyFalseDiffers(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(5, 6))
	const families = 100
	any := 0
	for range families {
		var f Family
		js := make([]Judgement, 200)
		for i := range js {
			om, os := MeanSD(draw(rng, 6, 90, 1))
			pm, ps := MeanSD(draw(rng, 6, 90, 1))
			js[i] = Welch(Ours(om, os, 6), Sample{Mean: pm, SD: ps, N: 6, DF: 5}, Points)
			f.Add(&js[i])
		}
		f.Settle()
		for _, j := range js {
			if j.Outcome == Differs {
				any++
				break
			}
		}
	}
	if rate := float64(any) / families; rate > 0.12 {
		t.Errorf("families with a false differs: %.3f, want about %.2f", rate, Alpha)
	}
}

func draw(rng *rand.Rand, n int, mu, sd float64) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = mu + sd*rng.NormFloat64()
	}
	return out
}

// TestJudgementStringSmall: a claim about a realised decay of order 1e-3
// prints its difference and interval in significant digits, not as 0.0.
func TestJudgementStringSmall(t *testing.T) {
	t.Parallel()
	a := Operand{Mean: 0.00081, SD: 0.0001, N: 3, Values: []float64{0.0007, 0.0008, 0.00093}}
	b := Constant(0.001)
	j := Claim(a, b, Greater, Points)
	s := j.String()
	if !strings.HasPrefix(s, "d -0.00019, 90% [-0.00") || strings.Contains(s, "[-0.0, -0.0]") {
		t.Errorf("String() = %q, want the difference in significant digits", s)
	}
	// An accuracy difference keeps its one decimal.
	j = Claim(Operand{Mean: 91.2, SD: 0.5, N: 6}, Operand{Mean: 90.1, SD: 0.5, N: 6}, Greater, Points)
	if s := j.String(); !strings.HasPrefix(s, "d +1.1, 90% [") {
		t.Errorf("String() = %q, want one decimal", s)
	}
}
