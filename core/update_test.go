package core

import (
	"math"
	"slices"
	"testing"
)

type layerState struct{ w, fb, v, bias, bv []float32 }

func saveLayer(ly *layer) layerState {
	return layerState{slices.Clone(ly.w), slices.Clone(ly.fb), slices.Clone(ly.m1), slices.Clone(ly.bias), slices.Clone(ly.bm1)}
}

// TestMaskedHeavyBall checks one masked replay step against the definition
// (the paper's masked step): outside the mask velocity,
// weight, twin and bias are bit-for-bit unchanged (frozen, not zeroed, and
// not decayed); inside, v = mu v + G, W = clamp((W + eta v)(1 - lambda)).
func TestMaskedHeavyBall(t *testing.T) {
	t.Parallel()
	for trial := range 8 {
		cfg := tinyConfig()
		r := newTinyRun(t, cfg, int64(trial), 8)
		nt := r.nt
		rng := NewRNG(int64(trial), StreamRun+4)
		// Random non-zero velocities everywhere, as after many steps.
		for l := 1; l <= nt.L; l++ {
			for s := range nt.lay[l].m1 {
				nt.lay[l].m1[s] = float32(rng.NormFloat64() * 0.01)
			}
		}
		// Random awake sets.
		awake := make([][]bool, nt.L)
		for l := 1; l < nt.L; l++ {
			awake[l] = make([]bool, nt.sizes[l])
			for i := range awake[l] {
				awake[l][i] = rng.IntN(2) == 0
			}
		}
		if trial%2 == 1 {
			cfg.Readout = "isolated"
			r.cfg.Readout = "isolated"
		}
		masks := r.masksFrom(awake, true)
		p := randomBatchPass(r, 4, rng)
		nt.forward(p, nil)
		nt.sweep(p, 1)
		// Expected gradient G in float64, from the plasticity signal.
		G := make([][]float64, nt.L+1)
		for l := 1; l <= nt.L; l++ {
			ly := nt.lay[l]
			G[l] = make([]float64, len(ly.w))
			for i := range ly.nOut {
				for b := range p.n {
					var e float64
					if l == nt.L {
						e = float64(p.eps[l][b*ly.nOut+i])
					} else if p.a[l][b*ly.nOut+i] > 0 {
						e = float64(p.th[l][b*ly.nOut+i] - nt.ebar[l][i])
					}
					for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
						var a float64
						if l == 1 {
							a = float64(p.x[b*ly.nIn+int(ly.col[s])])
						} else {
							a = float64(p.a[l-1][b*ly.nIn+int(ly.col[s])])
						}
						G[l][s] += e * a / float64(p.n)
					}
				}
			}
		}
		old := make([]layerState, nt.L+1)
		for l := 1; l <= nt.L; l++ {
			old[l] = saveLayer(nt.lay[l])
		}
		eta := 0.06
		nt.update(&cfg, p, eta, masks, masks != nil)
		mu := cfg.Momentum
		for l := 1; l <= nt.L; l++ {
			ly, o, m := nt.lay[l], old[l], masks[l]
			frozenSyn, freeSyn := 0, 0
			for i := range ly.nOut {
				for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
					j := int(ly.col[s])
					if !m.synFree(i, j) {
						frozenSyn++
						if ly.m1[s] != o.v[s] || ly.w[s] != o.w[s] || (ly.fb != nil && ly.fb[s] != o.fb[s]) {
							t.Fatalf("trial %d layer %d: masked-out synapse (%d,%d) moved", trial, l, i, j)
						}
						continue
					}
					freeSyn++
					g := G[l][s]
					if l == 1 {
						g -= cfg.InputL2 * float64(o.w[s])
					}
					wantV := mu*float64(o.v[s]) + g
					if math.Abs(float64(ly.m1[s])-wantV) > 1e-5*(1+math.Abs(wantV)) {
						t.Fatalf("trial %d layer %d: v(%d,%d) = %g, want %g", trial, l, i, j, ly.m1[s], wantV)
					}
					lam := 0.0
					if l >= 2 {
						lam = cfg.KPDecay
					}
					wantW := (float64(o.w[s]) + eta*float64(ly.m1[s])) * (1 - lam)
					if l >= 2 {
						if sg := ly.sign[j]; sg > 0 {
							wantW = max(wantW, 0)
						} else {
							wantW = min(wantW, 0)
						}
					}
					if math.Abs(float64(ly.w[s])-wantW) > 1e-5*(1+math.Abs(wantW)) {
						t.Fatalf("trial %d layer %d: w(%d,%d) = %g, want %g", trial, l, i, j, ly.w[s], wantW)
					}
				}
				if !m.biasFree(i) && (ly.bias[i] != o.bias[i] || ly.bm1[i] != o.bv[i]) {
					t.Fatalf("trial %d layer %d: masked bias %d moved", trial, l, i)
				}
			}
			if l < nt.L && (frozenSyn == 0 || freeSyn == 0) {
				t.Errorf("trial %d layer %d: degenerate mask (%d frozen, %d free)", trial, l, frozenSyn, freeSyn)
			}
		}
	}
}

