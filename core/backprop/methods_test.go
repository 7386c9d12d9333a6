package backprop

import (
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"

	"repro/core"
)

// TestStepMaskedConfined checks that a masked Adam step leaves parameters
// and both moments outside the mask bit-for-bit unchanged, moves them
// inside it, and advances the shared step counter.
func TestStepMaskedConfined(t *testing.T) {
	t.Parallel()
	rng := core.NewRNG(5, 0)
	net := NewNet([]int{9, 16, 12, 4}, 0.25, rng)
	a := NewAdam(len(net.Params), 1e-2, 1e-3)
	// A few unmasked steps first so the moments are non-zero everywhere.
	for range 3 {
		a.Step(net.Params, randVec(rng, len(net.Params)), a.LR)
	}
	L := net.Layers()
	awake := make([][]bool, L+1)
	for l := 1; l < L; l++ {
		awake[l] = make([]bool, net.Sizes[l])
		for i := range awake[l] {
			awake[l][i] = rng.IntN(3) > 0
		}
	}
	mask := &Mask{Pre: make([][]bool, L), Post: make([][]bool, L)}
	for l := 0; l < L-1; l++ {
		mask.Pre[l], mask.Post[l] = awake[l], awake[l+1]
	}
	p0, m0, v0 := slices.Clone(net.Params), slices.Clone(a.M), slices.Clone(a.V)
	grad := randVec(rng, len(net.Params))
	for i := range grad {
		if grad[i] == 0 {
			grad[i] = 1 // every in-mask parameter must move
		}
	}
	t0 := a.T
	a.StepMasked(net, net.Params, grad, mask, a.LR)
	if a.T != t0+1 {
		t.Errorf("step counter %d, want %d", a.T, t0+1)
	}
	if i := slices.IndexFunc(grad, func(g float32) bool { return g != 0 }); i >= 0 {
		t.Errorf("gradient %d is %g after the step, want every entry cleared", i, grad[i])
	}
	// Expected mask per parameter, from the definition.
	inMask := make([]bool, len(net.Params))
	o := 0
	for l := range L {
		in, out := net.Sizes[l], net.Sizes[l+1]
		for j := range in {
			for i := range out {
				preAwake := l == 0 || l == L-1 || awake[l][j]
				postAwake := l < L-1 && awake[l+1][i]
				inMask[o+j*out+i] = l == L-1 || !preAwake || !postAwake
			}
		}
		o += in * out
		for i := range out {
			inMask[o+i] = l == L-1 || !awake[l+1][i]
		}
		o += out
	}
	var moved, kept int
	for i := range net.Params {
		same := math.Float32bits(net.Params[i]) == math.Float32bits(p0[i]) &&
			math.Float32bits(a.M[i]) == math.Float32bits(m0[i]) && math.Float32bits(a.V[i]) == math.Float32bits(v0[i])
		switch {
		case inMask[i] && same:
			t.Errorf("param %d inside the mask did not move", i)
		case !inMask[i] && !same:
			t.Errorf("param %d outside the mask changed: p %g->%g m %g->%g v %g->%g", i, p0[i], net.Params[i], m0[i], a.M[i], v0[i], a.V[i])
		case inMask[i]:
			moved++
		default:
			kept++
		}
	}
	if moved == 0 || kept == 0 {
		t.Errorf("degenerate mask: %d moved, %d kept", moved, kept)
	}
}

// TestProjectAGEM checks A-GEM's projection: afterwards g . gref >= 0 (up
// to float32 rounding), and a g already agreeing with gref is untouched.
func TestProjectAGEM(t *testing.T) {
	t.Parallel()
	rng := core.NewRNG(6, 0)
	projected := 0
	for trial := range 200 {
		n := 1 + rng.IntN(300)
		g, gref := randVec(rng, n), randVec(rng, n)
		g0 := slices.Clone(g)
		before := dot64(g, gref)
		project(g, gref)
		after := dot64(g, gref)
		// Rounding the projected vector to float32 leaves a residue of
		// order 1e-7 * |g| * |gref|.
		tol := 1e-6 * math.Sqrt(dot64(g0, g0)*dot64(gref, gref))
		if after < -tol {
			t.Fatalf("trial %d: g.gref = %g after projection (before %g)", trial, after, before)
		}
		if before >= 0 && !slices.Equal(g, g0) {
			t.Fatalf("trial %d: g.gref = %g >= 0 but g was changed", trial, before)
		}
		if before < 0 {
			projected++
			if math.Abs(after) > tol {
				t.Fatalf("trial %d: projected g.gref = %g, want 0", trial, after)
			}
		}
	}
	if projected == 0 {
		t.Fatal("no trial needed a projection")
	}
}

