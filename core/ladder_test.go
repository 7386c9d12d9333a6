package core

import (
	"fmt"
	"slices"
	"testing"

	"repro/internal/kernels"
)

// The kernel size ladder: every vector kernel of a waking step at layer
// widths 256-2048 and activity fractions 5-25%, so that a change that helps
// the paper's shapes (784-512-256 at 10%) but hurts another shows. Run
//
//	go test -run '^$' -bench Ladder ./core/
//
// and compare two revisions with benchstat. Each reports ns per element it
// touches (ns/elem), which should stay flat along the ladder while the
// data fit in cache.

var (
	ladderWidths = []int{256, 512, 1024, 2048}
	ladderFracs  = []float64{0.05, 0.10, 0.25}
)

// ladderConn is the share of a hidden layer's synapses kept (the default
// system's conn_density).
const ladderConn = 0.30

// ladderRows builds n rows of synapses from n pre units at density
// ladderConn (sorted columns) with small weights, velocities and a dense
// gradient over the pre units.
func ladderRows(n int) (w, v, g []float32, col []int32, per int) {
	rng := NewRNG(11, StreamRun)
	per = max(1, int(ladderConn*float64(n)))
	w, v = make([]float32, n*per), make([]float32, n*per)
	col = make([]int32, n*per)
	for i := range n {
		perm := rng.Perm(n)[:per]
		slices.Sort(perm)
		for s, j := range perm {
			col[i*per+s] = int32(j)
			w[i*per+s] = float32(rng.NormFloat64() * 0.05)
			v[i*per+s] = float32(rng.NormFloat64() * 1e-3)
		}
	}
	g = make([]float32, n)
	for j := range g {
		g[j] = float32(rng.NormFloat64() * 0.01)
	}
	return w, v, g, col, per
}

// ladderActive returns k = max(1, round(f n)) distinct units of n, sorted,
// with nonzero activities.
func ladderActive(n int, f float64) ([]int32, []float32) {
	rng := NewRNG(12, StreamRun)
	k := max(1, int(f*float64(n)+0.5))
	perm := rng.Perm(n)[:k]
	slices.Sort(perm)
	off := make([]int32, k)
	a := make([]float32, k)
	for t, j := range perm {
		off[t] = int32(j)
		a[t] = float32(0.1 + rng.Float64())
	}
	return off, a
}

func BenchmarkLadderForward(b *testing.B) {
	for _, n := range ladderWidths {
		for _, f := range ladderFracs {
			b.Run(fmt.Sprintf("n=%d/f=%g", n, f), func(b *testing.B) {
				ld := paddedStride(n)
				wT := make([]float32, n*ld)
				for i := range wT {
					wT[i] = float32(i%13) * 0.01
				}
				units, act := ladderActive(n, f)
				off := make([]int32, len(units))
				for t, j := range units {
					off[t] = j * int32(ld)
				}
				c := make([]float32, n)
				for b.Loop() {
					kernels.SetRows(c, act, off, wT)
				}
				reportPerElem(b, len(off)*n)
			})
		}
	}
}

// BenchmarkLadderForwardBatch is the tiled forward product for a batch of
// 16 samples, each with its own active units: one sample at a time
// (kernels.AddTiles, as the forward pass ran before) against the batch a block of
// columns at a time (kernels.AddTilesBatch, as drive1 and driveBatch run it).
func BenchmarkLadderForwardBatch(b *testing.B) {
	const batch = 16
	for _, n := range ladderWidths {
		for _, f := range ladderFracs {
			ts := n * tile
			wT := make([]float32, n*n)
			for i := range wT {
				wT[i] = float32(i%13) * 0.01
			}
			rng := NewRNG(13, StreamRun)
			k := max(1, int(f*float64(n)+0.5))
			var v []float32
			var off []int32
			ptr := []int32{0}
			for range batch {
				perm := rng.Perm(n)[:k]
				slices.Sort(perm)
				for _, j := range perm {
					off = append(off, int32(j*tile))
					v = append(v, float32(0.1+rng.Float64()))
				}
				ptr = append(ptr, int32(len(v)))
			}
			z := make([]float32, batch*n)
			cur := make([]int32, batch)
			b.Run(fmt.Sprintf("n=%d/f=%g/samples", n, f), func(b *testing.B) {
				for b.Loop() {
					for s := range batch {
						kernels.AddTiles(z[s*n:(s+1)*n], v[ptr[s]:ptr[s+1]], off[ptr[s]:ptr[s+1]], wT, ts)
					}
				}
				reportPerElem(b, len(v)*n)
			})
			b.Run(fmt.Sprintf("n=%d/f=%g/batch", n, f), func(b *testing.B) {
				for b.Loop() {
					for s0 := 0; s0+64 <= n; s0 += 64 {
						kernels.AddTilesBatch(z[s0:], n, v, off, ptr, cur, wT[s0/tile*ts:], ts)
					}
				}
				reportPerElem(b, len(v)*n)
			})
		}
	}
}

