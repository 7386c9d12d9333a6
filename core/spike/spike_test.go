package spike

import (
	"errors"
	"math"
	"slices"
	"testing"

	"repro/core"
)

func TestQuantile(t *testing.T) {
	t.Parallel()
	tests := []struct {
		v    []float32
		q    float64
		want float64
	}{
		{[]float32{5, 1, 4, 2, 3}, 0.999, 4.996}, // h = 3.996: 4 + 0.996 (5 - 4)
		{[]float32{5, 1, 4, 2, 3}, 0.5, 3},
		{[]float32{5, 1, 4, 2, 3}, 1, 5},
		{[]float32{5, 1, 4, 2, 3}, 0, 1},
		{[]float32{7}, 0.999, 7},
		{[]float32{0.5, 0.5, 2, 3}, 0.999, 2.997}, // h = 2.997
	}
	for _, tc := range tests {
		// The interpolation is done in float64 on float32 inputs: exact to
		// about 1e-15 relative.
		if got := Quantile(tc.v, tc.q); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("Quantile(%v, %g) = %.15g, want %g", tc.v, tc.q, got, tc.want)
		}
	}
}

// handNetwork is 2 inputs, 3 hidden units (k given), 1 hidden unit that
// never fires, and 2 outputs.
func handNetwork(k int) *core.Network {
	return &core.Network{
		Sizes: []int{2, 3, 1, 2},
		K:     []int{0, k, 1, 0},
		W:     [][]float32{nil, {1, 0, 0, 1, -1, 0}, {0, 0, 0}, {1, -1}},
		B:     [][]float32{nil, {0, 0, 0}, {-1}, {0, 0}},
		Mask:  make([][]bool, 4),
	}
}

// TestThresholdsHand: the post-k-WTA positive rates of three samples
// through a hand network, and their 99.9th percentile worked by hand.
func TestThresholdsHand(t *testing.T) {
	t.Parallel()
	x := []float32{1, 2, 3, -1, 0.5, 0.5}
	// Hidden drives: (1, 2, -1), (3, -1, -3), (0.5, 0.5, -0.5).
	tests := []struct {
		k    int
		want float32
	}{
		// k = 3: positive rates 1, 2, 3, 0.5, 0.5; sorted 0.5 0.5 1 2 3,
		// h = 0.999 * 4 = 3.996: 2 + 0.996 (3 - 2).
		{3, 2.996},
		// k = 1: 2 | 3 | 0.5, 0.5 (a tie at the top keeps both); sorted
		// 0.5 0.5 2 3, h = 2.997: 2 + 0.997.
		{1, 2.997},
	}
	for _, tc := range tests {
		thr, err := Thresholds(handNetwork(tc.k), x, 3, 0.999)
		if err != nil {
			t.Fatal(err)
		}
		// Layer 2 is never positive (bias -1, no weight): threshold 1.
		if math.Abs(float64(thr[1]-tc.want)) > 1e-6 || thr[2] != 1 || thr[0] != 0 || thr[3] != 0 {
			t.Errorf("k = %d: thresholds %v, want [0 %g 1 0]", tc.k, thr, tc.want)
		}
	}
	if _, err := Thresholds(handNetwork(1), x[:5], 3, 0.999); !errors.Is(err, ErrInput) {
		t.Errorf("short calibration set: %v, want ErrInput", err)
	}
}

// TestHandSimulation follows four steps of a hand case with deterministic
// input (intensities 255 and 0) and checks every count, the tie rule of
// the spike budget and the events.
func TestHandSimulation(t *testing.T) {
	t.Parallel()
	// Input pixel 0 always spikes, pixel 1 never. Layer 1: drives 1 and
	// 0.5 per step, k = 1, threshold 1; W^1's mask has 3 of 4 synapses
	// (fan-out 1.5). The readout is dense (fan-out 2).
	nw := &core.Network{
		Sizes: []int{2, 2, 2},
		K:     []int{0, 1, 0},
		W:     [][]float32{nil, {1, 0, 0.5, 0}, {1, 0, 0, 1}},
		B:     [][]float32{nil, {0, 0}, {0, 0}},
		Mask:  [][]bool{nil, {true, false, true, true}, nil},
	}
	c, err := Convert(nw, []float32{0, 0}, []float32{1, 1}, []float32{0, 1, 0})
	if err != nil {
		t.Fatal(err)
	}
	// V after integration / fired / V after reset, per step:
	//   1: (1, 0.5)   unit 0      (0, 0.5)
	//   2: (1, 1)     unit 0 (tie at the top: the lower index)   (0, 1)
	//   3: (1, 1.5)   unit 1      (1, 0.5)
	//   4: (2, 1)     unit 0      (1, 1)
	// Readout sums spikes x threshold through the identity: (3, 1).
	k := c.Run([]uint8{255, 0}, []int32{0}, 4, core.NewRNG(0, core.StreamConvert))
	if k.InputSpikes != 4 || !slices.Equal(k.Spikes, []int64{4}) || k.Correct != 1 || k.Pred[0] != 0 {
		t.Fatalf("counts %+v, want 4 input spikes, 4 hidden spikes, class 0", k)
	}
	if !slices.Equal(c.out, []float32{3, 1}) || !slices.Equal(c.v[1], []float32{1, 1}) {
		t.Errorf("readout %v and potentials %v, want [3 1] and [1 1]", c.out, c.v[1])
	}
	// 4 input spikes x 1.5 + 4 hidden spikes x 2.
	if got := c.Events(k); got != 14 {
		t.Errorf("events %g, want 14", got)
	}
	if c.FanOut(0) != 1.5 || c.FanOut(1) != 2 {
		t.Errorf("fan-outs %g %g, want 1.5 2", c.FanOut(0), c.FanOut(1))
	}
}