func dot64(a, b []float32) float64 {
	s := 0.0
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

// TestERACEMasksAbsentClasses checks ER-ACE's incoming loss: the classes
// absent from the batch (past and future alike) get exactly zero gradient
// and are left out of the softmax; the present ones get softmax-over-present
// minus one-hot.
func TestERACEMasksAbsentClasses(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name string
		y    []int32
	}{
		{"first batch of task 1", []int32{0, 1, 1, 0}},
		{"one class only", []int32{3, 3}},
		{"mixed", []int32{2, 7, 9, 2}},
	}
	rng := core.NewRNG(7, 0)
	const C = 10
	for _, tc := range cases {
		mask := make([]bool, C)
		presentClasses(tc.y, mask)
		for c := range C {
			if mask[c] != slices.Contains(tc.y, int32(c)) {
				t.Errorf("%s: mask[%d] = %v", tc.name, c, mask[c])
			}
		}
		for _, y := range tc.y {
			z := randVec(rng, C)
			dz := randVec(rng, C) // garbage to be overwritten
			lossGrad(CrossEntropy, z, y, 1, mask, dz)
			var sum float64
			for c := range C {
				if mask[c] {
					sum += math.Exp(float64(z[c]))
				}
			}
			for c := range C {
				want := 0.0
				if mask[c] {
					want = math.Exp(float64(z[c])) / sum
					if int32(c) == y {
						want--
					}
				}
				if !mask[c] && dz[c] != 0 {
					t.Errorf("%s: absent class %d has gradient %g", tc.name, c, dz[c])
				}
				// float32 gradient of a float64 softmax: 1e-6.
				if math.Abs(float64(dz[c])-want) > 1e-6 {
					t.Errorf("%s: class %d gradient %g, want %g", tc.name, c, dz[c], want)
				}
			}
		}
	}
}

// TestDERPPStoresOwnLogits runs DER++ steps over a single pass (every sample
// offered once) with a small buffer and checks that every buffer slot holds
// exactly the logits the network produced for that slot's sample in the
// step that offered it (pre-step weights): logits travel with accepted
// samples only and are overwritten together with them.
func TestDERPPStoresOwnLogits(t *testing.T) {
	t.Parallel()
	train := blobs(300, 12, 4, 3)
	cfg := DefaultConfig()
	cfg.Method, cfg.Loss, cfg.Hidden, cfg.K, cfg.Batch, cfg.ReplayBatch = MethodDERPP, "ce", []int{10, 8}, 20, 16, 16
	cfg.Alpha, cfg.Beta = 0.03, 1
	r := newRunner(cfg, train, train, []core.Task{{0, 1, 2, 3}}, 11, core.Hooks{})
	step := r.newBatch()
	probe := NewPass(r.net, 1)
	want := map[string][]float32{} // sample row -> logits at its offer
	key := func(x []float32) string {
		var b strings.Builder
		for _, v := range x {
			b.WriteString(string(rune(math.Float32bits(v) % 1e6)))
		}
		return b.String()
	}
	perm := rand.New(rand.NewPCG(1, 2)).Perm(train.N)
	for b := 0; b < train.N; b += cfg.Batch {
		idx := perm[b:min(b+cfg.Batch, train.N)]
		for _, i := range idx {
			probe.SetRows(1)
			copy(probe.Input(0, train.D), train.Row(i))
			r.net.Forward(probe)
			want[key(train.Row(i))] = slices.Clone(probe.A[r.net.Layers()][:train.Classes])
		}
		step(idx)
	}
	if r.buf.Len() != cfg.K {
		t.Fatalf("buffer holds %d, want %d", r.buf.Len(), cfg.K)
	}
	for s := range r.buf.Len() {
		w, ok := want[key(r.buf.Row(s))]
		if !ok {
			t.Fatalf("slot %d holds a row that was never offered", s)
		}
		got := r.buf.Logits(s)
		for c := range w {
			if math.Float32bits(got[c]) != math.Float32bits(w[c]) {
				t.Fatalf("slot %d: stored logits %v, want the offering step's %v", s, got, w)
			}
		}
	}
}

