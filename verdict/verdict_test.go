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

// pub1 is a published mean printed to one decimal with its s.d.
func pub1(mean, sd float64, n int) Sample { return Printed(mean, &sd, n, HalfUnit(1, 0)) }

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
		{"true difference", Ours(88.6, 0.3, 6), pub1(91.6, 0.3, 6), Points, Differs},
		// Equal means, s.d. 0.2: the 90% interval is about +-0.2.
		{"equal mean small spread", Ours(91.6, 0.2, 6), pub1(91.6, 0.2, 6), Points, Agrees},
		// Three seeds each with s.d. 10: t quantiles at ~4 df, interval +-17.
		{"three seeds huge spread", Ours(80, 10, 3), pub1(85, 10, 3), Points, Inconclusive},
		// 2461 nJ printed as an integer, ours 2461.3 at s.d. 0: inside 5%.
		{"integer printed equal", Ours(2461.3, 0, 6), Printed(2461, nil, 1, HalfUnit(0, 0)).Borrow(0.2, 5, "ours"), Relative, Agrees},
		// A count 20% off, its seeds spread 1%: differs.
		{"count far off", Ours(1200, 12, 6), Printed(1000, nil, 6, HalfUnit(0, 0)).Borrow(12, 5, "ours"), Relative, Differs},
		// Printed s.d. 0.0: taken as 0.05, and ours equal.
		{"printed zero sd", Ours(91.7, 0.1, 3), pub1(91.7, 0, 3), Points, Agrees},
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

