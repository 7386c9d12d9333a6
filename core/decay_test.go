package core

import (
	"math"
	"slices"
	"testing"
)

// TestDecayRowsMatchesFinishSyn: the controller's row loop and its vector
// kernel give the bits
// of finishSyn on every synapse synFree lets move, under every kind of
// mask, on the layers of a trained controller network (Dale signs, twins,
// absent synapses), with wrong-signed, signed-zero and decaying weights.
func TestDecayRowsMatchesFinishSyn(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.KPAdapt = 0.25
	r, err := newLocalRun(&cfg, tinyData(1, 20, 4, 4, 5), tinyData(2, 10, 4, 4, 5), pairTasks(4), 3, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	stepN(r, 10)
	rng := NewRNG(5, StreamRun)
	for l := 2; l < len(r.nt.lay); l++ {
		base := r.nt.lay[l]
		if base.absent == nil {
			t.Fatalf("layer %d has no absent synapses under the controller", l)
		}
		// Push some weights across the Dale line and to -0.
		for s := range base.w {
			switch rng.IntN(8) {
			case 0:
				base.w[s] = -base.w[s]
			case 1:
				base.w[s] = float32(math.Copysign(0, -1))
			}
			if base.fb != nil && rng.IntN(8) == 0 {
				base.fb[s] = -base.fb[s]
			}
		}
		post := make([]bool, base.nOut)
		pre := make([]bool, base.nIn)
		for i := range post {
			post[i] = rng.IntN(3) == 0
		}
		for j := range pre {
			pre[j] = rng.IntN(3) == 0
		}
		masks := map[string]*layerMask{
			"nil": nil, "frozen": {frozen: true}, "post only": {post: post},
			"pre all": {post: post, preAll: true}, "post and pre": {post: post, pre: pre},
			"all post": {postAll: true, pre: pre},
		}
		for name, m := range masks {
			for _, lam := range []float32{0, 0.013} {
				for _, c := range []struct{ noDale, vector bool }{{false, false}, {true, false}, {false, true}, {true, true}} {
					noDale := c.noDale
					want, got := cloneLayer(base), cloneLayer(base)
					want.fbNoDale, got.fbNoDale = noDale, noDale
					for i := range want.nOut {
						for s := want.rowPtr[i]; s < want.rowPtr[i+1]; s++ {
							if m.synFree(i, int(want.col[s])) {
								want.finishSyn(s, lam, false)
							}
						}
					}
					got.decayRows(m, lam, c.vector)
					if !bitsEqual(want.w, got.w) || !bitsEqual(want.fb, got.fb) {
						t.Errorf("layer %d, mask %s, lambda %g, no_dale_fb %v, vector %v: decayRows differs from finishSyn", l, name, lam, noDale, c.vector)
					}
				}
			}
		}
	}
}

func cloneLayer(ly *layer) *layer {
	c := *ly
	c.w, c.fb = slices.Clone(ly.w), slices.Clone(ly.fb)
	return &c
}
