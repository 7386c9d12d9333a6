package core

import (
	"testing"

	"repro/internal/kernels"
)

// TestDriveBatch checks the batched drives of the hidden layers above the
// first, skip synapses included (driveBatch, and drive1's batch product on
// W^1) against one sample at a time (scatter, and kernels.AddTiles over the
// sample's input entries),
// bit for bit, on a network whose hidden layers are tiled strips of 64,
// after some training so that the weights, activities and the set of
// active units differ between samples.
func TestDriveBatch(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Hidden = []int{128, 128, 64, 64}
	cfg.Skip = true
	r := newTinyRun(t, cfg, 4, 30)
	nt, p := r.nt, r.wake
	nt.forward(p, nil)
	for l := 2; l < nt.L; l++ {
		ly := nt.lay[l]
		if !ly.tiled {
			t.Fatalf("layer %d is not tiled", l)
		}
		sk := nt.skip[l]
		if (sk != nil) != (l >= 3) || (sk != nil && !sk.tiled) {
			t.Fatalf("layer %d: want tiled skip synapses from layer 3 on", l)
		}
		nt.driveBatch(p, l)
		for b := range p.n {
			z := append([]float32(nil), ly.bias...)
			ly.scatter(z, p.activeOf(l-1, b), nil, p.a[l-1][b*ly.nIn:(b+1)*ly.nIn], p.offBuf, p.valBuf)
			if sk != nil {
				sk.scatter(z, p.activeOf(l-2, b), nil, p.a[l-2][b*sk.nIn:(b+1)*sk.nIn], p.offBuf, p.valBuf)
			}
			if !bitsEqual(z, p.zl[b*ly.nOut:(b+1)*ly.nOut]) {
				t.Fatalf("layer %d sample %d: the batch's drives differ from scatter's", l, b)
			}
			if len(p.activeOf(l-1, b)) == 0 {
				t.Fatalf("layer %d sample %d: no active units below; the test would not test", l, b)
			}
		}
	}
	// Layer 1: drive1's batch product against each sample's own.
	ly := nt.lay[1]
	n1 := ly.nOut
	for b := range p.n {
		z := make([]float32, n1)
		copy(z, ly.bias)
		for i := range z {
			z[i] += nt.c[i]
		}
		lo, hi := p.rPtr[b], p.rPtr[b+1]
		kernels.AddTiles(z, p.rVal[lo:hi], p.rOff[lo:hi], ly.wT, ly.nIn*tile)
		if !bitsEqual(z, p.z1[b*n1:(b+1)*n1]) {
			t.Fatalf("layer 1 sample %d: drive1 differs from the sample's own product", b)
		}
	}
}
