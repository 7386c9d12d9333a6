package core

import (
	"errors"
	"math"
	"slices"
	"testing"
)

// TestNetworkMatchesLearner trains a tiny run, keeps its network and checks
// that rate inference on the Network gives the learner's own outputs on
// every evaluation sample (up to float32 summation order) and its final
// accuracy.
func TestNetworkMatchesLearner(t *testing.T) {
	t.Parallel()
	cfg := tinyConfig()
	cfg.Hidden = []int{40, 20} // 10% of 40 and 20: k = 4 and 2
	cfg.ConnDensity = 0.3
	train := tinyData(1, 30, 4, 4, 5)
	eval := tinyData(2, 10, 4, 4, 5)
	res, nw, err := TrainLocalNetwork(cfg, train, eval, pairTasks(4), 3, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if err := nw.Validate(); err != nil {
		t.Fatal(err)
	}
	if got, want := nw.K, []int{0, 4, 2, 0}; !slices.Equal(got, want) {
		t.Errorf("K = %v, want %v", got, want)
	}
	if nw.Mask[1] == nil || nw.Mask[2] == nil || nw.Mask[3] != nil {
		t.Errorf("masks present %v %v %v, want W^1 and W^2 masked, the readout dense", nw.Mask[1] != nil, nw.Mask[2] != nil, nw.Mask[3] != nil)
	}
	// The fan-outs are the present synapses per presynaptic unit: 30% of
	// n_l (rounded to whole synapses over the matrix).
	if got, want := nw.FanOut(1), math.RoundToEven(0.3*40*20)/20; got != want {
		t.Errorf("FanOut(1) = %g, want %g", got, want)
	}
	if got := nw.FanOut(3); got != 4 {
		t.Errorf("FanOut(readout) = %g, want 4", got)
	}

	// The learner's own forward pass over the evaluation set.
	r, err := newLocalRun(&cfg, train, eval, pairTasks(4), 3, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.run(); err != nil {
		t.Fatal(err)
	}
	f := NewInference(nw)
	ok := 0
	var worst float64
	r.evalChunks(allIdx(eval.N), func(p *pass, chunk []int) {
		for b, i := range chunk {
			pred := f.Forward(eval.Row(i))
			if int32(pred) == eval.Y[i] {
				ok++
			}
			C := nw.Sizes[3]
			for c, v := range p.z[b*C : (b+1)*C] {
				worst = max(worst, math.Abs(float64(v-f.Z[c])))
			}
		}
	})
	// Float32 sums in another order differ by a few ulps of the drives.
	if worst > 1e-4 {
		t.Errorf("readout differs from the learner's by up to %g", worst)
	}
	if got := float64(ok) / float64(eval.N); got != res.FinalAcc {
		t.Errorf("accuracy of the kept network %g, learner's %g", got, res.FinalAcc)
	}
}

// TestNetworkValidate checks that malformed networks are reported with the
// part that is wrong.
func TestNetworkValidate(t *testing.T) {
	t.Parallel()
	good := func() *Network {
		return &Network{Sizes: []int{3, 2, 2}, K: []int{0, 1, 0},
			W: [][]float32{nil, make([]float32, 6), make([]float32, 4)},
			B: [][]float32{nil, make([]float32, 2), make([]float32, 2)}, Mask: make([][]bool, 3)}
	}
	if err := good().Validate(); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		mutate func(n *Network)
	}{
		{"short W", func(n *Network) { n.W[1] = n.W[1][:5] }},
		{"short b", func(n *Network) { n.B[2] = nil }},
		{"k zero", func(n *Network) { n.K[1] = 0 }},
		{"k too big", func(n *Network) { n.K[1] = 3 }},
		{"mask shape", func(n *Network) { n.Mask[1] = make([]bool, 2) }},
		{"no layers", func(n *Network) { n.Sizes = n.Sizes[:1] }},
		{"readout k", func(n *Network) { n.K[2] = 1 }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			n := good()
			tc.mutate(n)
			if err := n.Validate(); !errors.Is(err, ErrNetwork) {
				t.Errorf("Validate() = %v, want ErrNetwork", err)
			}
		})
	}
}

func allIdx(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}
