package core

import (
	"math"
	"testing"
)

// TestDenseMACs checks the dense MLP's count on the substrate table's
// 784-256-128-10 network (784*256 + 256*128 + 128*10).
func TestDenseMACs(t *testing.T) {
	t.Parallel()
	if got := DenseMACs([]int{784, 256, 128, 10}); got != 234752 {
		t.Errorf("DenseMACs = %v, want 234752", got)
	}
	var r Result
	r.SetSynOps(58688, 234752)
	if r.SynOpsFrac != 0.25 {
		t.Errorf("SynOpsFrac = %v, want 0.25", r.SynOpsFrac)
	}
}

// TestSynOpsDirect recounts the synaptic operations of a finished run
// directly: per evaluation sample, every non-zero input and every active
// hidden unit costs one operation per existing outgoing synapse (the mean
// fan-out of its layer, as the reference counts), averaged over the
// samples of the participation pass; the fraction is over the dense MLP.
func TestSynOpsDirect(t *testing.T) {
	t.Parallel()
	for _, density := range []float64{1, 0.3} {
		cfg := tinyConfig()
		cfg.ConnDensity = density
		train := tinyData(1, 30, 4, 4, 5)
		eval := tinyData(2, 10, 4, 4, 5)
		r, err := newLocalRun(&cfg, train, eval, pairTasks(4), 7, Hooks{})
		if err != nil {
			t.Fatal(err)
		}
		res, err := r.run()
		if err != nil {
			t.Fatal(err)
		}
		nt := r.nt
		N := min(cfg.PRSamples, eval.N)
		idx := make([]int, N)
		for i := range idx {
			idx[i] = i
		}
		var want float64
		r.evalChunks(idx, func(p *pass, _ []int) {
			for b := range p.n {
				for l := 1; l <= nt.L; l++ {
					n := 0
					if l == 1 {
						for _, v := range p.x[b*nt.sizes[0] : (b+1)*nt.sizes[0]] {
							if v != 0 {
								n++
							}
						}
					} else {
						for _, v := range p.a[l-1][b*nt.sizes[l-1] : (b+1)*nt.sizes[l-1]] {
							if v != 0 {
								n++
							}
						}
					}
					// Existing synapses of W^l: a dense readout, a
					// connectivity-sampled hidden layer.
					present := float64(nt.sizes[l-1] * nt.sizes[l])
					if l < nt.L {
						present = math.RoundToEven(density * present)
					}
					want += float64(n) * present / float64(nt.sizes[l-1]) / float64(N)
				}
			}
		})
		dense := float64(20*24 + 24*16 + 16*4)
		if math.Abs(res.SynOps-want) > 1e-9*want || res.DenseMACs != dense || math.Abs(res.SynOpsFrac-want/dense) > 1e-12 {
			t.Errorf("density %v: synops %v (frac %v, dense %v), want %v (frac %v, dense %v)",
				density, res.SynOps, res.SynOpsFrac, res.DenseMACs, want, want/dense, dense)
		}
	}
}
