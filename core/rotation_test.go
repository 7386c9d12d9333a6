package core

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

// TestPressureRotationDirect follows refr_press and refr_frac step by step
// against a direct implementation of the rest pressure: S += the fraction
// of the batch on which a unit fired; bench S >= theta_r (press) or the top
// frac_r by S with S > 0 (frac); discharge the benched.
func TestPressureRotationDirect(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		mask  string
		theta float64
		frac  float64
	}{{"refr_press", 0, 0}, {"refr_press", 1.5, 0}, {"refr_frac", 0, 0}, {"refr_frac", 0, 0.1}} {
		cfg := tinyConfig()
		cfg.Mask, cfg.ThetaR, cfg.FracR = tc.mask, tc.theta, tc.frac
		r := newTinyRun(t, cfg, 3, 0)
		nt := r.nt
		S := make([][]float64, nt.L)
		for l := 1; l < nt.L; l++ {
			S[l] = make([]float64, nt.sizes[l])
		}
		theta := tc.theta
		if theta == 0 {
			theta = 4
		}
		frac := tc.frac
		if frac == 0 {
			frac = 0.25
		}
		on := 0
		for step := range 40 {
			p := randomWakingStep(r)
			any := false
			for l := 1; l < nt.L; l++ {
				n := nt.sizes[l]
				for b := range p.n {
					for _, i := range p.activeOf(l, b) {
						S[l][i] += 1 / float64(p.n)
					}
				}
				thr := theta
				if tc.mask == "refr_frac" {
					s := slices.Clone(S[l])
					slices.Sort(s)
					thr = s[n-max(1, int(math.RoundToEven(frac*float64(n))))]
				}
				for i := range n {
					want := float32(0)
					if S[l][i] >= thr && (tc.mask == "refr_press" || S[l][i] > 0) {
						want, any = 1, true
						S[l][i] = 0
					}
					if got := r.sup[l][i]; got != want {
						t.Fatalf("%s theta %v frac %v step %d layer %d unit %d: suppression %v, want %v", tc.mask, tc.theta, tc.frac, step, l, i, got, want)
					}
				}
			}
			if any {
				on++
			}
		}
		r.finish()
		if want := float64(on) / 40; math.Abs(r.res.GateDuty-want) > 1e-12 || (tc.theta == 1.5 && want == 0) {
			t.Errorf("%s: gate duty %v, want %v", tc.mask, r.res.GateDuty, want)
		}
	}
}

// TestUtilityRotationDirect: refr_util benches the fired units except the
// top util_q by long-term use (0.5 at the start, u <- 0.995 u + 0.005 f
// after every waking batch).
func TestUtilityRotationDirect(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Mask, cfg.UtilQ = "refr_util", 0.2
	r := newTinyRun(t, cfg, 4, 0)
	nt := r.nt
	u := make([][]float64, nt.L)
	for l := 1; l < nt.L; l++ {
		u[l] = make([]float64, nt.sizes[l])
		for i := range u[l] {
			u[l][i] = 0.5
		}
	}
	exempt := 0
	for step := range 60 {
		p := randomWakingStep(r)
		for l := 1; l < nt.L; l++ {
			n := nt.sizes[l]
			f := make([]float64, n)
			for b := range p.n {
				for _, i := range p.activeOf(l, b) {
					f[i] += 1 / float64(p.n)
				}
			}
			s := slices.Clone(u[l])
			slices.Sort(s)
			thr := s[n-max(1, int(math.RoundToEven(0.2*float64(n))))]
			for i := range n {
				want := float32(0)
				if f[i] > 0 && u[l][i] < thr {
					want = 1
				}
				if f[i] > 0 && u[l][i] >= thr {
					exempt++
				}
				if got := r.sup[l][i]; got != want {
					t.Fatalf("step %d layer %d unit %d: suppression %v, want %v", step, l, i, got, want)
				}
			}
			for i := range n {
				u[l][i] = 0.995*u[l][i] + 0.005*f[i]
			}
		}
	}
	if exempt == 0 {
		t.Error("no fired unit was ever exempt: the test does not exercise the exemption")
	}
}