// randomNetwork is a d-24-12-C network (randomNetworkSized).
func randomNetwork(rng *core.RNG, d, classes int) *core.Network {
	return randomNetworkSized(rng, []int{d, 24, 12, classes})
}

// randomNetworkSized is a network of the given layer sizes with 30%
// connectivity into the hidden layers, k = 10%, and random weights and
// biases.
func randomNetworkSized(rng *core.RNG, sizes []int) *core.Network {
	L := len(sizes) - 1
	nw := &core.Network{Sizes: sizes, K: make([]int, L+1), W: make([][]float32, L+1), B: make([][]float32, L+1), Mask: make([][]bool, L+1)}
	for l := 1; l <= L; l++ {
		nIn, nOut := sizes[l-1], sizes[l]
		nw.W[l] = make([]float32, nIn*nOut)
		nw.B[l] = make([]float32, nOut)
		if l < L {
			nw.K[l] = core.KWTAK(0.1, nOut)
			nw.Mask[l] = make([]bool, nIn*nOut)
		}
		for s := range nw.W[l] {
			if l < L && rng.Float64() >= 0.3 {
				continue
			}
			if l < L {
				nw.Mask[l][s] = true
			}
			nw.W[l][s] = float32(rng.NormFloat64() / math.Sqrt(0.3*float64(nIn)))
		}
		for i := range nw.B[l] {
			nw.B[l][i] = float32(rng.NormFloat64() * 0.1)
		}
	}
	return nw
}

// randomImages returns n raw images of d pixels, about a fifth of them lit
// (mostly fully), and their standardisation statistics.
func randomImages(rng *core.RNG, n, d int) (raw []uint8, mean, sd []float32) {
	raw = make([]uint8, n*d)
	for i := range raw {
		if j := i % d; j%5 == int(rng.IntN(5)) && j > 0 {
			raw[i] = uint8(128 + rng.IntN(128))
			if rng.IntN(2) == 0 {
				raw[i] = 255
			}
		}
	}
	mean, sd = make([]float32, d), make([]float32, d)
	for j := range d {
		var s, s2 float64
		for i := range n {
			v := float64(raw[i*d+j]) / 255
			s += v
			s2 += v * v
		}
		m := s / float64(n)
		mean[j] = float32(m)
		sd[j] = float32(math.Sqrt(max(s2/float64(n)-m*m, 0)))
		if sd[j] < 1e-6 {
			sd[j] = 1
		}
	}
	return raw, mean, sd
}

func standardise(raw []uint8, mean, sd []float32) []float32 {
	d := len(mean)
	x := make([]float32, len(raw))
	for i, v := range raw {
		x[i] = (float32(v)/255 - mean[i%d]) / sd[i%d]
	}
	return x
}

// TestFoldingExpectation: with the standardisation folded into layer 1,
// the expected input current of a step is the rate network's layer-1
// drive of the standardised image; and the mean current over many
// simulated steps approaches it.
func TestFoldingExpectation(t *testing.T) {
	t.Parallel()
	rng := core.NewRNG(1, core.StreamRun)
	const d = 30
	nw := randomNetwork(rng, d, 4)
	raw, mean, sd := randomImages(rng, 50, d)
	c, err := Convert(nw, mean, sd, []float32{0, 1, 1, 0})
	if err != nil {
		t.Fatal(err)
	}
	x := standardise(raw, mean, sd)
	n1 := nw.Sizes[1]
	px := raw[:d]
	for i := range n1 {
		var rate, folded float64 = float64(nw.B[1][i]), float64(c.b1[i])
		for j := range d {
			rate += float64(nw.W[1][i*d+j]) * float64(x[j])
			folded += float64(c.w1[j*n1+i]) * float64(px[j]) / 255
		}
		// float32 weights and statistics: agreement to ~1e-5 of the drive.
		if math.Abs(rate-folded) > 1e-5*(1+math.Abs(rate)) {
			t.Errorf("unit %d: folded expectation %g, rate drive %g", i, folded, rate)
		}
	}
	// Monte Carlo: the mean of 20,000 steps lies within 5 standard errors.
	const steps = 20000
	sum := make([]float64, n1)
	sum2 := make([]float64, n1)
	src := &bitSource{rng: core.NewRNG(2, core.StreamConvert)}
	for range steps {
		for i, v := range c.inputCurrent(px, 0, src) {
			sum[i] += float64(v)
			sum2[i] += float64(v) * float64(v)
		}
	}
	for i := range n1 {
		want := float64(nw.B[1][i])
		for j := range d {
			want += float64(nw.W[1][i*d+j]) * float64(x[j])
		}
		m := sum[i] / steps
		se := math.Sqrt(max(sum2[i]/steps-m*m, 0) / steps)
		if math.Abs(m-want) > 5*se+1e-5 {
			t.Errorf("unit %d: mean current %g, want %g (s.e. %g)", i, m, want, se)
		}
	}
}

