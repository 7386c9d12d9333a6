package core

import (
	"math"
	"os"
	"path/filepath"
	"testing"
)

// tinyData returns a synthetic class-structured data set on an h x w sheet:
// each class has its own random prototype on a random half of the pixels,
// samples add noise, and the first column is always 0 (so its offset is 0
// and the input there is silent, as for MNIST's constant border pixels).
func tinyData(seed int64, perClass, classes, h, w int) *Dataset {
	rng := NewRNG(seed, StreamRun)
	d := h * w
	proto := make([][]float32, classes)
	for c := range proto {
		proto[c] = make([]float32, d)
		for j := 1; j < d; j++ {
			if rng.IntN(2) == 0 {
				proto[c][j] = float32(rng.NormFloat64() * 1.5)
			}
		}
	}
	n := perClass * classes
	ds := &Dataset{X: make([]float32, n*d), Y: make([]int32, n), N: n, D: d, Classes: classes, Height: h, Width: w}
	for i := range n {
		c := i % classes
		ds.Y[i] = int32(c)
		row := ds.Row(i)
		for j := 1; j < d; j++ {
			if proto[c][j] != 0 || rng.IntN(4) == 0 {
				row[j] = proto[c][j] + float32(rng.NormFloat64()*0.5)
			}
		}
	}
	return ds
}

func tinyConfig() LocalConfig {
	cfg := DefaultLocalConfig()
	cfg.Hidden = []int{24, 16}
	cfg.BatchWake = 4
	cfg.BatchReplay = 4
	cfg.Buffer = 20
	cfg.Epochs = 1
	cfg.PRSamples = 50
	return cfg
}

func pairTasks(classes int) []Task {
	var ts []Task
	for c := 0; c+1 < classes; c += 2 {
		ts = append(ts, Task{c, c + 1})
	}
	return ts
}

// newTinyRun builds a run on tiny data and performs steps waking steps on
// random batches of the first task.
func newTinyRun(t *testing.T, cfg LocalConfig, seed int64, steps int) *localRun {
	t.Helper()
	train := tinyData(seed, 20, 4, 4, 5)
	eval := tinyData(seed+100, 10, 4, 4, 5)
	r, err := newLocalRun(&cfg, train, eval, pairTasks(4), seed, Hooks{})
	if err != nil {
		t.Fatal(err)
	}
	etaW := cfg.Eta * float64(cfg.BatchWake) / 256
	etaR := cfg.Eta * cfg.NremGain
	for range steps {
		batch := make([]int, cfg.BatchWake)
		for b := range batch {
			batch[b] = r.rng.IntN(train.N)
		}
		r.wakingStep(batch, etaW, etaR)
	}
	return r
}

// snapshot copies the hidden activities and the output of a pass.
func snapshot(nt *net, p *pass) [][]float32 {
	out := make([][]float32, nt.L+1)
	for l := 1; l < nt.L; l++ {
		out[l] = append([]float32(nil), p.a[l][:p.n*nt.sizes[l]]...)
	}
	out[nt.L] = append([]float32(nil), p.z[:p.n*nt.sizes[nt.L]]...)
	return out
}

func bitsEqual(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

// awakeOf returns the awake sets of a pass (index l, hidden layers).
func awakeOf(nt *net, p *pass) [][]bool {
	aw := make([][]bool, nt.L)
	for l := 1; l < nt.L; l++ {
		aw[l] = make([]bool, nt.sizes[l])
		for _, i := range p.act[l][:p.actPtr[l][p.n]] {
			aw[l][i] = true
		}
	}
	return aw
}

// randomBatchPass loads n random train samples into a fresh pass.
// settledReplay returns r's replay masks and a settled pass (forward and
// error sweep) of n random training samples drawn by rng: the inputs of
// one replay update, nt.update(cfg, p, eta, masks, masks != nil).
func settledReplay(r *localRun, n int, rng *RNG) ([]*layerMask, *pass) {
	masks := r.replayMasks()
	p := randomBatchPass(r, n, rng)
	r.nt.forward(p, nil)
	r.nt.sweep(p, 1)
	return masks, p
}

func randomBatchPass(r *localRun, n int, rng *RNG) *pass {
	p := newPass(r.nt, n)
	idx := make([]int, n)
	for b := range idx {
		idx[b] = rng.IntN(r.train.N)
	}
	p.load(r.train, idx)
	return p
}

// goldenFile returns the content of testdata/name, after writing got to it
// under -update.
func goldenFile(t *testing.T, name, got string) string {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	return string(want)
}

// currentC returns c = W^1 o, recomputed first if an update made it stale
// (the forward pass recomputes it strip by strip).
func (nt *net) currentC() []float32 {
	if nt.staleC {
		nt.refreshC(0, len(nt.c))
		nt.staleC = false
	}
	return nt.c
}
