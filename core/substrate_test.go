package core

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
)

// refNet is a direct, dense implementation of the reference learner's
// training step (its forward pass, settling or sweep, and local update
// without masks) under every substrate switch, written from the
// reference's definitions without any of the engine's sparse storage, fast
// paths or fused passes. The engine must agree with it to rounding.
type refNet struct {
	cfg                    LocalConfig
	sizes                  []int
	L                      int
	k                      []int
	W, B                   [][]float32 // W[l]: n_l x n_{l-1}; B[l] is the twin of W[l] (B^{l-1})
	bias                   [][]float32
	mask                   [][]bool // connectivity of W[l] (nil: dense)
	sign                   [][]float32
	mW, vW, mB, vB, mb, vb [][]float32
	ebar                   [][]float32
	t                      int
	spike                  *RNG
}

// refFromEngine copies the engine's initial state into a dense refNet.
func refFromEngine(r *localRun, seed int64) *refNet {
	nt := r.nt
	c := *r.cfg
	rn := &refNet{cfg: c, sizes: nt.sizes, L: nt.L, k: nt.k}
	L := nt.L
	alloc := func() [][]float32 { return make([][]float32, L+1) }
	rn.W, rn.B, rn.bias = alloc(), alloc(), alloc()
	rn.mW, rn.vW, rn.mB, rn.vB, rn.mb, rn.vb, rn.ebar = alloc(), alloc(), alloc(), alloc(), alloc(), alloc(), alloc()
	rn.mask = make([][]bool, L+1)
	rn.sign = make([][]float32, L+1)
	for l := 1; l <= L; l++ {
		ly := nt.lay[l]
		n := ly.nIn * ly.nOut
		rn.W[l] = make([]float32, n)
		rn.mask[l] = make([]bool, n)
		if ly.fb != nil {
			rn.B[l] = make([]float32, n)
		}
		for i := range ly.nOut {
			for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
				at := i*ly.nIn + int(ly.col[s])
				rn.W[l][at] = ly.w[s]
				rn.mask[l][at] = true
				if ly.fb != nil {
					rn.B[l][at] = ly.fb[s]
				}
			}
		}
		rn.bias[l] = append([]float32(nil), ly.bias...)
		for _, st := range [][][]float32{rn.mW, rn.vW, rn.mB, rn.vB} {
			st[l] = make([]float32, n)
		}
		rn.mb[l] = make([]float32, ly.nOut)
		rn.vb[l] = make([]float32, ly.nOut)
		if l < L {
			rn.ebar[l] = make([]float32, ly.nOut)
			rn.sign[l] = nt.types[l]
		}
	}
	if c.SpikeTrain > 0 {
		rn.spike = NewRNG(seed, StreamSpike)
	}
	return rn
}

func (rn *refNet) bound(e float32) float32 {
	if rn.cfg.Unbounded {
		return e
	}
	k := float32(rn.cfg.Kappa)
	return k * float32(math.Tanh(float64(e/k)))
}

// act is the rate of one sample's hidden layer l: relu, spike counts in
// training, k-WTA keeping ties.
func (rn *refNet) act(l int, x []float32) []float32 {
	a := make([]float32, len(x))
	for i, v := range x {
		a[i] = max(v, 0)
		if rn.spike != nil && a[i] > 0 {
			ts := float64(rn.cfg.SpikeTrain)
			a[i] = float32(float64(Poisson(rn.spike, float64(a[i])*ts)) / ts)
		}
	}
	k := rn.k[l]
	if k < len(a) {
		s := append([]float32(nil), a...)
		for i := range s { // k-th largest by selection
			for j := i + 1; j < len(s); j++ {
				if s[j] > s[i] {
					s[i], s[j] = s[j], s[i]
				}
			}
		}
		thr := s[k-1]
		for i := range a {
			if a[i] < thr {
				a[i] = 0
			}
		}
	}
	return a
}

// mu is b^l + W^l a over one sample.
func (rn *refNet) mu(l int, a []float32) []float32 {
	nIn, nOut := rn.sizes[l-1], rn.sizes[l]
	z := make([]float32, nOut)
	for i := range nOut {
		var s float32
		for j := range nIn {
			s += rn.W[l][i*nIn+j] * a[j]
		}
		z[i] = s + rn.bias[l][i]
	}
	return z
}