// checkInvariants verifies Dale's column signs on W^l (l >= 2) and their
// twins, and that the stored synapses are exactly the connectivity mask
// (absent ones, when stored, hold 0).
func checkInvariants(t *testing.T, nt *net, wantStored []int) {
	t.Helper()
	for l := 2; l <= nt.L; l++ {
		ly := nt.lay[l]
		for s, j := range ly.col {
			sg := ly.sign[j]
			if sg*ly.w[s] < 0 || sg*ly.fb[s] < 0 {
				t.Fatalf("layer %d synapse %d violates Dale's sign %v: w=%g b=%g", l, s, sg, ly.w[s], ly.fb[s])
			}
		}
	}
	for l := 1; l <= nt.L; l++ {
		ly := nt.lay[l]
		present := 0
		for s := range ly.col {
			if ly.absent != nil && ly.absent[s] {
				if ly.w[s] != 0 || (ly.fb != nil && ly.fb[s] != 0) {
					t.Fatalf("layer %d: absent synapse %d is %g", l, s, ly.w[s])
				}
				continue
			}
			present++
		}
		if present != wantStored[l] {
			t.Fatalf("layer %d: %d synapses present, want %d", l, present, wantStored[l])
		}
		nzT, nzW := 0, 0
		for _, v := range ly.wT {
			if v != 0 {
				nzT++
			}
		}
		for s, k := range ly.pos {
			if ly.wT[k] != ly.w[s] {
				t.Fatalf("layer %d: column copy stale at synapse %d", l, s)
			}
			if ly.w[s] != 0 {
				nzW++
			}
		}
		if nzT != nzW {
			t.Fatalf("layer %d: dense copy has %d non-zeros, stored synapses %d", l, nzT, nzW)
		}
	}
}

// TestDaleAndConnectivityEveryStep runs waking steps (with replay) and checks
// the invariants after every one, for fixed decay and for the controller
// (which stores absent synapses).
func TestDaleAndConnectivityEveryStep(t *testing.T) {
	t.Parallel()
	for _, ctrl := range []float64{0, 0.25} {
		cfg := tinyConfig()
		cfg.KPAdapt = ctrl
		r := newTinyRun(t, cfg, 3, 0)
		nt := r.nt
		want := make([]int, nt.L+1)
		for l := 1; l <= nt.L; l++ {
			if l < nt.L {
				want[l] = int(math.RoundToEven(cfg.ConnDensity * float64(nt.sizes[l]*nt.sizes[l-1])))
			} else {
				want[l] = nt.sizes[l] * nt.sizes[l-1]
			}
		}
		checkInvariants(t, nt, want)
		etaW, etaR := cfg.Eta*float64(cfg.BatchWake)/256, cfg.Eta*cfg.NremGain
		for step := range 30 {
			batch := []int{step % r.train.N, (3 * step) % r.train.N, (7*step + 1) % r.train.N}
			r.wakingStep(batch, etaW, etaR)
			checkInvariants(t, nt, want)
		}
		if r.res.ReplayUpdates != 30 {
			t.Errorf("kp_adapt=%g: %d replay updates, want 30", ctrl, r.res.ReplayUpdates)
		}
	}
}