// TestAuditCases pins the cases of the verdict audit
// (../shared/reviews/fidelity.md, main at 87ac40a) under the new rule.
func TestAuditCases(t *testing.T) {
	t.Parallel()
	// night/samples, printed 1.2×10^5: the printing is ±5,000 (it was
	// stored as an exact integer, ±0.5). As an exact count ours, 128,000,
	// lies outside [115,000, 125,000]: differs, on the printing alone.
	if h := HalfUnit(1, 5); h != 5000 {
		t.Fatalf("HalfUnit(1, 5) = %g, want 5000", h)
	}
	if j := settled(Welch(Ours(128000, 0, 6), Printed(120000, nil, 6, HalfUnit(1, 5)), Exact)); j.Outcome != Differs || j.Margin != 5000 {
		t.Errorf("night samples: %v, margin %g (%s)", j.Outcome, j.Margin, j)
	}
	// ... and 270,160 inside 2.7×10^5's [265,000, 275,000]: agrees.
	if j := settled(Welch(Ours(270160, 0, 6), Printed(270000, nil, 6, HalfUnit(1, 5)), Exact)); j.Outcome != Agrees {
		t.Errorf("full samples: %v (%s)", j.Outcome, j)
	}
	// The night's 480 batches against our 500, a deterministic count: it
	// was "agrees" inside a 5% margin; exact, it differs.
	if j := settled(Welch(Ours(500, 0, 6), Printed(480, nil, 6, HalfUnit(0, 0)), Exact)); j.Outcome != Differs || j.Certificate() != "differs by at least 20" {
		t.Errorf("night batches: %v, %q (%s)", j.Outcome, j.Certificate(), j)
	}
	if j := settled(Welch(Ours(16885, 0, 6), Printed(16885, nil, 6, HalfUnit(0, 0)), Exact)); j.Outcome != Agrees {
		t.Errorf("headline updates: %v (%s)", j.Outcome, j)
	}
	// cifar-code: a single development run on each side and no noise
	// source (verdict_test.go:82-89 made it differ on printing alone):
	// inconclusive, never differs, however far apart.
	for _, ours := range []float64{0.51, 5.1} {
		j := settled(Welch(Ours(ours, 0, 1), Printed(0.46, nil, 1, HalfUnit(2, 0)), Relative))
		if j.Outcome != Inconclusive || j.Reason != NoNoiseModel || !strings.Contains(j.String(), "single run, no noise model") {
			t.Errorf("single runs %g vs 0.46: %v, reason %v (%s)", ours, j.Outcome, j.Reason, j)
		}
	}
	// mechtext/silent-rho1 (paper "0.3", ours 0.16 ± 0.02 over six): the
	// printing's variance is known, so the degrees of freedom are far
	// above our five (welchDF left it out: df 5).
	j := Welch(Ours(0.16, 0.02, 6), Printed(0.3, nil, 6, HalfUnit(1, 0)).Borrow(0.02, 5, "ours"), Relative)
	if j.DF < 20 {
		t.Errorf("silent rho: df %.1f, want the known printing to dominate", j.DF)
	}
	// Nothing estimated: normal quantiles (DF 0 in JSON).
	if j := Welch(Ours(1, 0, 6), Printed(1, nil, 6, HalfUnit(1, 0)).Borrow(0, 0, "x"), Relative); j.DF != 0 {
		t.Errorf("all known: df %g, want 0 (normal)", j.DF)
	}
	// A diagnostic printed to one digit ("0.7"): its margin is at least
	// one printed unit (5% of 0.7 = 0.035 could never be met), so 0.68
	// over six tight seeds agrees.
	if m := Margin(Relative, 0.7, HalfUnit(1, 0)); math.Abs(m-0.1) > 1e-12 {
		t.Errorf("margin of 0.7: %g, want 0.1", m)
	}
	if j := settled(Welch(Ours(0.68, 0.005, 6), Printed(0.7, nil, 6, HalfUnit(1, 0)).Borrow(0.005, 5, "ours"), Relative)); j.Outcome != Agrees {
		t.Errorf("0.68 vs 0.7: %v (%s)", j.Outcome, j)
	}
	// ablation/anchor/sequential, 3 v 3 seeds: "settles at about 3" was
	// the count it already had. Seeds to settle are ours, the paper's n
	// fixed, at the same df: always more than we have.
	j = settled(Welch(Ours(91.2, 0.6, 3), pub1(91.7, 0.0, 3), Points))
	if j.Outcome != Inconclusive || j.Reason != MoreSeeds || j.Settle <= 3 {
		t.Errorf("anchor: %v, reason %v, settle %d (%s)", j.Outcome, j.Reason, j.Settle, j)
	}
	// The paper's own spread too wide for the margin: no count of our
	// seeds settles it, said as such.
	j = settled(Welch(Ours(85, 1, 6), pub1(85.5, 3.5, 3), Points))
	if j.Outcome != Inconclusive || j.Reason != PaperUncertain || !strings.Contains(j.String(), "no count of our seeds settles it") {
		t.Errorf("paper uncertain: %v, %v (%s)", j.Outcome, j.Reason, j)
	}
	// BP k-WTA rotation, +0.5 [+0.2, +0.8]: a paired difference whose
	// interval excludes zero claims a sign; ours at -0.3 is inside the
	// ±1 margin yet cannot agree.
	pd := PairedInterval(0.5, 0.2, 0.8, 6, HalfUnit(1, 0))
	neg := []float64{-0.3, -0.5, -0.1, -0.4, -0.2, -0.3}
	if j := settled(Paired(neg, pd)); j.Outcome == Agrees || !j.Signed || j.SignShown {
		t.Errorf("sign flipped: %v signed %v shown %v (%s)", j.Outcome, j.Signed, j.SignShown, j)
	}
	pos := []float64{0.5, 0.4, 0.6, 0.5, 0.45, 0.55}
	if j := settled(Paired(pos, pd)); j.Outcome != Agrees || !j.SignShown {
		t.Errorf("same sign: %v shown %v (%s)", j.Outcome, j.SignShown, j)
	}
	// +0.1 [-0.3, +0.5] claims no sign: ours at -0.1 may agree.
	if j := settled(Paired([]float64{-0.1, -0.05, -0.15, -0.1, -0.12, -0.08}, PairedInterval(0.1, -0.3, 0.5, 6, HalfUnit(1, 0)))); j.Signed || j.Outcome != Agrees {
		t.Errorf("no sign claimed: signed %v, %v (%s)", j.Signed, j.Outcome, j)
	}
	// Failures by the paper's definition (below 60%), not 10 points below
	// a row's median: 70 is no failure, 58.2 and chance are.
	if k := CountFailures([]float64{82.5, 84.8, 83.0, 58.2, 9.9, 9.9, 70}); k != 3 {
		t.Errorf("CountFailures = %d, want 3", k)
	}
	// 91.6 ± 0.3 over six implies no run below 60; 85.4 ± 14.9 does not.
	if !NoFailuresImplied(91.6, 0.3, 0.05, 6) || NoFailuresImplied(83.0, 14.9, 0.05, 6) {
		t.Error("NoFailuresImplied: want true for 91.6 ± 0.3, false for 83.0 ± 14.9")
	}
}