// fb returns the feedback matrix carrying layer l+1's burst to layer l.
func (rn *refNet) fb(l int) []float32 {
	if rn.cfg.Transport {
		return rn.W[l+1]
	}
	return rn.B[l+1]
}

// errUp is the burst layer l+1 sends down on one sample.
func (rn *refNet) errUp(l int, eps, a [][]float32) []float32 {
	u := make([]float32, len(eps[l+1]))
	for i, e := range eps[l+1] {
		u[i] = rn.bound(e)
		if l+1 < rn.L {
			if rn.cfg.BurstMult {
				u[i] *= a[l+1][i]
			} else if !rn.cfg.NoBurstGate && a[l+1][i] <= 0 {
				u[i] = 0
			}
		}
	}
	return u
}

func (rn *refNet) topDown(l int, eps, a [][]float32) []float32 {
	u := rn.errUp(l, eps, a)
	n, F := rn.sizes[l], rn.fb(l)
	td := make([]float32, n)
	for i, ui := range u {
		for j := range n {
			td[j] += ui * F[i*n+j]
		}
	}
	return td
}

// settle returns one sample's rates and errors (the reference's relax or
// sweep_errors).
func (rn *refNet) settle(x []float32, y int) (a, eps [][]float32) {
	L := rn.L
	xs := make([][]float32, L+1)
	a = make([][]float32, L+1)
	a[0] = x
	for l := 1; l <= L; l++ {
		xs[l] = rn.mu(l, a[l-1])
		if l < L {
			a[l] = rn.act(l, xs[l])
		}
	}
	target := make([]float32, rn.sizes[L])
	target[y] = float32(rn.cfg.TgtScale)
	eps = make([][]float32, L+1)
	if rn.cfg.RelaxT == 0 {
		eps[L] = make([]float32, rn.sizes[L])
		for i := range target {
			eps[L][i] = target[i] - xs[L][i]
		}
		for l := L - 1; l >= 1; l-- {
			td := rn.topDown(l, eps, a)
			eps[l] = make([]float32, len(td))
			for j := range td {
				if a[l][j] > 0 {
					eps[l][j] = td[j]
				}
			}
		}
		return a, eps
	}
	errors := func() {
		for l := 1; l <= L; l++ {
			m := rn.mu(l, a[l-1])
			eps[l] = make([]float32, len(m))
			for i := range m {
				if l < L {
					eps[l][i] = xs[l][i] - m[i]
				} else {
					eps[l][i] = target[i] - m[i]
				}
			}
		}
	}
	g := float32(rn.cfg.RelaxGamma)
	for range rn.cfg.RelaxT {
		errors()
		for l := 1; l < L; l++ {
			td := rn.topDown(l, eps, a)
			for j := range xs[l] {
				d := -eps[l][j]
				if a[l][j] > 0 {
					d += td[j]
				}
				xs[l][j] += g * d
			}
			a[l] = rn.act(l, xs[l])
		}
	}
	errors()
	return a, eps
}