// TestDaleInit checks the cell types (round(0.8 n) excitatory) and that the
// readout and feedback weights start Dale-clamped (about half exactly 0).
func TestDaleInit(t *testing.T) {
	t.Parallel()
	cfg := DefaultLocalConfig()
	cfg.Hidden = []int{512, 256}
	nt := newNet(&cfg, 784, 10, 28, 28, NewRNG(0, StreamInit))
	for l, want := range map[int]int{1: 410, 2: 205} {
		exc := 0
		for _, s := range nt.types[l] {
			if s > 0 {
				exc++
			}
		}
		if exc != want {
			t.Errorf("layer %d: %d excitatory, want %d", l, exc, want)
		}
	}
	// Connectivity counts of the default substrate.
	if got := len(nt.lay[1].col); got != 120422 {
		t.Errorf("W^1 keeps %d synapses, want 120422", got)
	}
	if got := len(nt.lay[2].col); got != 39322 {
		t.Errorf("W^2 keeps %d synapses, want 39322", got)
	}
	zeros := 0
	for _, w := range nt.lay[3].w {
		if w == 0 {
			zeros++
		}
	}
	if frac := float64(zeros) / float64(len(nt.lay[3].w)); frac < 0.4 || frac > 0.6 {
		t.Errorf("readout: %.2f of weights clamped to 0 at init, want about half", frac)
	}
	// Distance dependence: W^1 synapses are closer than uniform pairs.
	pre, post := sheet(784, 28, 28), sheet(512, 0, 0)
	var dKept, dAll float64
	ly := nt.lay[1]
	for i := range ly.nOut {
		for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
			j := ly.col[s]
			dKept += math.Hypot(post[i][0]-pre[j][0], post[i][1]-pre[j][1])
		}
		for j := range 784 {
			dAll += math.Hypot(post[i][0]-pre[j][0], post[i][1]-pre[j][1])
		}
	}
	if mk, ma := dKept/float64(len(ly.col)), dAll/float64(784*512); mk > 0.8*ma {
		t.Errorf("mean kept distance %.3f vs all %.3f: not distance dependent", mk, ma)
	}
}

