package core

import (
	"math"
	"testing"
)

// perturb adds huge random amounts to the synapses and biases selected by
// pick (synapse s of layer l into post i from pre j) and biasPick, then
// refreshes the derived state (column copy, c = W^1 o).
func perturb(nt *net, rng *RNG, scale float64, pick func(l, i, j int) bool, biasPick func(l, i int) bool) int {
	n := 0
	for l := 1; l <= nt.L; l++ {
		ly := nt.lay[l]
		for i := range ly.nOut {
			for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
				if pick(l, i, int(ly.col[s])) {
					ly.w[s] += float32(rng.NormFloat64() * scale)
					n++
				}
			}
			if biasPick != nil && biasPick(l, i) {
				ly.bias[i] += float32(rng.NormFloat64() * scale)
				n++
			}
		}
		ly.syncT()
	}
	nt.setOffset(nt.off)
	return n
}

// TestPropositionPreSilent: an update confined to synapses whose presynaptic
// unit is silent on the whole batch leaves every hidden activity and the
// output bit-for-bit unchanged, for any magnitude (Proposition 1).
func TestPropositionPreSilent(t *testing.T) {
	t.Parallel()
	for trial := range 12 {
		r := newTinyRun(t, tinyConfig(), int64(trial), 5+trial)
		nt := r.nt
		rng := NewRNG(int64(trial), StreamRun+1)
		p := randomBatchPass(r, 1+rng.IntN(6), rng)
		nt.forward(p, r.sup)
		before := snapshot(nt, p)
		aw := awakeOf(nt, p)
		inputSilent := make([]bool, nt.sizes[0])
		for j := range inputSilent {
			inputSilent[j] = nt.off[j] == 0
			for b := range p.n {
				if p.x[b*nt.sizes[0]+j] != 0 {
					inputSilent[j] = false
				}
			}
		}
		scale := math.Pow(10, float64(rng.IntN(7))-1) // 0.1 .. 1e5
		n := perturb(nt, rng, scale, func(l, i, j int) bool {
			if l == 1 {
				return inputSilent[j]
			}
			return !aw[l-1][j]
		}, nil)
		if n == 0 {
			t.Fatalf("trial %d: no pre-silent synapse to perturb", trial)
		}
		nt.forward(p, r.sup)
		after := snapshot(nt, p)
		for l := 1; l <= nt.L; l++ {
			if !bitsEqual(before[l], after[l]) {
				t.Errorf("trial %d: layer %d changed after a pre-silent update of %d synapses at scale %g", trial, l, n, scale)
			}
		}
	}
}

// TestCorollarySuppressed: any update into suppressed units (all their
// incoming synapses and biases) leaves the batch's activities unchanged.
func TestCorollarySuppressed(t *testing.T) {
	t.Parallel()
	for trial := range 12 {
		r := newTinyRun(t, tinyConfig(), int64(trial), 6)
		nt := r.nt
		rng := NewRNG(int64(trial), StreamRun+2)
		sup := make([][]float32, nt.L)
		for l := 1; l < nt.L; l++ {
			sup[l] = make([]float32, nt.sizes[l])
			for i := range sup[l] {
				if rng.IntN(3) == 0 {
					sup[l][i] = 1
				}
			}
		}
		p := randomBatchPass(r, 1+rng.IntN(6), rng)
		nt.forward(p, sup)
		before := snapshot(nt, p)
		scale := math.Pow(10, float64(rng.IntN(6)))
		hit := func(l, i int) bool { return l < nt.L && sup[l][i] == 1 }
		perturb(nt, rng, scale, func(l, i, _ int) bool { return hit(l, i) }, hit)
		nt.forward(p, sup)
		after := snapshot(nt, p)
		for l := 1; l < nt.L; l++ {
			if !bitsEqual(before[l], after[l]) {
				t.Errorf("trial %d: hidden layer %d changed after updating suppressed units at scale %g", trial, l, scale)
			}
		}
	}
}

// preKWTA returns relu(z) of hidden layer 1 for sample b, computed densely
// in float64 from the stored weights (no suppression).
func preKWTA1(nt *net, p *pass, b int) []float64 {
	ly := nt.lay[1]
	d := nt.sizes[0]
	out := make([]float64, ly.nOut)
	for i := range ly.nOut {
		z := float64(ly.bias[i])
		for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
			z += float64(ly.w[s]) * float64(p.x[b*d+int(ly.col[s])])
		}
		out[i] = max(z, 0)
	}
	return out
}

// TestPropositionPostAsleep: raising the drive of a naturally asleep unit
// within the k-WTA margin leaves the activities unchanged, and beyond it
// can change them (Proposition 2, both ways).
func TestPropositionPostAsleep(t *testing.T) {
	t.Parallel()
	held, broke := 0, 0
	for trial := range 20 {
		r := newTinyRun(t, tinyConfig(), int64(trial), 4)
		nt := r.nt
		rng := NewRNG(int64(trial), StreamRun+3)
		p := randomBatchPass(r, 1+rng.IntN(4), rng)
		nt.forward(p, nil)
		before := snapshot(nt, p)
		aw := awakeOf(nt, p)
		k := nt.k[1]
		// Room of each asleep unit: min over samples of tau_k - relu(z).
		best, room := -1, 0.0
		for i := range nt.sizes[1] {
			if aw[1][i] {
				continue
			}
			ri := math.Inf(1)
			for b := range p.n {
				v := preKWTA1(nt, p, b)
				vs := make([]float32, len(v))
				for u := range v {
					vs[u] = float32(v[u])
				}
				tau := float64(KthLargest(vs, k, make([]float32, len(vs))))
				ri = min(ri, tau-v[i])
			}
			if ri > room {
				best, room = i, ri
			}
		}
		if best < 0 || room < 1e-3 {
			continue
		}
		ly := nt.lay[1]
		saved := ly.bias[best]
		// Within the margin: a bias step of half the room.
		ly.bias[best] = saved + float32(room/2)
		nt.forward(p, nil)
		within := snapshot(nt, p)
		for l := 1; l <= nt.L; l++ {
			if !bitsEqual(before[l], within[l]) {
				t.Errorf("trial %d: layer %d changed within the margin (room %g)", trial, l, room)
			}
		}
		held++
		// Beyond the margin: a large step makes the unit win somewhere.
		ly.bias[best] = saved + float32(room+100)
		nt.forward(p, nil)
		beyond := snapshot(nt, p)
		if bitsEqual(before[1], beyond[1]) {
			t.Errorf("trial %d: a step beyond the margin left layer 1 unchanged", trial)
		}
		broke++
	}
	if held < 5 || broke < 5 {
		t.Fatalf("only %d/%d trials had an asleep unit with room", held, broke)
	}
}