// step is one unmasked waking update on a batch (the reference's
// local_update after relax).
func (rn *refNet) step(xs [][]float32, ys []int, eta float32) {
	c := rn.cfg
	L, n := rn.L, len(xs)
	// Settle sample by sample but layer by layer across the batch, so
	// spike counts are drawn in the engine's order (layer, sample, unit).
	A := make([][][]float32, n)
	E := make([][][]float32, n)
	if rn.spike != nil && c.RelaxT > 0 {
		panic("refNet: spike counts with relaxation draw in batch order; not modelled")
	}
	if rn.spike != nil {
		// Forward layer by layer across the batch.
		for b := range n {
			A[b] = make([][]float32, L+1)
			A[b][0] = xs[b]
		}
		z := make([][]float32, n)
		for l := 1; l <= L; l++ {
			for b := range n {
				z[b] = rn.mu(l, A[b][l-1])
				if l < L {
					A[b][l] = rn.act(l, z[b])
				}
			}
		}
		for b := range n {
			E[b] = make([][]float32, L+1)
			E[b][L] = make([]float32, rn.sizes[L])
			for i := range E[b][L] {
				var t float32
				if i == ys[b] {
					t = float32(c.TgtScale)
				}
				E[b][L][i] = t - z[b][i]
			}
			for l := L - 1; l >= 1; l-- {
				td := rn.topDown(l, E[b], A[b])
				E[b][l] = make([]float32, len(td))
				for j := range td {
					if A[b][l][j] > 0 {
						E[b][l][j] = td[j]
					}
				}
			}
		}
	} else {
		for b := range n {
			A[b], E[b] = rn.settle(xs[b], ys[b])
		}
	}
	rn.t++
	for l := 1; l <= L; l++ {
		nIn, nOut := rn.sizes[l-1], rn.sizes[l]
		e := make([][]float32, n)
		for b := range n {
			e[b] = make([]float32, nOut)
			for i := range nOut {
				if l == L {
					e[b][i] = E[b][L][i]
				} else {
					e[b][i] = rn.bound(E[b][l][i])
				}
			}
		}
		if l < L && c.BaselineEMA > 0 {
			tau := float32(c.BaselineEMA)
			for i := range nOut {
				var m float32
				for b := range n {
					m += e[b][i]
				}
				rn.ebar[l][i] = (1-tau)*rn.ebar[l][i] + tau*(m/float32(n))
			}
		}
		if l < L {
			for b := range n {
				for i := range nOut {
					v := e[b][i] - rn.ebar[l][i]
					switch {
					case c.BurstMult:
						v *= A[b][l][i]
					case !c.NoBurstGate && A[b][l][i] <= 0:
						v = 0
					}
					e[b][i] = v
				}
			}
		}
		twin := l >= 2 && !c.Transport
		wd := float32(0)
		if !twin {
			wd = float32(c.InputL2)
		}
		for i := range nOut {
			var gb float32
			for b := range n {
				gb += e[b][i] / float32(n)
			}
			rn.bias[l][i] += rn.opt(&rn.mb[l][i], &rn.vb[l][i], gb, eta)
			for j := range nIn {
				at := i*nIn + j
				var g float32
				for b := range n {
					g += e[b][i] * A[b][l-1][j] / float32(n)
				}
				rn.W[l][at] += rn.opt(&rn.mW[l][at], &rn.vW[l][at], g-wd*rn.W[l][at], eta)
				if twin {
					rn.B[l][at] += rn.opt(&rn.mB[l][at], &rn.vB[l][at], g, eta)
					lam := float32(c.KPDecay)
					rn.W[l][at] -= lam * rn.W[l][at]
					rn.B[l][at] -= lam * rn.B[l][at]
				}
			}
		}
	}
	rn.project()
}

// project is the Dale clamp and the connectivity re-mask.
func (rn *refNet) project() {
	c := rn.cfg
	for l := 1; l <= rn.L; l++ {
		nIn := rn.sizes[l-1]
		for at := range rn.W[l] {
			j := at % nIn
			if l >= 2 && !c.NoDale {
				s := rn.sign[l-1][j]
				rn.W[l][at] = s * max(s*rn.W[l][at], 0)
				if !c.NoDaleFB && !c.Transport {
					rn.B[l][at] = s * max(s*rn.B[l][at], 0)
				}
			}
			if !rn.mask[l][at] {
				rn.W[l][at] = 0
				if rn.B[l] != nil {
					rn.B[l][at] = 0
				}
			}
		}
	}
}

// opt is one optimiser step of a parameter with state m, v and gradient g.
func (rn *refNet) opt(m, v *float32, g, eta float32) float32 {
	if rn.cfg.Opt == "sgd" {
		*m = float32(rn.cfg.Momentum)*(*m) + g
		return eta * (*m)
	}
	*m = 0.9*(*m) + 0.1*g
	*v = 0.999*(*v) + 0.001*g*g
	mh := *m / float32(1-math.Pow(0.9, float64(rn.t)))
	vh := *v / float32(1-math.Pow(0.999, float64(rn.t)))
	return eta * mh / (float32(math.Sqrt(float64(vh))) + float32(rn.cfg.AdamEps))
}

// mirror is the reference's mirror_phase on the twins.
func (rn *refNet) mirror(n int, rng *RNG) {
	for l := 2; l <= rn.L; l++ {
		nIn, nOut := rn.sizes[l-1], rn.sizes[l]
		xi := make([]float32, n*nIn)
		for k := range xi {
			xi[k] = float32(rng.NormFloat64())
		}
		for i := range nOut {
			for j := range nIn {
				var h float32
				for b := range n {
					var y float32
					for jj := range nIn {
						y += rn.W[l][i*nIn+jj] * xi[b*nIn+jj]
					}
					h += y * xi[b*nIn+j]
				}
				rn.B[l][i*nIn+j] = 0.99*rn.B[l][i*nIn+j] + 0.01*h/float32(n)
			}
		}
	}
	rn.project()
}