// TestFastPathMatchesGeneral: the fast paths (fastpath.go) and the general
// per-synapse path give bit-identical runs, masks and mirror included, on
// tiny data, for configurations beyond the presets' too
// (TestFastPathEveryPreset runs the presets).
func TestFastPathMatchesGeneral(t *testing.T) {
	t.Parallel()
	for _, mask := range []string{"refractory", "mirror", "none", "adam", "adam-leak", "adam-readout-only",
		"controller", "controller-grad", "controller-skip", "controller-readout-only", "controller-nodalefb",
		"anchor", "anchor-mirror"} {
		cfg := tinyConfig()
		cfg.Mask = mask
		switch mask {
		case "adam":
			cfg.Mask, cfg.Opt, cfg.Eta = "refractory", "adam", 1e-3
		case "adam-leak":
			cfg.Mask, cfg.Opt, cfg.Eta, cfg.LeakMoments = "refractory", "adam", 1e-3, true
		case "adam-readout-only":
			cfg.Mask, cfg.Opt, cfg.Eta, cfg.LeakMoments, cfg.ReplayReadoutOnly = "refractory", "adam", 1e-3, true, true
		case "anchor":
			cfg.Mask, cfg.Anchor = "refractory", []float64{0.01, 0.02}
		case "anchor-mirror":
			cfg.Mask, cfg.Anchor = "mirror", []float64{0.01, 0.02}
		case "controller":
			cfg.Mask, cfg.KPAdapt = "refractory", 0.25
		case "controller-grad":
			cfg.Mask, cfg.KPAdapt, cfg.KPAdaptMode = "refractory", 0.25, "grad"
		case "controller-readout-only":
			cfg.Mask, cfg.KPAdapt, cfg.ReplayReadoutOnly = "refractory", 0.25, true
		case "controller-nodalefb":
			cfg.Mask, cfg.KPAdapt, cfg.NoDaleFB = "refractory", 0.25, true
		}
		cfg.Hidden = []int{24, 16, 12}
		if mask == "controller-skip" {
			cfg.Mask, cfg.KPAdapt, cfg.Skip = "refractory", 0.25, true
			cfg.Hidden = []int{24, 16, 16, 12}
		}
		// A 10x10 input gives W^1 rows of ~30 synapses, long enough for the
		// vector kernels.
		mk := func() *localRun {
			r, err := newLocalRun(&cfg, withBackground(tinyData(11, 20, 4, 10, 10), 1), withBackground(tinyData(12, 5, 4, 10, 10), 2), pairTasks(4), 11, Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		a, b := mk(), mk()
		b.nt.generalOnly = true
		stepN(a, 200)
		stepN(b, 200)
		for l := 1; l <= a.nt.L; l++ {
			la, lb := a.nt.lay[l], b.nt.lay[l]
			if !bitsEqual(la.w, lb.w) || !bitsEqual(la.fb, lb.fb) || !bitsEqual(la.m1, lb.m1) || !bitsEqual(la.m2, lb.m2) ||
				!bitsEqual(la.bias, lb.bias) || !bitsEqual(la.bm1, lb.bm1) || !bitsEqual(la.bm2, lb.bm2) || !bitsEqual(la.wT, lb.wT) {
				t.Fatalf("mask %s: layer %d differs between the fast and the general path", mask, l)
			}
			if sa, sb := a.nt.skip[l], b.nt.skip[l]; sa != nil &&
				(!bitsEqual(sa.w, sb.w) || !bitsEqual(sa.fb, sb.fb) || !bitsEqual(sa.m1, sb.m1) || !bitsEqual(sa.wT, sb.wT)) {
				t.Fatalf("mask %s: skip synapses into layer %d differ between the fast and the general path", mask, l)
			}
			if !bitsEqual(la.wSlow, lb.wSlow) || !bitsEqual(la.fbSlow, lb.fbSlow) || !bitsEqual(la.biasSlow, lb.biasSlow) {
				t.Fatalf("mask %s: layer %d: anchor copies differ", mask, l)
			}
			if la.kpEff != lb.kpEff || la.lastLam != lb.lastLam {
				t.Fatalf("mask %s: layer %d: controller lambda differs", mask, l)
			}
		}
		if !bitsEqual(a.nt.currentC(), b.nt.currentC()) {
			t.Fatalf("mask %s: c = W^1 o differs", mask)
		}
	}
}

// TestOffsetDrive: with a non-zero input offset (a majority background
// value per pixel, as on standardised MNIST) c = W^1 o matches the per-row
// sum over stored synapses bit for bit after training steps, and the
// forward pass equals the direct W^1 x up to rounding.
func TestOffsetDrive(t *testing.T) {
	t.Parallel()
	// Every update path, including the general one (anchor, leaking Adam
	// moments, the adaptive decay controller), must leave c current: until
	// train version 2 the general path computed it from the weights before
	// the update.
	variants := map[string]func(*LocalConfig){
		"default":    func(*LocalConfig) {},
		"anchor":     func(c *LocalConfig) { c.Anchor = []float64{3e-4, 3e-4} },
		"adam-leak":  func(c *LocalConfig) { c.Opt, c.Eta, c.LeakMoments = "adam", 1e-3, true },
		"controller": func(c *LocalConfig) { c.KPAdapt = 0.25 },
	}
	for name, set := range variants {
		train := withBackground(tinyData(1, 20, 4, 4, 5), 5)
		eval := withBackground(tinyData(2, 10, 4, 4, 5), 6)
		cfg := tinyConfig()
		set(&cfg)
		r, err := newLocalRun(&cfg, train, eval, pairTasks(4), 3, Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		nonzero := 0
		for _, o := range r.nt.off {
			if o != 0 {
				nonzero++
			}
		}
		if nonzero < 10 {
			t.Fatalf("only %d non-zero offsets", nonzero)
		}
		stepN(r, 20)
		nt := r.nt
		c := nt.currentC()
		for i := range nt.sizes[1] {
			if want := rowDotOff(nt.lay[1], i, nt.off); math.Float32bits(want) != math.Float32bits(c[i]) && want != c[i] {
				t.Fatalf("%s: c[%d] = %g, want %g", name, i, c[i], want)
			}
		}
		p := randomBatchPass(r, 3, NewRNG(1, StreamRun))
		nt.forward(p, nil)
		// Direct drive of layer 1 in float64, compared with the kept activity.
		ly := nt.lay[1]
		checked := 0
		for b := range p.n {
			for _, i := range p.activeOf(1, b) {
				checked++
				z := float64(ly.bias[i])
				for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
					z += float64(ly.w[s]) * float64(p.x[b*nt.sizes[0]+int(ly.col[s])])
				}
				if a := float64(p.a[1][b*nt.sizes[1]+int(i)]); math.Abs(a-z) > 1e-4*(1+math.Abs(z)) {
					t.Fatalf("%s: sample %d unit %d: a = %g, direct W x + b = %g", name, b, i, a, z)
				}
			}
		}
		if checked == 0 {
			t.Fatalf("%s: no active unit in layer 1 to check", name)
		}
	}
}

// withBackground gives ds a majority background value per pixel (as
// standardised MNIST has), so that the input offset o is non-zero.
func withBackground(ds *Dataset, seed int64) *Dataset {
	rng := NewRNG(seed, StreamRun)
	for i := range ds.X {
		if i%ds.D != 0 && (ds.X[i] == 0 || rng.IntN(3) == 0) {
			ds.X[i] = -0.4242
		}
	}
	return ds
}

// rowDotOff returns sum_s w[s] o[col[s]] over row i of ly, in stored order.
func rowDotOff(ly *layer, i int, o []float32) float32 {
	var acc float32
	lo, hi := ly.rowPtr[i], ly.rowPtr[i+1]
	w, col := ly.w[lo:hi], ly.col[lo:hi]
	for s, j := range col {
		acc += w[s] * o[j]
	}
	return acc
}
