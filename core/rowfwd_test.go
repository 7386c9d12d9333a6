package core

import (
	"math"
	"slices"
	"testing"

	"repro/internal/kernels"
)

// w1Shape draws a W^1-shaped sparse matrix: nOut rows of per stored
// synapses each at random ascending columns below nIn.
func w1Shape(rng *RNG, nIn, nOut, per int) (w []float32, col []uint16, rowPtr []int32) {
	rowPtr = []int32{0}
	for range nOut {
		k := per + rng.IntN(per/8+1) - per/16
		perm := rng.Perm(nIn)[:min(k, nIn)]
		slices.Sort(perm)
		for _, j := range perm {
			col = append(col, uint16(j))
			w = append(w, float32(rng.NormFloat64()*0.05))
		}
		rowPtr = append(rowPtr, int32(len(w)))
	}
	return w, col, rowPtr
}

func BenchmarkForwardW1(b *testing.B) {
	const nOut, batch = 512, 16
	for _, sh := range []struct {
		name    string
		nIn     int
		density float64
	}{{"mnist", 784, 0.26}, {"cifar", 1024, 1}} {
		rng := NewRNG(5, StreamRun)
		nIn := sh.nIn
		w, col, rowPtr := w1Shape(rng, nIn, nOut, nIn*3/10)
		x := make([]float32, nIn*lanes)
		var v []float32
		var off []int32
		ptr := []int32{0}
		for s := range batch {
			for j := range nIn {
				if rng.Float64() < sh.density {
					r := float32(rng.NormFloat64())
					x[j*lanes+s] = r
					v = append(v, r)
					off = append(off, int32(j*tile))
				}
			}
			ptr = append(ptr, int32(len(v)))
		}
		wT := make([]float32, nIn*nOut)
		for i := range nOut {
			for s := rowPtr[i]; s < rowPtr[i+1]; s++ {
				wT[i/tile*nIn*tile+int(col[s])*tile+i%tile] = w[s]
			}
		}
		acc := make([]float32, nOut*lanes)
		z := make([]float32, batch*nOut)
		cur := make([]int32, batch)
		ts := nIn * tile
		b.Run(sh.name+"/tiles", func(b *testing.B) {
			for b.Loop() {
				for s0 := 0; s0 < nOut; s0 += 64 {
					kernels.AddTilesBatch(z[s0:], nOut, v, off, ptr, cur, wT[s0/tile*ts:], ts)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/sample")
		})
		b.Run(sh.name+"/rows", func(b *testing.B) {
			for b.Loop() {
				kernels.DriveRows(acc, w, col, rowPtr, x)
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*batch), "ns/sample")
		})
		// c = W^1 o for an offset non-zero at every input, by column
		// (refreshC over the tiled copy) and by row (refreshCRows), per
		// batch.
		o := make([]float32, nIn)
		oOff := make([]int32, nIn)
		for j := range o {
			o[j], oOff[j] = -0.4, int32(j*tile)
		}
		c := make([]float32, nOut)
		b.Run(sh.name+"/c-tiles", func(b *testing.B) {
			for b.Loop() {
				clear(c)
				kernels.AddTiles(c, o, oOff, wT, ts)
			}
		})
		b.Run(sh.name+"/c-rows", func(b *testing.B) {
			for b.Loop() {
				kernels.DotRows(c, w, col, rowPtr, o)
			}
		})
	}
}

// TestRowForwardMatchesTiled trains W^1 with the row-order forward product
// (useRowForward, forced on) beside the column-order one on real MNIST, for
// the update paths W^1 takes (heavy-ball fast path, general path, anchor,
// adaptive controller, masked Adam confined and leaking), with MNIST's
// non-zero input offset and with inputs shifted so that their offset is 0
// (as on CIFAR), and requires identical weights, drives and active sets
// after every step.
func TestRowForwardMatchesTiled(t *testing.T) {
	t.Parallel()
	mnist := loadMNISTTrain(t)
	shifted := mnist.Subset(nil)
	{
		// The same samples minus their offset: an offset of 0 everywhere.
		n := min(mnist.N, 12000)
		idx := make([]int, n)
		for i := range idx {
			idx[i] = i
		}
		shifted = mnist.Subset(idx)
		o, _ := InputOffset(shifted)
		for i := range shifted.N {
			row := shifted.Row(i)
			for j := range row {
				row[j] -= o[j]
			}
		}
	}
	variants := map[string]func(*LocalConfig){
		"sgd":        func(*LocalConfig) {},
		"anchor":     func(c *LocalConfig) { c.Anchor = []float64{3e-4, 3e-4} },
		"controller": func(c *LocalConfig) { c.KPAdapt = 0.25 },
		"adam":       func(c *LocalConfig) { c.Opt, c.Eta = "adam", 1e-3 },
		"adam-leak":  func(c *LocalConfig) { c.Opt, c.Eta, c.LeakMoments = "adam", 1e-3, true },
	}
	for _, ds := range []*Dataset{mnist, shifted} {
		for name, set := range variants {
			for _, general := range []bool{false, true} {
				cfg := DefaultLocalConfig()
				set(&cfg)
				tasks := []Task{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}}
				mk := func() *localRun {
					r, err := newLocalRun(&cfg, ds, ds.Subset([]int{0, 1, 2}), tasks, 0, Hooks{})
					if err != nil {
						t.Fatal(err)
					}
					r.nt.generalOnly = general
					return r
				}
				a, b := mk(), mk()
				if a.nt.rowFwd {
					t.Fatalf("%s: MNIST chose the row-order product", name)
				}
				b.nt.useRowForward(1, cfg.BatchWake)
				if !b.nt.rowFwd || b.nt.lay[1].wT != nil {
					t.Fatalf("%s: the row-order product was not chosen", name)
				}
				for step := range 25 {
					stepN(a, 1)
					stepN(b, 1)
					for _, pr := range [][2]*pass{{a.wake, b.wake}, {a.rep, b.rep}} {
						n := pr[0].n * a.nt.sizes[1]
						if !bitsEqual(pr[0].z1[:n], pr[1].z1[:n]) || !slices.Equal(pr[0].act[1], pr[1].act[1]) {
							t.Fatalf("%s general=%v step %d: layer-1 drives differ", name, general, step)
						}
					}
					for l := 1; l <= a.nt.L; l++ {
						la, lb := a.nt.lay[l], b.nt.lay[l]
						if !bitsEqual(la.w, lb.w) || !bitsEqual(la.m1, lb.m1) || !bitsEqual(la.m2, lb.m2) || !bitsEqual(la.bias, lb.bias) {
							t.Fatalf("%s general=%v step %d layer %d: weights differ", name, general, step, l)
						}
					}
				}
			}
		}
	}
}

// firstBitDiff returns the first index where a and b (of equal length)
// differ in their bits, or -1.
func firstBitDiff(a, b []float32) int {
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return i
		}
	}
	return -1
}