// TestConvergence: on a small network the spiking prediction agrees with
// the rate network's more often as the time budget grows, and almost
// always at the longest. The limit is exact when k-WTA does not bind and
// no rate exceeds its threshold (q = 1): a unit's spike count times its
// threshold then approaches T_s times its rate. Where k-WTA binds, the
// per-step budget only approximates it (a unit outside the rate network's
// top k fires whenever the top units have just reset), which is the
// conversion's own error, not a defect of the simulation.
func TestConvergence(t *testing.T) {
	t.Parallel()
	rng := core.NewRNG(3, core.StreamRun)
	const d, n = 40, 300
	nw := randomNetwork(rng, d, 5)
	for l := 1; l < nw.L(); l++ {
		nw.K[l] = nw.Sizes[l]
	}
	raw, mean, sd := randomImages(rng, n, d)
	x := standardise(raw, mean, sd)
	thr, err := Thresholds(nw, x, n, 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Convert(nw, mean, sd, thr)
	if err != nil {
		t.Fatal(err)
	}
	f := core.NewInference(nw)
	rate := make([]int32, n)
	for i := range n {
		rate[i] = int32(f.Forward(x[i*d : (i+1)*d]))
	}
	var agree []float64
	for _, steps := range []int{4, 32, 256, 2048} {
		k := c.Run(raw, rate, steps, core.NewRNG(0, core.StreamConvert))
		agree = append(agree, float64(k.Correct)/n)
	}
	t.Logf("agreement with the rate network at T_s = 4, 32, 256, 2048: %v", agree)
	for i := 1; i < len(agree); i++ {
		if agree[i] < agree[i-1]-0.02 {
			t.Errorf("agreement fell from %g to %g", agree[i-1], agree[i])
		}
	}
	if agree[len(agree)-1] < 0.9 || agree[len(agree)-1] <= agree[0] {
		t.Errorf("agreement %v: want it to grow to at least 0.9", agree)
	}
}

// TestRunDeterministic: the same generator state gives the same counts
// bit for bit; another seed gives other draws.
func TestRunDeterministic(t *testing.T) {
	t.Parallel()
	rng := core.NewRNG(4, core.StreamRun)
	const d, n = 30, 40
	nw := randomNetwork(rng, d, 3)
	raw, mean, sd := randomImages(rng, n, d)
	thr, err := Thresholds(nw, standardise(raw, mean, sd), n, 0.999)
	if err != nil {
		t.Fatal(err)
	}
	y := make([]int32, n)
	run := func(seed int64) *Counts {
		c, err := Convert(nw, mean, sd, thr)
		if err != nil {
			t.Fatal(err)
		}
		return c.Run(raw, y, 8, core.NewRNG(seed, core.StreamConvert))
	}
	a, b, other := run(0), run(0), run(1)
	if a.InputSpikes != b.InputSpikes || !slices.Equal(a.Spikes, b.Spikes) || !slices.Equal(a.Pred, b.Pred) {
		t.Errorf("two runs differ: %+v %+v", a, b)
	}
	if a.InputSpikes == other.InputSpikes && slices.Equal(a.Spikes, other.Spikes) {
		t.Errorf("seeds 0 and 1 drew the same spikes")
	}
}

func TestConvertErrors(t *testing.T) {
	t.Parallel()
	nw := handNetwork(1)
	tests := []struct {
		name          string
		mean, sd, thr []float32
	}{
		{"short mean", []float32{0}, []float32{1, 1}, []float32{0, 1, 1, 0}},
		{"zero sd", []float32{0, 0}, []float32{1, 0}, []float32{0, 1, 1, 0}},
		{"nan mean", []float32{float32(math.NaN()), 0}, []float32{1, 1}, []float32{0, 1, 1, 0}},
		{"threshold count", []float32{0, 0}, []float32{1, 1}, []float32{0, 1, 0}},
		{"zero threshold", []float32{0, 0}, []float32{1, 1}, []float32{0, 0, 1, 0}},
		{"inf threshold", []float32{0, 0}, []float32{1, 1}, []float32{0, 1, float32(math.Inf(1)), 0}},
	}
	for _, tc := range tests {
		if _, err := Convert(nw, tc.mean, tc.sd, tc.thr); !errors.Is(err, ErrInput) {
			t.Errorf("%s: %v, want ErrInput", tc.name, err)
		}
	}
	bad := handNetwork(1)
	bad.W[1] = bad.W[1][:5]
	if _, err := Convert(bad, []float32{0, 0}, []float32{1, 1}, []float32{0, 1, 1, 0}); !errors.Is(err, core.ErrNetwork) {
		t.Errorf("malformed network: %v, want core.ErrNetwork", err)
	}
}