// ladderTiny is the substrate ladder's protocol on the tiny data: no replay,
// no rotation, Adam at 0.3*8/256 on batches of 8.
func ladderTiny() LocalConfig {
	c := tinyConfig()
	c.Schedule, c.Mask, c.Buffer, c.Static = "offline", "none", 0, true
	c.Opt, c.Eta, c.AdamEps, c.BatchWake = "adam", 0.3, 1e-3, 8
	return c
}

// compareRef checks the engine's weights, twins and biases against the
// direct implementation's.
func compareRef(t *testing.T, name string, r *localRun, rn *refNet, tol float64) {
	t.Helper()
	nt := r.nt
	var worst float64
	for l := 1; l <= nt.L; l++ {
		ly := nt.lay[l]
		for i := range ly.nOut {
			for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
				at := i*ly.nIn + int(ly.col[s])
				worst = max(worst, math.Abs(float64(ly.w[s]-rn.W[l][at])))
				if ly.fb != nil {
					want := rn.B[l]
					if rn.cfg.Transport {
						want = rn.W[l]
					}
					worst = max(worst, math.Abs(float64(ly.fb[s]-want[at])))
				}
			}
			worst = max(worst, math.Abs(float64(ly.bias[i]-rn.bias[l][i])))
		}
	}
	if worst > tol || math.IsNaN(worst) {
		t.Errorf("%s: max |engine - direct| = %g, want <= %g", name, worst, tol)
	}
}

// substrateCases are the substrate switches the tests run, alone and in the
// ladder's combinations.
var substrateCases = []struct {
	name string
	edit func(c *LocalConfig)
}{
	{"final substrate (sweep)", func(c *LocalConfig) {}},
	{"no burst gate", func(c *LocalConfig) { c.NoBurstGate = true }},
	{"burst mult", func(c *LocalConfig) { c.BurstMult = true }},
	{"unbounded", func(c *LocalConfig) { c.Unbounded, c.Kappa = true, 0.5 }},
	{"no dale fb", func(c *LocalConfig) { c.NoDaleFB = true }},
	{"no dale", func(c *LocalConfig) { c.NoDale = true }},
	{"active fracs", func(c *LocalConfig) { c.ActiveFracs = []float64{0.25, 0.125} }},
	{"no kwta dense", func(c *LocalConfig) { c.NoKWTA, c.ConnDensity = true, 1 }},
	{"relax T5", func(c *LocalConfig) { c.RelaxT, c.RelaxGamma = 5, 0.4 }},
	{"relax T5 no gate no baseline", func(c *LocalConfig) {
		c.RelaxT, c.RelaxGamma, c.NoBurstGate, c.BaselineEMA = 5, 0.4, true, 0
	}},
	{"relax T5 burst mult", func(c *LocalConfig) { c.RelaxT, c.RelaxGamma, c.BurstMult = 5, 0.4, true }},
	{"unconstrained", func(c *LocalConfig) {
		c.Transport, c.Unbounded, c.NoKWTA, c.NoDale, c.NoBurstGate = true, true, true, true, true
		c.BaselineEMA, c.ConnDensity, c.RelaxT, c.RelaxGamma = 0, 1, 20, 0.1
	}},
	{"transport sgd", func(c *LocalConfig) { c.Transport, c.Opt, c.Eta = true, "sgd", 0.05 }},
	{"sgd relax", func(c *LocalConfig) { c.Opt, c.Eta, c.RelaxT, c.RelaxGamma = "sgd", 0.05, 3, 0.5 }},
	{"spike train", func(c *LocalConfig) { c.SpikeTrain = 8 }},
}

