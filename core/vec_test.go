package core

import (
	"math"
	"slices"
	"testing"

	"repro/internal/kernels"
)

// TestSyncT checks a dense tiled layer's column copy (syncT, a tile at a
// time through kernels.TransposeTile) against the synapse-by-synapse copy.
func TestSyncT(t *testing.T) {
	t.Parallel()
	rng := NewRNG(11, StreamRun)
	for _, shape := range [][2]int{{128, 16}, {130, 24}, {12, 8}} {
		nIn, nOut := shape[0], shape[1]
		w := make([]float32, nIn*nOut)
		for i := range w {
			w[i] = float32(rng.NormFloat64())
		}
		ly := newLayer(nIn, nOut, w, nil, nil, false, nil, false, true)
		if !ly.dense() || !ly.tiled {
			t.Fatalf("%dx%d: want a dense tiled layer", nOut, nIn)
		}
		for i := range ly.w {
			ly.w[i] = float32(rng.NormFloat64())
		}
		want := slices.Clone(ly.wT)
		for s, k := range ly.pos {
			want[k] = ly.w[s]
		}
		ly.syncT()
		if !bitsEqual(ly.wT, want) {
			t.Fatalf("%dx%d: syncT differs from the synapse-by-synapse copy", nOut, nIn)
		}
	}
}

// TestAnchorRowVec checks the anchor's vector kernel, with the loop on the
// rest of the row, against the loop alone bit for bit, with and without
// the decay (a -0 decay is no decay, as in the loop), rows of every tail
// length.
func TestAnchorRowVec(t *testing.T) {
	t.Parallel()
	rng := NewRNG(14, StreamRun)
	ly := &layer{}
	ly.anchorMu, ly.anchorLam = 3e-4, 0.02
	for n := range 41 {
		for _, lam := range []float32{0, float32(math.Copysign(0, -1)), 1e-4} {
			w := make([]float32, n)
			ws := make([]float32, n)
			for s := range w {
				w[s] = float32(rng.NormFloat64() * 0.1)
				ws[s] = float32(rng.NormFloat64() * 0.1)
			}
			if n > 3 {
				w[3] = float32(math.Inf(1)) // -0 * Inf would be NaN: a -0 decay must be skipped
			}
			col := make([]int32, n)
			w1, ws1 := slices.Clone(w), slices.Clone(ws)
			ly.anchorRowGo(w1, nil, ws1, nil, col, lam, false)
			n8 := kernels.AnchorRowVec(w, ws, lam, ly.anchorMu, ly.anchorLam)
			ly.anchorRowGo(w[n8:], nil, ws[n8:], nil, col[n8:], lam, false)
			if !bitsEqual(w, w1) || !bitsEqual(ws, ws1) {
				t.Fatalf("n=%d lam=%g: kernel and loop differ", n, lam)
			}
		}
	}
}

// TestTwinAtActive checks both ways twinAtActive reads a twin's rows at the
// active columns (the dense product with a pick, the gather through the
// index map) against kernels.GatherRows bit for bit, on a dense twin at active
// fractions on both sides of the switch, and on a sparse twin.
func TestTwinAtActive(t *testing.T) {
	t.Parallel()
	rng := NewRNG(13, StreamRun)
	const nIn, nOut = 96, 40
	for _, sparse := range []bool{false, true} {
		w := make([]float32, nIn*nOut)
		fb := make([]float32, nIn*nOut)
		var keep []bool
		if sparse {
			keep = make([]bool, nIn*nOut)
		}
		for i := range fb {
			fb[i] = float32(rng.NormFloat64())
			if sparse {
				keep[i] = rng.IntN(3) == 0
			}
		}
		ly := newLayer(nIn, nOut, w, fb, keep, false, nil, false, true)
		ly.indexTwin()
		for _, k := range []int{1, 2, 3, 7, 12, 50, nIn} {
			act := make([]int32, k)
			for i, j := range rng.Perm(nIn)[:k] {
				act[i] = int32(j)
			}
			slices.Sort(act)
			senders := rng.IntN(nOut) + 1
			us := make([]float32, senders)
			offs := make([]int32, senders)
			for r, i := range rng.Perm(nOut)[:senders] {
				us[r] = float32(rng.NormFloat64())
				if r%5 == 0 {
					us[r] = float32(math.Copysign(0, -1))
				}
				offs[r] = int32(i * nIn)
			}
			want := make([]float32, k)
			kernels.GatherRows(want, us, offs, ly.fbPos, ly.fb[:len(ly.fb)+1], act)
			got := make([]float32, k)
			for i := range got {
				got[i] = float32(i) // twinAtActive sets acc, whatever it held
			}
			twinAtActive(got, us, offs, ly, act, make([]float32, nIn))
			if !bitsEqual(got, want) {
				t.Fatalf("sparse=%v active=%d senders=%d: %v, gatherRows %v", sparse, k, senders, got, want)
			}
		}
	}
}