func TestSpreadAndFailuresDecide(t *testing.T) {
	t.Parallel()
	// Equal means; our spread 3.0 against the paper's 0.3 over six
	// seeds each: the mean is inconclusive, the spread differs.
	j := settled(Welch(Ours(91.6, 3.0, 6), pub1(91.6, 0.3, 6), Points))
	if j.Outcome != Differs || j.InText() != "spread" || j.Spread == nil || !j.Spread.Wider {
		t.Errorf("spread: %v in %q (%s)", j.Outcome, j.InText(), j)
	}
	// A borrowed spread is never tested.
	if j := Welch(Ours(91.6, 3.0, 6), Printed(91.6, nil, 6, 0.05).Borrow(3.0, 5, "ours"), Points); j.Spread != nil {
		t.Errorf("a borrowed s.d. was F-tested: %+v", j.Spread)
	}
	// A mean that agrees cannot agree while the failures differ: 7 of 12
	// failed against the paper's stated 0 of 12.
	j = Welch(Ours(91.5, 0.2, 12), pub1(91.6, 0.3, 12), Points)
	j.Failures = FailureTest([]float64{1, 2, 3, 4, 5, 6, 7, 91, 91, 91, 91, 91}, 0, 12, true, false)
	j = settled(j)
	if j.Outcome != Differs || j.InText() != "failures" {
		t.Errorf("failures: %v in %q (%s)", j.Outcome, j.InText(), j)
	}
}

func TestInconclusiveSaysSeedsToSettle(t *testing.T) {
	t.Parallel()
	// Equal means, s.d. 3 over 12 seeds on the paper's side: with the
	// paper fixed its s.e. is 0.87, and agreement within one point needs
	// ours to shrink below ... never: t(11) * 0.87 > 1 alone.
	j := settled(Welch(Ours(90, 3, 3), pub1(90, 3, 12), Points))
	if j.Outcome != Inconclusive || j.Reason != PaperUncertain {
		t.Errorf("outcome %v, reason %v", j.Outcome, j.Reason)
	}
	// The paper at 24 seeds, s.d. 1.5: its s.e. 0.31; ours at s.d. 3
	// settles at a finite count, more than the three we have.
	j = settled(Welch(Ours(90, 3, 3), pub1(90, 1.5, 24), Points))
	if j.Outcome != Inconclusive || j.Reason != MoreSeeds || j.Settle < 10 || j.Settle > 200 {
		t.Errorf("outcome %v, reason %v, settle %d", j.Outcome, j.Reason, j.Settle)
	}
	// Property: whenever more seeds would settle it, the count is more
	// than we have and it does settle there (agrees or differs).
	rng := rand.New(rand.NewPCG(7, 8))
	for range 300 {
		n := 2 + rng.IntN(10)
		so := 0.1 + 3*rng.Float64()
		d := 3 * rng.NormFloat64()
		j := settled(Welch(Ours(90+d, so, n), pub1(90, 0.1+rng.Float64(), 6), Points))
		if j.Reason != MoreSeeds || j.Settle > MaxSettle {
			continue
		}
		if j.Settle <= n {
			t.Fatalf("settle %d <= our %d seeds (%s)", j.Settle, n, j)
		}
		k := settled(Welch(Ours(90+d, so, j.Settle), pub1(90, j.Spread.Paper, 6), Points))
		k.Spread, k.Failures = nil, nil
		k = settled(k)
		if k.Outcome == Inconclusive && k.Reason != NoReason && j.PAdj == j.P {
			t.Fatalf("at %d seeds still inconclusive (%s)", j.Settle, k)
		}
	}
}

