package backprop

import (
	"math"
	"slices"
	"testing"

	"repro/core"
)

// TestConnMatchesDirect trains with sparse wiring (Conn) and compares, bit
// for bit, against a direct implementation: the same dense learner whose
// absent synapses a hook zeroes after every step, with the masks indexed
// by hand. Both batch methods whose steps differ (ER concatenates, DER++
// adds buffer terms) are covered.
func TestConnMatchesDirect(t *testing.T) {
	train, eval := blobs(240, 16, 4, 1), blobs(80, 16, 4, 2)
	train.Height, train.Width, eval.Height, eval.Width = 4, 4, 4, 4
	tasks := pairTasks(4)
	for _, method := range []string{MethodER, MethodDERPP} {
		t.Run(method, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Method, cfg.Hidden, cfg.K, cfg.Epochs, cfg.Batch, cfg.ReplayBatch = method, []int{12, 9}, 40, 2, 16, 16
			const seed = 3
			sparse := cfg
			sparse.Conn = 0.3
			got := newRunner(sparse, train, eval, tasks, seed, core.Hooks{})
			if err := got.run(); err != nil {
				t.Fatal(err)
			}

			sizes := []int{16, 12, 9, 4}
			masks := core.ConnMasks(sizes, 4, 4, 0.3, 0.15, core.NewRNG(seed, core.StreamConn))
			want := newRunner(cfg, train, eval, tasks, seed, core.Hooks{})
			zero := func() {
				for l, m := range masks {
					in, out := sizes[l], sizes[l+1]
					for i := range out {
						for j := range in {
							if m != nil && !m[i*in+j] {
								want.net.W[l][j*out+i] = 0
							}
						}
					}
				}
			}
			zero()
			want.hooks.Progress = func(int, int) { zero() }
			if err := want.run(); err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got.net.Params, want.net.Params) {
				t.Errorf("weights after training with conn = 0.3 differ from the directly re-zeroed run")
			}
			if got.res.FinalAcc != want.res.FinalAcc {
				t.Errorf("final accuracy %v, direct %v", got.res.FinalAcc, want.res.FinalAcc)
			}
			// The wiring is 30% of each hidden layer's synapses, the readout
			// dense, and training moved the kept ones.
			for l := range 3 {
				nz := 0
				for _, w := range got.net.W[l] {
					if w != 0 {
						nz++
					}
				}
				in, out := sizes[l], sizes[l+1]
				wantNZ := in * out
				if l < 2 {
					wantNZ = int(math.RoundToEven(0.3 * float64(in*out)))
				}
				if nz != wantNZ {
					t.Errorf("layer %d: %d non-zero weights, want %d", l, nz, wantNZ)
				}
			}
		})
	}
}

// TestConnLocalSchedule: under the local schedule (two steps per waking
// batch, the second masked) absent synapses stay exactly zero.
func TestConnLocalSchedule(t *testing.T) {
	train, eval := blobs(160, 16, 4, 1), blobs(40, 16, 4, 2)
	cfg, _ := testPreset("bpk_iso_rot_lr1e4")
	cfg.Hidden, cfg.Epochs, cfg.K, cfg.Conn = []int{12, 9}, 1, 40, 0.3
	r := newRunner(cfg, train, eval, pairTasks(4), 5, core.Hooks{})
	if err := r.run(); err != nil {
		t.Fatal(err)
	}
	for l, c := range r.net.conn[:2] {
		moved := false
		for s, keep := range c {
			if !keep && r.net.W[l][s] != 0 {
				t.Fatalf("layer %d synapse %d absent but %v", l, s, r.net.W[l][s])
			}
			moved = moved || keep && r.net.W[l][s] != 0
		}
		if !moved {
			t.Errorf("layer %d: no kept synapse is non-zero", l)
		}
	}
	if r.net.conn[2] != nil {
		t.Errorf("readout has wiring; want dense")
	}
}

// TestConnMasksDistance: the drawn wiring favours near synapses (the mean
// distance of kept synapses is below that of absent ones) and keeps
// round(density n_out n_in) of each hidden layer.
func TestConnMasksDistance(t *testing.T) {
	sizes := []int{64, 49, 10}
	m := core.ConnMasks(sizes, 8, 8, 0.3, 0.15, core.NewRNG(1, core.StreamConn))
	if len(m) != 2 || m[1] != nil || len(m[0]) != 64*49 {
		t.Fatalf("masks: %d layers, readout %v", len(m), m[len(m)-1] != nil)
	}
	pos := func(k, side int) (float64, float64) {
		return float64(k/side) / float64(side-1), float64(k%side) / float64(side-1)
	}
	var dk, da float64
	var nk, na int
	for i := range 49 {
		for j := range 64 {
			yi, xi := pos(i, 7)
			yj, xj := pos(j, 8)
			d := sqrt((yi-yj)*(yi-yj) + (xi-xj)*(xi-xj))
			if m[0][i*64+j] {
				dk, nk = dk+d, nk+1
			} else {
				da, na = da+d, na+1
			}
		}
	}
	if want := int(math.RoundToEven(0.3 * 64 * 49)); nk != want {
		t.Errorf("%d synapses kept, want %d", nk, want)
	}
	if dk/float64(nk) >= 0.8*da/float64(na) {
		t.Errorf("mean distance kept %.3f, absent %.3f: want the kept ones clearly nearer", dk/float64(nk), da/float64(na))
	}
}