// TestProposition1 checks the paper's Proposition 1 on the backprop k-WTA
// network, with and without a rotation suppression: an update confined to
// synapses whose presynaptic unit is silent on the batch leaves every
// hidden activity and the output on that batch bit-for-bit unchanged, for
// any magnitude; and the isolated replay step of the local schedule, with
// its postsynaptic part removed (post units all treated as awake), is such
// an update.
func TestProposition1(t *testing.T) {
	t.Parallel()
	for _, rotate := range []bool{false, true} {
		name := "isolated"
		if rotate {
			name = "isolated+rotation"
		}
		t.Run(name, func(t *testing.T) {
			rng := core.NewRNG(8, 0)
			net := NewNet([]int{10, 40, 30, 5}, 0.1, rng)
			L := net.Layers()
			rows := 6
			p := NewPass(net, rows)
			p.SetRows(rows)
			for i := range p.A[0][:rows*10] {
				p.A[0][i] = float32(rng.NormFloat64())
			}
			if rotate {
				p.Suppress = make([][]bool, L+1)
				for l := 1; l < L; l++ {
					p.Suppress[l] = make([]bool, net.Sizes[l])
					for i := range p.Suppress[l] {
						p.Suppress[l][i] = rng.IntN(4) == 0
					}
				}
			}
			net.Forward(p)
			before := make([][]float32, L+1)
			awake := make([][]bool, L+1)
			for l := 1; l <= L; l++ {
				before[l] = slices.Clone(p.A[l][:rows*net.Sizes[l]])
				if l < L {
					awake[l] = make([]bool, net.Sizes[l])
					anyNonZero(awake[l], p.A[l], rows, make([]uint32, net.Sizes[l]))
				}
			}
			check := func(what string) {
				t.Helper()
				net.Forward(p)
				for l := 1; l <= L; l++ {
					for i, v := range p.A[l][:rows*net.Sizes[l]] {
						if math.Float32bits(v) != math.Float32bits(before[l][i]) {
							t.Fatalf("%s: layer %d activity %d changed: %g -> %g", what, l, i, before[l][i], v)
						}
					}
				}
			}
			// (a) A large arbitrary change of every pre-silent synapse.
			moved := 0
			for l := 1; l < L; l++ {
				out := net.Sizes[l+1]
				for j, a := range awake[l] {
					if !a {
						for i := range out {
							net.W[l][j*out+i] += float32(100 * rng.NormFloat64())
							moved++
						}
					}
				}
			}
			if moved == 0 {
				t.Fatal("no silent presynaptic unit")
			}
			check("pre-silent perturbation")
			// (b) Masked Adam steps on a replay gradient restricted to
			// pre-silent synapses: Pre = awake sets, Post = all awake, the
			// readout held fixed (readout pre-silent rows only).
			all := func(n int) []bool {
				b := make([]bool, n)
				for i := range b {
					b[i] = true
				}
				return b
			}
			mask := &Mask{Pre: make([][]bool, L), Post: make([][]bool, L)}
			mask.Post[0] = all(net.Sizes[1])
			for l := 1; l < L; l++ {
				mask.Pre[l], mask.Post[l] = awake[l], all(net.Sizes[l+1])
			}
			a := NewAdam(len(net.Params), 1e-1, 1e-3)
			rp := NewPass(net, rows)
			rp.SetRows(rows)
			for i := range rp.A[0][:rows*10] {
				rp.A[0][i] = float32(rng.NormFloat64())
			}
			grad := make([]float32, len(net.Params))
			for range 5 {
				net.Forward(rp)
				y := make([]int32, rows)
				for i := range y {
					y[i] = int32(rng.IntN(5))
				}
				lossRows(SquaredError, rp, y, L, 5)
				clear(grad)
				net.Backward(rp, grad)
				a.StepMasked(net, net.Params, grad, mask, a.LR)
			}
			check("masked replay steps")
		})
	}
}