func TestPairedAgainstPublishedInterval(t *testing.T) {
	t.Parallel()
	d := []float64{1.1, 0.9, 1.3, 1.0, 1.2, 0.8}
	if j := settled(Paired(d, PairedInterval(1.0, 0.7, 1.3, 6, 0.05))); j.Outcome != Agrees || !j.Paired {
		t.Errorf("paired equal: %v (paired %v), want agrees", j.Outcome, j.Paired)
	}
	if j := settled(Paired(d, PairedInterval(4.0, 3.6, 4.4, 6, 0.05))); j.Outcome != Differs {
		t.Errorf("paired off: %v, want differs", j.Outcome)
	}
	// No interval printed: our differences' spread is lent to it.
	j := Paired(d, Printed(1.0, nil, 6, 0.05))
	if j.Outcome == NotRun || j.Reason == NoNoiseModel || j.DF <= 0 {
		t.Errorf("paired without interval: %v df %g (%s)", j.Outcome, j.DF, j)
	}
}

func TestFisherKnownValues(t *testing.T) {
	t.Parallel()
	if p := Fisher(3, 1, 1, 3); math.Abs(p-0.4857) > 1e-3 {
		t.Errorf("Fisher(3,1,1,3) = %.4f, want 0.4857", p)
	}
	if p := Fisher(6, 0, 0, 6); math.Abs(p-0.002165) > 1e-5 {
		t.Errorf("Fisher(6,0,0,6) = %.6f, want 0.002165", p)
	}
	if p := Fisher(2, 4, 0, 6); math.Abs(p-0.4545) > 1e-3 {
		t.Errorf("Fisher(2,4,0,6) = %.4f, want 0.4545", p)
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
	op := func(vs ...float64) Operand {
		o := Operand{Values: vs, Seeds: seeds, N: len(vs)}
		o.Mean, o.SD = MeanSD(vs)
		return o
	}
	a := op(91.5, 91.8, 91.2, 91.6, 91.9, 91.4)
	b := op(88.1, 88.9, 87.5, 88.2, 88.0, 88.6)
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
	// ">=": not worse by more than the margin. 0.5 below, tightly: the
	// claim holds (claim.go tested d >= 0 and called this differs).
	c := op(91.0, 91.3, 90.7, 91.1, 91.4, 90.9)
	if j := settled(Claim(c, a, AtLeast, Points)); j.Outcome != Agrees {
		t.Errorf("a-0.5 >= a: %v, want agrees (%s)", j.Outcome, j)
	}
	d := op(88.5, 88.8, 88.2, 88.6, 88.9, 88.4)
	if j := settled(Claim(d, a, AtLeast, Points)); j.Outcome != Differs {
		t.Errorf("a-3 >= a: %v, want differs (%s)", j.Outcome, j)
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
	j = Claim(Operand{Mean: 91.2, SD: 0.5, N: 6}, Operand{Mean: 90.1, SD: 0.5, N: 6}, Greater, Points)
	if s := j.String(); !strings.HasPrefix(s, "d +1.1, 90% [") {
		t.Errorf("String() = %q, want one decimal", s)
	}
}

// TestCertificate: every judgement says the tightest margin its data
// certify.
func TestCertificate(t *testing.T) {
	t.Parallel()
	j := settled(Welch(Ours(91.6, 0.2, 6), pub1(91.6, 0.2, 6), Points))
	if c := j.Certificate(); !strings.HasPrefix(c, "agrees within ±0.") {
		t.Errorf("agrees: %q", c)
	}
	j = settled(Welch(Ours(88.6, 0.3, 6), pub1(91.6, 0.3, 6), Points))
	if c := j.Certificate(); !strings.HasPrefix(c, "differs by at least 2.") {
		t.Errorf("differs: %q", c)
	}
	j = settled(Welch(Ours(80, 10, 3), pub1(85, 10, 3), Points))
	if c := j.Certificate(); !strings.HasPrefix(c, "allows a difference up to ±") {
		t.Errorf("inconclusive: %q", c)
	}
}