func BenchmarkLadderKWTA(b *testing.B) {
	for _, n := range ladderWidths {
		for _, f := range ladderFracs {
			b.Run(fmt.Sprintf("n=%d/f=%g", n, f), func(b *testing.B) {
				rng := NewRNG(13, StreamRun)
				row := make([]float32, n)
				for i := range row {
					row[i] = float32(rng.NormFloat64())
				}
				k := max(1, int(f*float64(n)+0.5))
				scratch := make([]float32, n)
				for b.Loop() {
					kwtaThreshold(row, k, scratch)
				}
				reportPerElem(b, n)
			})
		}
	}
}

// The row steps update the rows of the active post units (a fraction f of
// n), each over its stored synapses, with the fused column copy into a
// tiled wT, as the training path runs them.
func BenchmarkLadderRowStep(b *testing.B) {
	for _, n := range ladderWidths {
		for _, f := range ladderFracs {
			b.Run(fmt.Sprintf("sgd/n=%d/f=%g", n, f), func(b *testing.B) {
				w, v, g, col, per := ladderRows(n)
				fb := slices.Clone(w)
				flags := make([]int32, n)
				for j := range flags {
					if j%5 != 0 {
						flags[j] = kernels.FlagExc
					}
				}
				rows, _ := ladderActive(n, f)
				k := new(kernels.NewSGDFBCoef(0.9, 0.00125, 1e-4))
				wT := make([]float32, n*n)
				for b.Loop() {
					for _, i := range rows {
						r := int(i) * per
						base := int(i)/tile*n*tile + int(i)%tile
						kernels.SGDRowFB(w[r:r+per], fb[r:r+per], v[r:r+per], col[r:r+per], g, flags, k, wT[base:], tile)
					}
				}
				reportPerElem(b, len(rows)*per)
			})
			b.Run(fmt.Sprintf("adam/n=%d/f=%g", n, f), func(b *testing.B) {
				w, m1, g, col, per := ladderRows(n)
				fb := slices.Clone(w)
				m2 := make([]float32, len(w))
				for i := range m2 {
					m2[i] = m1[i] * m1[i]
				}
				frozen := make([]int32, n)
				sign := make([]float32, n)
				for j := range sign {
					sign[j] = 1
					if j%5 == 0 {
						sign[j] = -1
					}
					if j%3 == 0 {
						frozen[j] = 1
					}
				}
				k := kernels.NewAdamCoef(0.9, 0.999, 0.1, 0.001, 1e-3, 1e-3, 1e-3, 1e-4, false)
				synSign := make([]float32, len(col)) // the Dale sign per synapse
				for s, j := range col {
					synSign[s] = sign[j]
				}
				rows, _ := ladderActive(n, f)
				wT := make([]float32, n*n)
				for b.Loop() {
					for _, i := range rows {
						r := int(i) * per
						base := int(i)/tile*n*tile + int(i)%tile
						kernels.AdamRow(w[r:r+per], fb[r:r+per], m1[r:r+per], m2[r:r+per], col[r:r+per], g, frozen, synSign[r:r+per], k, wT[base:], tile)
					}
				}
				reportPerElem(b, len(rows)*per)
			})
		}
	}
}

// reportPerElem reports the time per element touched.
func reportPerElem(b *testing.B, elems int) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(max(elems, 1)), "ns/elem")
}
