package core

import (
	"fmt"
	"slices"
	"testing"

	"repro/internal/kernels"
)

// BenchmarkW1Rows times the heavy-ball step of W^1's 512 rows (235 stored
// synapses each) with the column copy into the tiled wT fused (as training
// runs it), with the copy as a separate loop after the step, and without
// the copy.
func BenchmarkW1Rows(b *testing.B) {
	rng := NewRNG(7, StreamRun)
	const nIn, nOut, per = 784, 512, 235
	g := make([]float32, nIn)
	for j := range g {
		g[j] = float32(rng.NormFloat64() * 0.01)
	}
	w := make([]float32, nOut*per)
	v := make([]float32, nOut*per)
	col := make([]uint16, nOut*per)
	for i := range nOut {
		perm := rng.Perm(nIn)[:per]
		slices.Sort(perm)
		for s, j := range perm {
			col[i*per+s] = uint16(j)
		}
	}
	wT := make([]float32, nIn*nOut)
	base := func(i int) int { return i/tile*nIn*tile + i%tile }
	k := new(kernels.NewSGDCoef(1e-3, 0.9, 0.00125))
	b.Run("fused", func(b *testing.B) {
		defer reportCPU(b, processCPU())
		for b.Loop() {
			for i := range nOut {
				r := i * per
				kernels.SGDRowInput(w[r:r+per], v[r:r+per], col[r:r+per], g, k, wT[base(i):], tile)
			}
		}
	})
	b.Run("split", func(b *testing.B) {
		defer reportCPU(b, processCPU())
		for b.Loop() {
			for i := range nOut {
				r := i * per
				kernels.SGDRowInput(w[r:r+per], v[r:r+per], col[r:r+per], g, k, nil, 0)
				kernels.CopyColumn(wT[base(i):], w[r:r+per], col[r:r+per], tile)
			}
		}
	})
	b.Run("step-only", func(b *testing.B) {
		defer reportCPU(b, processCPU())
		for b.Loop() {
			for i := range nOut {
				r := i * per
				kernels.SGDRowInput(w[r:r+per], v[r:r+per], col[r:r+per], g, k, nil, 0)
			}
		}
	})
}

// reportCPU reports the process CPU time since c0 per op: on a loaded
// machine, less inflated than wall time by waiting for a core.
func reportCPU(b *testing.B, c0 float64) {
	b.ReportMetric((processCPU()-c0)*1e9/float64(b.N), "cpu-ns/op")
}

// BenchmarkCtrlRows times the controller's optimiser pass (kernels.CtrlStepRow)
// over a dense layer's rows: 256 x 512 (W^2 of the deep nets, larger than
// L2 with its twin, velocity and gradient) and 16 x 512 (in L1), so that
// the float64 sums' latency and the memory traffic can be told apart.
func BenchmarkCtrlRows(b *testing.B) {
	rng := NewRNG(8, StreamRun)
	const nIn = 512
	for _, nOut := range []int{16, 256} {
		n := nIn * nOut
		w, fb, v, g := make([]float32, n), make([]float32, n), make([]float32, n), make([]float32, n)
		for i := range w {
			w[i] = float32(rng.NormFloat64() * 0.05)
			fb[i] = float32(rng.NormFloat64() * 0.05)
			g[i] = float32(rng.NormFloat64() * 0.01)
		}
		flags := make([]int32, nIn)
		k := new(kernels.NewCtrlCoef(0.9, 0.02))
		b.Run(fmt.Sprintf("rows=%d", nOut), func(b *testing.B) {
			var s kernels.CtrlSums
			for b.Loop() {
				for i := range nOut {
					r := i * nIn
					kernels.CtrlStepRow(w[r:r+nIn], fb[r:r+nIn], v[r:r+nIn], g[r:r+nIn], flags, k, &s)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/synapse")
		})
	}
}

// BenchmarkTwinAtActive compares twinAtActive's two ways of reading a dense
// twin's rows at the active columns: gathering through the index map
// (kernels.GatherRows) and the whole-row product with a pick. Widths 256 and 512,
// an active fraction f (1% to 50%) of both the senders (rows) and the
// columns.
func BenchmarkTwinAtActive(b *testing.B) {
	rng := NewRNG(9, StreamRun)
	for _, n := range []int{256, 512} {
		w := make([]float32, n*n)
		fb := make([]float32, n*n)
		for i := range fb {
			fb[i] = float32(rng.NormFloat64())
		}
		ly := newLayer(n, n, w, fb, nil, false, nil, false, true)
		ly.indexTwin()
		for _, f := range []float64{0.01, 0.02, 0.05, 0.1, 0.25, 0.5} {
			k := max(1, int(f*float64(n)))
			act := make([]int32, k)
			for t, j := range rng.Perm(n)[:k] {
				act[t] = int32(j)
			}
			slices.Sort(act)
			us := make([]float32, k)
			offs := make([]int32, k)
			for r, i := range rng.Perm(n)[:k] {
				us[r] = float32(rng.NormFloat64())
				offs[r] = int32(i * n)
			}
			acc := make([]float32, k)
			scratch := make([]float32, n)
			b.Run(fmt.Sprintf("n=%d/f=%g/gather", n, f), func(b *testing.B) {
				for b.Loop() {
					clear(acc)
					kernels.GatherRows(acc, us, offs, ly.fbPos, ly.fb[:len(ly.fb)+1], act)
				}
			})
			b.Run(fmt.Sprintf("n=%d/f=%g/dense", n, f), func(b *testing.B) {
				for b.Loop() {
					full := scratch[:n]
					clear(full)
					kernels.AddRows(full, us, offs, ly.fb)
					for t, j := range act {
						acc[t] = full[j]
					}
				}
			})
		}
	}
}

// BenchmarkGramDense times the participation ratio's gram on dense inputs
// (CIFAR's 1,024 input entries, a chunk of 64 samples), per product added:
// the tiles (addGramDense) with rows at gramStride and 8 KB apart (the Go
// loop's tiles with -tags purego).
func BenchmarkGramDense(b *testing.B) {
	rng := NewRNG(10, StreamRun)
	const n, nb = 1024, 64
	gram, sums := make([]float64, n*n), make([]float64, n)
	products := float64(nb * n * (n + 1) / 2)
	for _, c := range []struct {
		name string
		ld   int
	}{{"tiles", gramStride(n)}, {"tiles-8KB", n}} {
		x := make([]float64, nb*c.ld)
		for k := range x {
			x[k] = float64(float32(rng.NormFloat64()))
		}
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				addGramDense(gram, sums, n, x, c.ld, nb)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/products, "ns/product")
		})
	}
}