// TestGateDuty: an always-open bout gate has duty 1, a novelty gate that
// can never open duty 0, and ungated rotation reports none.
func TestGateDuty(t *testing.T) {
	t.Parallel()
	train, eval := tinyData(1, 30, 4, 4, 5), tinyData(1, 10, 4, 4, 5)
	for _, tc := range []struct {
		edit func(c *LocalConfig)
		want float64
	}{
		{func(c *LocalConfig) { c.Gate, c.Block = "refr_block", 1<<20 }, 1},
		{func(c *LocalConfig) { c.Gate, c.BetaNov = "refr_nov", 1e9 }, 0},
		{func(c *LocalConfig) {}, 0},
	} {
		cfg := tinyConfig()
		tc.edit(&cfg)
		res, err := TrainLocal(cfg, train, eval, pairTasks(4), 1, Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		if res.GateDuty != tc.want {
			t.Errorf("gate %q: duty %v, want %v", cfg.Gate, res.GateDuty, tc.want)
		}
	}
}

// TestReplayNoise: replayed inputs are the buffer rows plus N(0, sigma^2)
// noise.
func TestReplayNoise(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.ReplayNoise, cfg.BatchReplay = 0.2, 64
	r := newTinyRun(t, cfg, 2, 30)
	rp := r.rep
	d := r.nt.sizes[0]
	rows := make([]float32, rp.n*d)
	copy(rows, rp.x)
	r.addReplayNoise(rp)
	var s, s2 float64
	for k := range rows {
		e := float64(rp.x[k] - rows[k])
		s += e
		s2 += e * e
	}
	n := float64(len(rows))
	if sd := math.Sqrt(s2/n - (s/n)*(s/n)); math.Abs(sd-0.2) > 0.02 || math.Abs(s/n) > 0.02 {
		t.Errorf("noise mean %v, s.d. %v; want 0, 0.2", s/n, sd)
	}
}

// TestStructuralPlasticity checks one prune-and-regrow directly: every
// masked layer keeps its synapse count, the weakest round(rho n) synapses
// are gone, as many new ones exist (drawn among the absent, small, zero
// state), every survivor keeps its weight and state, and the forward pass
// (c = W^1 o included) matches the dense weights.
func TestStructuralPlasticity(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"dist", "random"} {
		cfg := tinyConfig()
		cfg.SP, cfg.SPRho, cfg.ConnMode = "epoch", 0.1, mode
		r := newTinyRun(t, cfg, 5, 40)
		nt := r.nt
		type syn struct{ w, m float32 }
		before := make([]map[int32]syn, nt.L)
		for l := 1; l < nt.L; l++ {
			ly := nt.lay[l]
			before[l] = map[int32]syn{}
			for i := range ly.nOut {
				for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
					before[l][int32(i*ly.nIn)+ly.col[s]] = syn{ly.w[s], ly.m1[s]}
				}
			}
		}
		r.structural()
		for l := 1; l < nt.L; l++ {
			ly := nt.lay[l]
			n := len(before[l])
			swap := int(math.RoundToEven(0.1 * float64(n)))
			if len(ly.col) != n {
				t.Fatalf("%s layer %d: %d synapses after, %d before", mode, l, len(ly.col), n)
			}
			var ws []float64
			for _, s := range before[l] {
				ws = append(ws, math.Abs(float64(s.w)))
			}
			slices.Sort(ws)
			born, kept := 0, 0
			minKept := math.Inf(1)
			for i := range ly.nOut {
				for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
					f := int32(i*ly.nIn) + ly.col[s]
					old, ok := before[l][f]
					if !ok {
						born++
						if math.Abs(float64(ly.w[s])) > 0.06 || ly.m1[s] != 0 {
							t.Errorf("%s layer %d: new synapse w %v state %v", mode, l, ly.w[s], ly.m1[s])
						}
						continue
					}
					kept++
					minKept = min(minKept, math.Abs(float64(old.w)))
					if ly.w[s] != old.w || ly.m1[s] != old.m {
						t.Errorf("%s layer %d: survivor changed", mode, l)
					}
				}
			}
			if born != swap || kept != n-swap || minKept < ws[swap-1] {
				t.Errorf("%s layer %d: born %d kept %d (want %d, %d), weakest kept %v below the pruned %v", mode, l, born, kept, swap, n-swap, minKept, ws[swap-1])
			}
		}
		// The forward pass equals the dense computation.
		rn := refFromEngine(r, 5)
		p := newPass(nt, 4)
		p.load(r.train, []int{0, 1, 2, 3})
		nt.forward(p, nil)
		for b := range 4 {
			a := r.train.Row(b)
			for l := 1; l <= nt.L; l++ {
				z := rn.mu(l, a)
				if l == nt.L {
					for i, v := range z {
						if math.Abs(float64(v-p.z[b*len(z)+i])) > 1e-4 {
							t.Fatalf("%s sample %d: output %v, direct %v", mode, b, p.z[b*len(z)+i], v)
						}
					}
					break
				}
				a = rn.act(l, z)
			}
		}
	}
}

// TestAppendixGolden pins the digest of a tiny continual run of every
// appendix variant; -update rewrites testdata/appendix_tiny.golden.
func TestAppendixGolden(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		edit func(c *LocalConfig)
	}{
		{"refr_press", func(c *LocalConfig) { c.Mask, c.ThetaR = "refr_press", 1 }},
		{"refr_frac", func(c *LocalConfig) { c.Mask = "refr_frac" }},
		{"refr_util", func(c *LocalConfig) { c.Mask = "refr_util" }},
		{"replay noise", func(c *LocalConfig) { c.ReplayNoise = 0.2 }},
		{"sp local", func(c *LocalConfig) { c.SP, c.SPEvery = "local", 8 }},
		{"sp epoch", func(c *LocalConfig) { c.SP = "epoch" }},
		{"sp night", func(c *LocalConfig) { c.SP, c.Night, c.NightBatches, c.NightBatch = "night", true, 2, 8 }},
		{"gate refr_prog", func(c *LocalConfig) { c.Gate, c.GammaP = "refr_prog", 0.5 }},
	}
	var b strings.Builder
	for _, tc := range cases {
		cfg := tinyConfig()
		cfg.Epochs = 2
		tc.edit(&cfg)
		res, err := TrainLocal(cfg, tinyData(1, 30, 4, 4, 5), tinyData(1, 10, 4, 4, 5), pairTasks(4), 7, Hooks{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		js, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%x final=%.4f duty=%.4f %s\n", sha256.Sum256(js), res.FinalAcc, res.GateDuty, tc.name)
	}
	got := b.String()
	if want := goldenFile(t, "appendix_tiny.golden", got); got != want {
		t.Errorf("digests differ from testdata/appendix_tiny.golden (rerun with -update if intended):\ngot:\n%swant:\n%s", got, want)
	}
}

// randomWakingStep runs one waking step on a random batch of r's training
// samples and returns its pass.
func randomWakingStep(r *localRun) *pass {
	batch := make([]int, r.cfg.BatchWake)
	for b := range batch {
		batch[b] = r.rng.IntN(r.train.N)
	}
	r.wakingStep(batch, 0.001, 0.06)
	return r.wake
}
