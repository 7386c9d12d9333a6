package core

import (
	"math"
	"slices"
	"testing"
)

func TestReservoirFillAndAlgorithmR(t *testing.T) {
	t.Parallel()
	const K, D = 5, 3
	r := NewReservoir(K, D, 2)
	rng := NewRNG(7, StreamRun)
	mirror := NewRNG(7, StreamRun) // replays the draws Algorithm R must make
	held := make([]int, 0, K)      // sample id held in each slot, by the spec
	for s := range 40 {
		x := []float32{float32(s), float32(s) + 0.5, -float32(s)}
		z := []float32{float32(10 * s), float32(-s)}
		r.Offer(x, int32(s%10), z, rng)
		if len(held) < K {
			held = append(held, s)
		} else if j := mirror.IntN(s + 1); j < K {
			held[j] = s
		}
		if r.seen != s+1 || r.Len() != min(K, s+1) {
			t.Fatalf("after %d offers: seen=%d Len=%d", s+1, r.seen, r.Len())
		}
	}
	for slot, s := range held {
		wantX := []float32{float32(s), float32(s) + 0.5, -float32(s)}
		if !slices.Equal(r.Row(slot), wantX) || r.Label(slot) != int32(s%10) ||
			!slices.Equal(r.Logits(slot), []float32{float32(10 * s), float32(-s)}) {
			t.Errorf("slot %d holds (%v, %d, %v), want sample %d", slot, r.Row(slot), r.Label(slot), r.Logits(slot), s)
		}
	}
	// The buffer stores copies: mutating the caller's row must not leak in.
	x := []float32{1, 2, 3}
	r2 := NewReservoir(1, 3, 0)
	r2.Offer(x, 1, nil, rng)
	x[0] = 99
	if r2.Row(0)[0] != 1 {
		t.Error("Reservoir keeps a reference to the offered row")
	}
	// Both generators must be at the same point: Algorithm R drew exactly
	// one number per offer once full.
	// (rng also served r2, which drew nothing since it was not full.)
	if rng.Uint64() != mirror.Uint64() {
		t.Errorf("draw count differs from Algorithm R")
	}
}

func TestReservoirZeroCapacity(t *testing.T) {
	t.Parallel()
	r := NewReservoir(0, 2, 0)
	rng := NewRNG(1, StreamRun)
	ref := NewRNG(1, StreamRun)
	r.OfferBatch([]float32{1, 2, 3, 4}, []int32{0, 1}, nil, rng)
	if r.Len() != 0 || len(r.Sample(nil, 16, rng)) != 0 {
		t.Fatal("zero-capacity buffer holds or returns items")
	}
	if rng.Uint64() != ref.Uint64() {
		t.Error("zero-capacity buffer consumed random draws")
	}
}

// TestReservoirUniform checks Algorithm R's defining property: after N
// offers every sample is held with probability K/N.
func TestReservoirUniform(t *testing.T) {
	t.Parallel()
	const K, N, trials = 10, 50, 4000
	count := make([]int, N)
	rng := NewRNG(3, StreamRun)
	for range trials {
		r := NewReservoir(K, 1, 0)
		for s := range N {
			r.Offer([]float32{float32(s)}, 0, nil, rng)
		}
		for i := range r.Len() {
			count[int(r.Row(i)[0])]++
		}
	}
	p := float64(K) / N
	sd := math.Sqrt(trials * p * (1 - p))
	for s, c := range count {
		// 5 s.d. band: a false alarm has probability ~3e-5 over 50 samples.
		if math.Abs(float64(c)-trials*p) > 5*sd {
			t.Errorf("sample %d held %d times in %d trials, want about %.0f", s, c, trials, trials*p)
		}
	}
}

func TestReservoirSample(t *testing.T) {
	t.Parallel()
	r := NewReservoir(100, 1, 0)
	rng := NewRNG(5, StreamRun)
	for s := range 3 {
		r.Offer([]float32{float32(s)}, 0, nil, rng)
	}
	ref := NewRNG(9, StreamRun)
	rng = NewRNG(9, StreamRun)
	idx := r.Sample(nil, 16, rng)
	if len(idx) != 3 {
		t.Fatalf("Sample(16) from 3 items returned %d indices, want min(16, 3) = 3", len(idx))
	}
	for i, j := range idx {
		if want := ref.IntN(3); j != want {
			t.Errorf("index %d = %d, want %d (uniform with replacement)", i, j, want)
		}
	}
	// With replacement: 64 draws from 20 items must repeat some.
	for range 17 {
		r.Offer([]float32{0}, 0, nil, rng)
	}
	idx = r.Sample(idx, 64, rng)
	distinct := map[int]bool{}
	for _, j := range idx {
		if j < 0 || j >= 20 {
			t.Fatalf("index %d outside [0, 20)", j)
		}
		distinct[j] = true
	}
	if len(idx) != 20 || len(distinct) == len(idx) {
		t.Errorf("Sample(64) from 20 items: %d indices, %d distinct", len(idx), len(distinct))
	}
}

func TestReservoirContentsRoundTrip(t *testing.T) {
	r := NewReservoir(3, 2, 1)
	if err := r.SetContents([]float32{1, 2, 3, 4}, []int32{5, 6}, []float32{7, 8}, 9); err != nil {
		t.Fatal(err)
	}
	x, y, z, seen := r.Contents()
	if r.Len() != 2 || seen != 9 || len(x) != 4 || x[3] != 4 || y[1] != 6 || z[1] != 8 {
		t.Errorf("Contents = %v %v %v %d (Len %d)", x, y, z, seen, r.Len())
	}
	for _, bad := range []func() error{
		func() error { return r.SetContents(make([]float32, 8), make([]int32, 4), make([]float32, 4), 9) },
		func() error { return r.SetContents(make([]float32, 3), make([]int32, 2), make([]float32, 2), 9) },
		func() error { return r.SetContents(make([]float32, 4), make([]int32, 2), nil, 9) },
		func() error { return r.SetContents(make([]float32, 4), make([]int32, 2), make([]float32, 2), 1) },
	} {
		if bad() == nil {
			t.Error("SetContents accepted items that do not fit")
		}
	}
}