// TestSubstrateAgainstDirect runs every substrate switch through the engine
// and through refNet on the same batches and compares the parameters.
func TestSubstrateAgainstDirect(t *testing.T) {
	t.Parallel()
	for _, tc := range substrateCases {
		cfg := ladderTiny()
		tc.edit(&cfg)
		const seed = 5
		train := tinyData(seed, 20, 4, 4, 5)
		eval := tinyData(seed+100, 10, 4, 4, 5)
		r, err := newLocalRun(&cfg, train, eval, pairTasks(4), seed, Hooks{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		rn := refFromEngine(r, seed)
		eta := cfg.Eta * float64(cfg.BatchWake) / 256
		pick := NewRNG(1, StreamRun)
		for range 6 {
			batch := make([]int, cfg.BatchWake)
			xs := make([][]float32, len(batch))
			ys := make([]int, len(batch))
			for b := range batch {
				batch[b] = pick.IntN(train.N)
				xs[b], ys[b] = train.Row(batch[b]), int(train.Y[batch[b]])
			}
			r.wakingStep(batch, eta, 0)
			rn.step(xs, ys, float32(eta))
		}
		compareRef(t, tc.name, r, rn, 2e-5)
	}
}

// TestMirrorAgainstDirect checks the weight-mirror night against refNet's.
func TestMirrorAgainstDirect(t *testing.T) {
	t.Parallel()
	for _, kp := range []float64{0, 1e-3} {
		cfg := ladderTiny()
		cfg.Mirror, cfg.KPDecay = 3, kp
		const seed = 6
		train := tinyData(seed, 20, 4, 4, 5)
		eval := tinyData(seed+100, 10, 4, 4, 5)
		r, err := newLocalRun(&cfg, train, eval, pairTasks(4), seed, Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		rn := refFromEngine(r, seed)
		r.rng = NewRNG(99, StreamRun)
		r.mirrorPhase()
		ref := NewRNG(99, StreamRun)
		for range cfg.Mirror {
			rn.mirror(cfg.BatchWake, ref)
		}
		compareRef(t, "mirror", r, rn, 1e-6)
		// The mirror pulls B toward W: their distance shrinks.
		var before, after float64
		for at, w := range rn.W[2] {
			after += math.Abs(float64(rn.B[2][at] - w))
		}
		rn0 := refFromEngine(newRunOnly(t, cfg, seed), seed)
		for at, w := range rn0.W[2] {
			before += math.Abs(float64(rn0.B[2][at] - w))
		}
		if !(after < before) {
			t.Errorf("kp %v: |B - W| %g after mirroring, %g before; want it smaller", kp, after, before)
		}
	}
}

func newRunOnly(t *testing.T, cfg LocalConfig, seed int64) *localRun {
	t.Helper()
	r, err := newLocalRun(&cfg, tinyData(seed, 20, 4, 4, 5), tinyData(seed+100, 10, 4, 4, 5), pairTasks(4), seed, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// TestPoisson checks the sampler's mean and variance on both branches.
func TestPoisson(t *testing.T) {
	t.Parallel()
	rng := NewRNG(3, StreamRun)
	for _, lam := range []float64{0.3, 4, 9.9, 10, 37.5} {
		const n = 200000
		var s, s2 float64
		for range n {
			k := float64(Poisson(rng, lam))
			s += k
			s2 += k * k
		}
		mean := s / n
		vr := s2/n - mean*mean
		se := math.Sqrt(lam / n)
		if math.Abs(mean-lam) > 5*se || math.Abs(vr-lam) > 0.03*lam+5*se {
			t.Errorf("lambda %v: mean %v, variance %v", lam, mean, vr)
		}
	}
	if Poisson(rng, 0) != 0 {
		t.Error("Poisson(0) != 0")
	}
}

// TestSubstrateGolden pins the digest of a tiny run's JSON result under
// every substrate switch (and the mirror night); -update rewrites
// testdata/substrate_tiny.golden.
func TestSubstrateGolden(t *testing.T) {
	t.Parallel()
	cases := append(substrateCases[:len(substrateCases):len(substrateCases)], struct {
		name string
		edit func(c *LocalConfig)
	}{"mirror", func(c *LocalConfig) { c.Mirror, c.KPDecay = 2, 0 }})
	var b strings.Builder
	for _, tc := range cases {
		cfg := ladderTiny()
		cfg.Epochs = 2
		tc.edit(&cfg)
		res, err := TrainLocal(cfg, tinyData(1, 30, 4, 4, 5), tinyData(1, 10, 4, 4, 5), nil, 7, Hooks{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		js, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%x final=%.4f synops=%.4f %s\n", sha256.Sum256(js), res.FinalAcc, res.SynOpsFrac, tc.name)
	}
	got := b.String()
	if want := goldenFile(t, "substrate_tiny.golden", got); got != want {
		t.Errorf("digests differ from testdata/substrate_tiny.golden (rerun with -update if intended):\ngot:\n%swant:\n%s", got, want)
	}
}