// TestConfigValidate checks that each invalid field is reported by name.
func TestConfigValidate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		edit  func(*Config)
		field string // "" = valid
	}{
		{"default", func(*Config) {}, ""},
		{"method", func(c *Config) { c.Method = "gem" }, "method"},
		{"hidden empty", func(c *Config) { c.Hidden = nil }, "hidden"},
		{"hidden zero", func(c *Config) { c.Hidden = []int{256, 0} }, "hidden"},
		{"loss", func(c *Config) { c.Loss = "l1" }, "loss"},
		{"erace mse", func(c *Config) { c.Method = MethodERACE }, "loss"},
		{"lr", func(c *Config) { c.LR = 0 }, "lr"},
		{"lr nan", func(c *Config) { c.LR = math.NaN() }, "lr"},
		{"k", func(c *Config) { c.K = -1 }, "k"},
		{"none with buffer", func(c *Config) { c.Method = MethodNone }, "k"},
		{"epochs", func(c *Config) { c.Epochs = 0 }, "epochs"},
		{"batch", func(c *Config) { c.Batch = 0 }, "batch"},
		{"replay_batch", func(c *Config) { c.ReplayBatch = 0 }, "replay_batch"},
		{"alpha", func(c *Config) { c.Alpha = -1 }, "alpha"},
		{"kwta", func(c *Config) { c.KWTA = 1.5 }, "kwta"},
		{"rotate off-schedule", func(c *Config) { c.Rotate = true }, "rotate"},
		{"replay_gain", func(c *Config) { c.Method, c.ReplayGain = MethodLocal, 0 }, "replay_gain"},
	}
	for _, tc := range cases {
		c := DefaultConfig()
		tc.edit(&c)
		err := c.Validate()
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: Validate() = %v, want nil", tc.name, err)
		case tc.field != "" && (err == nil || !strings.Contains(err.Error(), tc.field)):
			t.Errorf("%s: Validate() = %v, want an error naming %q", tc.name, err, tc.field)
		}
	}
	for _, name := range []string{"bp_er_1000", "bp_er_200", "bp_er_5000", "static_bp_none", "bp_derpp_a0.03_b1.0_w512_ce",
		"bp_derpp_K200", "bp_derpp_K5000", "bp_erace_1000", "bp_agem_1000_w512",
		"bpk_er_lr3e5", "bpk_iso_lr1e4", "bpk_er_rot_lr1e4", "bpk_iso_rot_lr1e4", "mlp_bp_w",
		"g20_d3_bp_er", "g20_d4_bp_er", "g20_d5_bp_er"} {
		c, ok := testPreset(name)
		if !ok {
			t.Errorf("testPreset(%q) unknown", name)
			continue
		}
		if err := c.Validate(); err != nil {
			t.Errorf("testPreset(%q).Validate() = %v", name, err)
		}
	}
	// The depth ladder's BP+ER: bp_er_1000 at 512-256-128 plus 128s.
	for name, want := range map[string][]int{"g20_d3_bp_er": {512, 256, 128}, "g20_d5_bp_er": {512, 256, 128, 128, 128}} {
		c, _ := testPreset(name)
		base, _ := testPreset("bp_er_1000")
		base.Hidden = want
		if !reflect.DeepEqual(c, base) {
			t.Errorf("%s = %+v, want bp_er_1000 with hidden %v", name, c, want)
		}
	}
	// The substrate ladder's dense reference: fit_bp on the wide core.
	if c, _ := testPreset("mlp_bp_w"); c.Method != MethodNone || c.K != 0 || c.Epochs != 30 || c.Batch != 256 ||
		c.Loss != "mse" || c.LR != 1e-3 || c.WeightDecay != 1e-3 || len(c.Hidden) != 2 || c.Hidden[0] != 256 || c.Hidden[1] != 128 {
		t.Errorf("mlp_bp_w = %+v", c)
	}
}
