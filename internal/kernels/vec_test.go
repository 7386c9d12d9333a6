package kernels

import (
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unsafe"
)

// TestAddRows checks the vector kernel against the portable loop bit for
// bit, on every length around the strip sizes.
func TestAddRows(t *testing.T) {
	t.Parallel()
	rng := newRNG(2)
	for _, n := range []int{1, 7, 8, 9, 63, 64, 65, 100, 256, 512, 515} {
		for _, terms := range []int{0, 1, 3, 40} {
			stride := n + rng.IntN(5)
			b := make([]float32, stride*50)
			for i := range b {
				b[i] = float32(rng.NormFloat64())
			}
			v := make([]float32, terms)
			off := make([]int32, terms)
			for k := range v {
				v[k] = float32(rng.NormFloat64())
				off[k] = int32(rng.IntN(50) * stride)
			}
			c0 := make([]float32, n)
			for i := range c0 {
				c0[i] = float32(rng.NormFloat64())
			}
			want := append([]float32(nil), c0...)
			addRowsGo(want, v, off, b)
			got := append([]float32(nil), c0...)
			AddRows(got, v, off, b)
			for i := range got {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d terms=%d: element %d = %v, want %v", n, terms, i, got[i], want[i])
				}
			}
			// SetRows: clear, then add (c's old contents ignored).
			want = make([]float32, n)
			addRowsGo(want, v, off, b)
			got = append([]float32(nil), c0...)
			SetRows(got, v, off, b)
			if !bitsEqual(got, want) {
				t.Fatalf("n=%d terms=%d: SetRows differs from clear and AddRows", n, terms)
			}
		}
	}
}

func TestFlushTiny(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want float32 }{
		{0, 0}, {1, 1}, {-1, -1}, {1e-29, 1e-29}, {-1e-29, -1e-29}, {1e-31, 0}, {-1e-31, 0},
		{TinyVelocity, TinyVelocity}, {math.SmallestNonzeroFloat32, 0}, {float32(math.Inf(1)), float32(math.Inf(1))},
	}
	for _, tc := range tests {
		if got := FlushTiny(tc.in); got != tc.want {
			t.Errorf("FlushTiny(%g) = %g, want %g", tc.in, got, tc.want)
		}
	}
}

// TestSGDRowInput checks the vector row step and its fused column copy
// against the loop and CopyColumn bit for bit, including velocities that
// flush, rows without a gradient (all zeros, and nil), tails of every
// length, tiled and untiled column strides and no copy (wT nil).
func TestSGDRowInput(t *testing.T) {
	t.Parallel()
	rng := newRNG(4)
	k := &SGDCoef{wd: 1e-3, mu: 0.9, eta: 0.00125, tiny: TinyVelocity}
	const nIn = 784
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 23, 31, 235, 513} {
		for _, zeroG := range []bool{false, true} {
			for _, ld := range []int{0, 1, Tile, 520} { // 0: no copy
				g := make([]float32, nIn)
				if !zeroG {
					for j := range g {
						g[j] = float32(rng.NormFloat64() * 0.01)
					}
				}
				w := make([]float32, n)
				v := make([]float32, n)
				col := make([]uint16, n)
				for s := range w {
					w[s] = float32(rng.NormFloat64() * 0.05)
					v[s] = float32(rng.NormFloat64() * 0.01)
					switch rng.IntN(4) {
					case 0:
						v[s] = float32(rng.NormFloat64() * 1e-31)
					case 1:
						w[s] = 0
					case 2:
						if rng.IntN(8) == 0 {
							v[s] = float32(math.NaN()) // a diverged run: kept, as FlushTiny keeps it
						}
					}
					col[s] = uint16(rng.IntN(nIn))
				}
				slices.Sort(col) // a row's columns are ascending
				var wT, wT2 []float32
				if ld > 0 {
					// The row's first column sits at a random offset below ld;
					// every other element must stay as it was.
					wT = make([]float32, nIn*ld)
					for i := range wT {
						wT[i] = float32(i)
					}
					wT = wT[rng.IntN(ld):]
					wT2 = slices.Clone(wT)
				}
				w2, v2 := slices.Clone(w), slices.Clone(v)
				sgdRowInputGo(w, v, col, g, k)
				if ld > 0 {
					CopyColumn(wT, w, col, ld)
				}
				w3, v3, wT3 := slices.Clone(w2), slices.Clone(v2), slices.Clone(wT2)
				SGDRowInput(w2, v2, col, g, k, wT2, ld)
				if !bitsEqual(w, w2) || !bitsEqual(v, v2) || !bitsEqual(wT, wT2) {
					t.Fatalf("n=%d zeroG=%v ld=%d: kernel differs from the loop", n, zeroG, ld)
				}
				if zeroG {
					// nil, the zero gradient without the gather.
					SGDRowInput(w3, v3, col, nil, k, wT3, ld)
					if !bitsEqual(w, w3) || !bitsEqual(v, v3) || !bitsEqual(wT, wT3) {
						t.Fatalf("n=%d ld=%d: the kernel without a gradient differs from the loop", n, ld)
					}
				}
			}
		}
	}
}

// TestSGDRowFB checks the vector row step of a layer with a feedback twin
// and its fused column copy against the loop and CopyColumn bit for bit:
// frozen pre units, flushed velocities, rows without a gradient (nil to
// the kernels), both Dale
// signs, signed zeros, tails of every length, tiled and untiled strides;
// and the dense row kernel on the same synapses.
func TestSGDRowFB(t *testing.T) {
	t.Parallel()
	rng := newRNG(5)
	k := &SGDFBCoef{mu: 0.9, eta: 0.06, lam: 1e-3, tiny: TinyVelocity}
	const nIn = 512
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 23, 31, 154, 256, 511} {
		for _, c := range []struct {
			zeroG bool
			ld    int
		}{{false, Tile}, {true, Tile}, {false, 1}, {false, 520}} {
			zeroG, ld := c.zeroG, c.ld
			g := make([]float32, nIn)
			awake := make([]int32, nIn)
			sign := make([]float32, nIn)
			for j := range g {
				if !zeroG {
					g[j] = float32(rng.NormFloat64() * 0.01)
				}
				if rng.IntN(3) == 0 {
					awake[j] = 1
				}
				sign[j] = 1
				if rng.IntN(5) == 0 {
					sign[j] = -1
				}
			}
			w := make([]float32, n)
			fb := make([]float32, n)
			v := make([]float32, n)
			col := make([]int32, n)
			perm := rng.Perm(nIn)[:n]
			slices.Sort(perm)
			for s := range w {
				col[s] = int32(perm[s])
				w[s] = float32(rng.NormFloat64() * 0.05)
				fb[s] = float32(rng.NormFloat64() * 0.05)
				v[s] = float32(rng.NormFloat64() * 0.01)
				switch rng.IntN(6) {
				case 0:
					v[s] = float32(rng.NormFloat64() * 1e-31)
				case 1:
					w[s], v[s] = 0, 0
				case 2:
					w[s], fb[s], v[s] = float32(math.Copysign(0, -1)), float32(math.Copysign(0, -1)), 0
				case 3:
					v[s] = -w[s] / k.eta / 0.9 // pushes w across zero
				case 4:
					if rng.IntN(8) == 0 {
						v[s] = float32(math.NaN())
					}
				}
			}
			flags := make([]int32, nIn)
			for j := range flags {
				if awake[j] != 0 {
					flags[j] |= FlagFrozen
				}
				if sign[j] > 0 {
					flags[j] |= FlagExc
				}
			}
			wT := make([]float32, nIn*ld)
			for i := range wT {
				wT[i] = float32(i)
			}
			wT = wT[rng.IntN(ld):]
			w2, fb2, v2, wT2 := slices.Clone(w), slices.Clone(fb), slices.Clone(v), slices.Clone(wT)
			// The dense kernel on the same synapses, its gradient and
			// flags laid out in step with the row.
			w3, fb3, v3 := slices.Clone(w), slices.Clone(fb), slices.Clone(v)
			g3, flags3 := make([]float32, n), make([]int32, n)
			for s, j := range col {
				g3[s], flags3[s] = g[j], flags[j]
			}
			sgdRowFBGo(w, fb, v, col, g, flags, k)
			CopyColumn(wT, w, col, ld)
			// A row without a gradient goes to the kernels as nil.
			gk := g
			if zeroG {
				gk = nil
			}
			SGDRowFB(w2, fb2, v2, col, gk, flags, k, wT2, ld)
			if !bitsEqual(w, w2) || !bitsEqual(fb, fb2) || !bitsEqual(v, v2) || !bitsEqual(wT, wT2) {
				t.Fatalf("n=%d zeroG=%v ld=%d: kernel differs from the loop", n, zeroG, ld)
			}
			SGDRowFBDense(w3, fb3, v3, g3, flags3, k)
			if !bitsEqual(w, w3) || !bitsEqual(fb, fb3) || !bitsEqual(v, v3) {
				t.Fatalf("n=%d zeroG=%v: dense kernel differs from the loop", n, zeroG)
			}
			// The packed-word kernel, whose flags are the static Dale
			// words (inhibitory ones carry FlagInh, which the step ignores),
			// against the loop with those flags, in both implementations.
			static := make([]int32, nIn)
			for j := range static {
				static[j] = FlagInh
				if sign[j] > 0 {
					static[j] = FlagExc
				}
			}
			words := make([]int32, n)
			for s, j := range col {
				words[s] = j | static[j]<<16
			}
			w4, fb4, v4, wT4 := slices.Clone(w3), slices.Clone(fb3), slices.Clone(v3), slices.Clone(wT2)
			w5, fb5, v5, wT5 := slices.Clone(w3), slices.Clone(fb3), slices.Clone(v3), slices.Clone(wT2)
			sgdRowFBGo(w3, fb3, v3, col, g, static, k)
			CopyColumn(wT2, w3, col, ld)
			SGDRowFBWords(w4, fb4, v4, words, gk, k, wT4, ld)
			sgdRowFBWordsGo(w5, fb5, v5, words, gk, k, wT5, ld)
			if !bitsEqual(w3, w4) || !bitsEqual(fb3, fb4) || !bitsEqual(v3, v4) || !bitsEqual(wT2, wT4) {
				t.Fatalf("n=%d zeroG=%v ld=%d: packed-word kernel differs from the loop", n, zeroG, ld)
			}
			if !bitsEqual(w3, w5) || !bitsEqual(fb3, fb5) || !bitsEqual(v3, v5) || !bitsEqual(wT2, wT5) {
				t.Fatalf("n=%d zeroG=%v ld=%d: packed-word loop differs from the loop", n, zeroG, ld)
			}
		}
	}
}

// TestAddTiles checks the tiled product against the portable loop bit for
// bit, for whole strips of 8 tiles and for leftover tiles.
func TestAddTiles(t *testing.T) {
	t.Parallel()
	rng := newRNG(8)
	const nIn = 37
	ts := nIn * Tile
	for _, n := range []int{8, 16, 64, 72, 512} {
		for _, terms := range []int{0, 1, 5, 40} {
			b := make([]float32, n/Tile*ts)
			for i := range b {
				b[i] = float32(rng.NormFloat64())
			}
			v := make([]float32, terms)
			off := make([]int32, terms)
			for k := range v {
				v[k] = float32(rng.NormFloat64())
				off[k] = int32(rng.IntN(nIn) * Tile)
			}
			c0 := make([]float32, n)
			for i := range c0 {
				c0[i] = float32(rng.NormFloat64())
			}
			want, got := slices.Clone(c0), slices.Clone(c0)
			addTilesGo(want, v, off, b, ts)
			AddTiles(got, v, off, b, ts)
			if !bitsEqual(got, want) {
				t.Fatalf("n=%d terms=%d: kernel differs from the loop", n, terms)
			}
		}
	}
}

// TestAddTilesBatch checks the batch product, a block of columns at a time,
// against AddTiles on each sample's own entries bit for bit (NaN payloads,
// -0 and infinities among the weights and values included; AddTiles'
// kernel and its loop agree but for NaN payloads, so each is checked
// against its own kind): samples without entries, sparse and dense inputs,
// more columns than a block, a batch of one.
func TestAddTilesBatch(t *testing.T) {
	t.Parallel()
	rng := newRNG(9)
	const n1 = 128
	special := []float32{float32(math.Copysign(0, -1)), math.Float32frombits(0x7fc0_1234),
		float32(math.Inf(1)), 1e-40}
	for _, nIn := range []int{53, 3*batchBlockCols + 5} {
		ts := nIn * Tile
		for _, n := range []int{1, 3, 16} {
			for _, density := range []float64{0, 0.05, 0.3, 1} {
				b := make([]float32, n1/Tile*ts)
				for i := range b {
					b[i] = float32(rng.NormFloat64())
					if rng.IntN(97) == 0 {
						b[i] = special[rng.IntN(len(special))]
					}
				}
				var v []float32
				var off []int32
				ptr := []int32{0}
				for range n {
					for j := range nIn {
						if rng.Float64() < density {
							x := float32(rng.NormFloat64())
							if rng.IntN(31) == 0 {
								x = special[rng.IntN(len(special))]
							}
							v = append(v, x)
							off = append(off, int32(j*Tile))
						}
					}
					ptr = append(ptr, int32(len(v)))
				}
				z0 := make([]float32, n*n1)
				for i := range z0 {
					z0[i] = float32(rng.NormFloat64())
				}
				cur := make([]int32, n)
				for s0 := 0; s0 < n1; s0 += 64 {
					want, got := slices.Clone(z0), slices.Clone(z0)
					wantGo, gotGo := slices.Clone(z0), slices.Clone(z0)
					for s := range n {
						lo, hi := ptr[s], ptr[s+1]
						AddTiles(want[s*n1+s0:s*n1+s0+64], v[lo:hi], off[lo:hi], b[s0/Tile*ts:], ts)
						addTilesGo(wantGo[s*n1+s0:s*n1+s0+64], v[lo:hi], off[lo:hi], b[s0/Tile*ts:], ts)
					}
					AddTilesBatch(got[s0:], n1, v, off, ptr, cur, b[s0/Tile*ts:], ts)
					if !bitsEqual(got, want) {
						t.Fatalf("nIn=%d n=%d density=%v strip %d: batch product differs from AddTiles", nIn, n, density, s0)
					}
					addTilesBatchGo(gotGo[s0:], n1, v, off, ptr, b[s0/Tile*ts:], ts)
					if !bitsEqual(gotGo, wantGo) {
						t.Fatalf("nIn=%d n=%d density=%v strip %d: addTilesBatchGo differs from addTilesGo", nIn, n, density, s0)
					}
				}
			}
		}
	}
}

// TestTransposeTile checks the Tile transpose (vector blocks and the
// loop's tail) against its definition, NaN payloads and -0 included, the
// same into columns other distances apart (transposeRows8), and syncT of
// a dense tiled layer against the synapse-by-synapse copy.
// TestTransposeInto checks TransposeInto at shapes around its blocks of 8 rows,
// bit for bit (a -0 and a NaN payload among the values), and that it
// writes nothing past rows x cols.
func TestTransposeInto(t *testing.T) {
	t.Parallel()
	rng := newRNG(12)
	const keep = 0x7fc0_0bad
	for _, rows := range []int{0, 1, 7, 8, 9, 16, 23, 64} {
		for _, cols := range []int{0, 1, 5, 8, 12, 33} {
			src := make([]float32, rows*cols)
			for i := range src {
				src[i] = float32(rng.NormFloat64())
			}
			if len(src) > 1 {
				src[0] = float32(math.Copysign(0, -1))
				src[len(src)-1] = math.Float32frombits(0x7fc0_1234)
			}
			dst := make([]float32, rows*cols+3)
			for i := range dst {
				dst[i] = math.Float32frombits(keep)
			}
			TransposeInto(dst, src, rows, cols)
			for i, v := range dst {
				want := uint32(keep)
				if i < rows*cols {
					j, r := i/rows, i%rows
					want = math.Float32bits(src[r*cols+j])
				}
				if math.Float32bits(v) != want {
					t.Fatalf("%dx%d: dst[%d] = %#x, want %#x", rows, cols, i, math.Float32bits(v), want)
				}
			}
		}
	}
}

func TestTransposeTile(t *testing.T) {
	t.Parallel()
	rng := newRNG(11)
	for _, n := range []int{1, 7, 8, 9, 15, 16, 17, 130, 512} {
		src := make([]float32, Tile*n)
		for i := range src {
			src[i] = float32(rng.NormFloat64())
		}
		src[0] = float32(math.Copysign(0, -1))
		src[len(src)-1] = math.Float32frombits(0x7fc0_1234)
		dst := make([]float32, Tile*n)
		TransposeTile(dst, src, n)
		for r := range Tile {
			for j := range n {
				if a, b := math.Float32bits(dst[j*Tile+r]), math.Float32bits(src[r*n+j]); a != b {
					t.Fatalf("n=%d: dst[%d] = %#x, want src[%d] = %#x", n, j*Tile+r, a, r*n+j, b)
				}
			}
		}
	}
	// transposeRows8Impl into columns ld apart leaves the entries between them.
	for _, n := range []int{1, 8, 16, 17, 40} {
		for _, ld := range []int{8, 16, 37} {
			src := make([]float32, Tile*n)
			for i := range src {
				src[i] = float32(rng.NormFloat64())
			}
			src[1] = float32(math.Copysign(0, -1))
			const keep = 0x7fc0_0bad
			dst := make([]float32, (n-1)*ld+Tile)
			for i := range dst {
				dst[i] = math.Float32frombits(keep)
			}
			transposeRows8Impl(dst, ld, src, n)
			for i, v := range dst {
				j, r := i/ld, i%ld
				want := uint32(keep)
				if r < Tile {
					want = math.Float32bits(src[r*n+j])
				}
				if math.Float32bits(v) != want {
					t.Fatalf("n=%d ld=%d: dst[%d] = %#x, want %#x", n, ld, i, math.Float32bits(v), want)
				}
			}
		}
	}
}

// TestAdamRow checks the vector masked-Adam row step and its fused column
// copy against the loop and CopyColumn bit for bit, with and without a
// twin, coupled L2 and decay, tails of every length, tiled and untiled
// strides, bias corrections below 1 and at 1 (where the kernel skips the
// division).
func TestAdamRow(t *testing.T) {
	t.Parallel()
	rng := newRNG(9)
	const eta, b1, b2, eps = 3e-3, 0.9, 0.999, 1e-3
	bcs := [][2]float32{{0.19, 0.002}, {1, 0.002}, {1, 1}}
	const nIn = 512
	for ni, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 23, 154, 511} {
		for c := range 4 {
			twin := c%2 == 1
			leak := c >= 2
			bc1, bc2 := bcs[(ni+c)%3][0], bcs[(ni+c)%3][1]
			wd, lam := float32(1e-3), float32(0)
			if twin {
				wd, lam = 0, 1e-3
			}
			k := NewAdamCoef(b1, b2, bc1, bc2, eta, eps, wd, lam, leak)
			g := make([]float32, nIn)
			frozen := make([]int32, nIn)
			sign := make([]float32, nIn)
			for j := range g {
				g[j] = float32(rng.NormFloat64() * 0.01)
				if rng.IntN(7) == 0 {
					g[j] = 0
				}
				if rng.IntN(3) == 0 {
					frozen[j] = 1
				}
				sign[j] = 1
				if rng.IntN(5) == 0 {
					sign[j] = -1
				}
			}
			w := make([]float32, n)
			m1 := make([]float32, n)
			m2 := make([]float32, n)
			perm := rng.Perm(nIn)[:n]
			slices.Sort(perm)
			col := make([]int32, n)
			for s := range w {
				col[s] = int32(perm[s])
				w[s] = float32(rng.NormFloat64() * 0.05)
				m1[s] = float32(rng.NormFloat64() * 0.01)
				m2[s] = float32(rng.Float64() * 1e-4)
				switch rng.IntN(5) {
				case 0:
					w[s], m1[s], m2[s] = 0, 0, 0
				case 1:
					w[s] = float32(math.Copysign(0, -1))
				case 2:
					w[s] = float32(rng.NormFloat64() * 1e-4) // may cross zero
				case 3:
					m1[s] = float32(rng.NormFloat64() * 1e-30) // the flush
				case 4:
					if rng.IntN(8) == 0 {
						m1[s] = float32(math.NaN()) // kept, as FlushTiny keeps it
					}
				}
			}
			var fb []float32
			if twin {
				fb = make([]float32, n)
				for s := range fb {
					fb[s] = float32(rng.NormFloat64() * 0.05)
				}
			}
			ld := []int{Tile, 1, 520, Tile}[c]
			wT := make([]float32, nIn*ld)
			for i := range wT {
				wT[i] = float32(i)
			}
			wT = wT[rng.IntN(ld):]
			synSign := make([]float32, n) // the Dale sign per synapse
			for s, j := range col {
				synSign[s] = sign[j]
			}
			w2, fb2, m12, m22, wT2 := slices.Clone(w), slices.Clone(fb), slices.Clone(m1), slices.Clone(m2), slices.Clone(wT)
			w3, fb3, m13, m23, wT3 := slices.Clone(w), slices.Clone(fb), slices.Clone(m1), slices.Clone(m2), slices.Clone(wT)
			w4, fb4, m14, m24, wT4 := slices.Clone(w), slices.Clone(fb), slices.Clone(m1), slices.Clone(m2), slices.Clone(wT)
			adamRowGo(w, fb, m1, m2, col, g, frozen, synSign, k)
			CopyColumn(wT, w, col, ld)
			AdamRow(w2, fb2, m12, m22, col, g, frozen, synSign, k, wT2, ld)
			if !bitsEqual(w, w2) || !bitsEqual(fb, fb2) || !bitsEqual(m1, m12) || !bitsEqual(m2, m22) || !bitsEqual(wT, wT2) {
				t.Fatalf("n=%d twin=%v leak=%v ld=%d: kernel differs from the loop", n, twin, leak, ld)
			}
			// frozen nil (no pre unit frozen) against the loop on all-zero words.
			adamRowGo(w3, fb3, m13, m23, col, g, make([]int32, nIn), synSign, k)
			CopyColumn(wT3, w3, col, ld)
			AdamRow(w4, fb4, m14, m24, col, g, nil, synSign, k, wT4, ld)
			if !bitsEqual(w3, w4) || !bitsEqual(fb3, fb4) || !bitsEqual(m13, m14) || !bitsEqual(m23, m24) || !bitsEqual(wT3, wT4) {
				t.Fatalf("n=%d twin=%v leak=%v ld=%d: kernel without frozen words differs from the loop", n, twin, leak, ld)
			}
		}
	}
}

// TestCompressPositive checks the vector left-pack against the loop on
// rows with zeros, negatives and NaNs, at every length around a vector.
func TestCompressPositive(t *testing.T) {
	t.Parallel()
	rng := newRNG(10)
	for _, n := range []int{0, 1, 7, 8, 9, 15, 16, 17, 255, 256, 512, 515} {
		for trial := range 20 {
			src := make([]float32, n)
			for i := range src {
				switch rng.IntN(4) {
				case 0:
					src[i] = 0
				default:
					src[i] = float32(rng.NormFloat64())
				}
				if trial%2 == 0 {
					src[i] = max(src[i], 0)
				}
			}
			if trial == 3 && n > 0 {
				src[n/2] = float32(math.NaN())
			}
			want := make([]float32, n)
			got := make([]float32, n)
			wn, wbad := compressPositiveGo(want, src)
			gn, gbad := CompressPositive(got, src)
			if wn != gn || wbad != gbad || !bitsEqual(want[:wn], got[:gn]) {
				t.Fatalf("n=%d trial %d: got %d %v, want %d %v", n, trial, gn, gbad, wn, wbad)
			}
		}
	}
}

// TestThresholdList checks the vector threshold-and-list against the loop.
func TestThresholdList(t *testing.T) {
	t.Parallel()
	rng := newRNG(11)
	for _, n := range []int{0, 1, 7, 8, 9, 16, 26, 256, 512, 515} {
		for trial := range 10 {
			a := make([]float32, n)
			for i := range a {
				a[i] = max(0, float32(rng.NormFloat64()))
			}
			thr := float32(rng.Float64())
			if trial == 0 {
				thr = 0
			}
			a1, a2 := slices.Clone(a), slices.Clone(a)
			i1, i2 := make([]int32, n), make([]int32, n)
			n1 := thresholdListGo(a1, thr, i1, 0)
			n2 := ThresholdList(a2, thr, i2)
			if n1 != n2 || !bitsEqual(a1, a2) || !slices.Equal(i1[:n1], i2[:n2]) {
				t.Fatalf("n=%d trial %d: kernel differs from the loop", n, trial)
			}
		}
	}
}

// TestSplit checks the vector Split against the loop, with ties at the
// pivot.
func TestSplit(t *testing.T) {
	t.Parallel()
	rng := newRNG(12)
	for _, n := range []int{0, 1, 7, 8, 9, 16, 33, 255, 256, 515} {
		for trial := range 10 {
			src := make([]float32, n)
			for i := range src {
				src[i] = float32(rng.IntN(9)) / 4 // many ties
				if trial%2 == 1 {
					src[i] = float32(rng.ExpFloat64())
				}
			}
			var p float32 = 1
			if n > 0 {
				p = src[rng.IntN(n)]
			}
			wh, wl := make([]float32, n), make([]float32, n)
			gh, gl := make([]float32, n), make([]float32, n)
			wnh, wnl := splitGo(wh, wl, src, p)
			gnh, gnl := Split(gh, gl, src, p)
			if wnh != gnh || wnl != gnl || !bitsEqual(wh[:wnh], gh[:gnh]) || !bitsEqual(wl[:wnl], gl[:gnl]) {
				t.Fatalf("n=%d trial %d: got %d/%d, want %d/%d", n, trial, gnh, gnl, wnh, wnl)
			}
		}
	}
}

// TestSparseDiff checks the vector sparse difference against the loop,
// NaN included.
func TestSparseDiff(t *testing.T) {
	t.Parallel()
	rng := newRNG(13)
	for _, n := range []int{0, 1, 7, 8, 9, 16, 784, 1027} {
		for trial := range 10 {
			x, o := make([]float32, n), make([]float32, n)
			for j := range x {
				o[j] = -0.42
				if rng.IntN(3) == 0 {
					o[j] = 0
				}
				x[j] = o[j]
				if rng.IntN(5) == 0 {
					x[j] = float32(rng.NormFloat64())
				}
			}
			if trial == 3 && n > 0 {
				x[n/2] = float32(math.NaN())
			}
			wv, gv := make([]float32, n), make([]float32, n)
			wi, gi := make([]int32, n), make([]int32, n)
			wn := sparseDiffGo(x, o, wv, wi, 0)
			gn := SparseDiff(x, o, gv, gi)
			if wn != gn || !bitsEqual(wv[:wn], gv[:gn]) || !slices.Equal(wi[:wn], gi[:gn]) {
				t.Fatalf("n=%d trial %d: got %d entries, want %d", n, trial, gn, wn)
			}
		}
	}
}

// TestReluGain checks the vector rectifier against the loop on NaN, -0,
// infinities and gains 0, 1 and between.
func TestReluGain(t *testing.T) {
	t.Parallel()
	rng := newRNG(14)
	special := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0,
		float32(math.Inf(1)), float32(math.Inf(-1))}
	for _, n := range []int{0, 1, 7, 8, 9, 16, 256, 515} {
		for trial := range 10 {
			z, g := make([]float32, n), make([]float32, n)
			for i := range z {
				z[i] = float32(rng.NormFloat64())
				if rng.IntN(6) == 0 {
					z[i] = special[rng.IntN(len(special))]
				}
				switch rng.IntN(3) {
				case 0:
					g[i] = 1
				case 1:
					g[i] = 0
				default:
					g[i] = 1 - float32(rng.Float64())
				}
			}
			want, got := make([]float32, n), make([]float32, n)
			reluGainGo(want, z, g)
			ReluGain(got, z, g)
			if !bitsEqual(want, got) {
				t.Fatalf("n=%d trial %d: vector rectifier differs from the loop", n, trial)
			}
			for i, v := range z { // the loop is the reference's relu then gain
				r := max(v, 0)
				if g[i] != 1 {
					r *= g[i]
				}
				if math.Float32bits(r) != math.Float32bits(want[i]) && !(r != r && want[i] != want[i]) {
					t.Fatalf("reluGainGo(%v, %v) = %v, want %v", v, g[i], want[i], r)
				}
			}
		}
	}
}

// TestGatherRows checks the vector gather-accumulate through an index map
// against the loop.
func TestGatherRows(t *testing.T) {
	t.Parallel()
	rng := newRNG(15)
	const nIn, rowsIn = 512, 40
	// A sparse matrix: present synapses at their index in b, absent ones at
	// the zero past b's end.
	var b []float32
	pos := make([]int32, rowsIn*nIn)
	for s := range pos {
		pos[s] = -1
		if rng.IntN(3) == 0 {
			pos[s] = int32(len(b))
			b = append(b, float32(rng.NormFloat64()))
		}
	}
	for s := range pos {
		if pos[s] < 0 {
			pos[s] = int32(len(b))
		}
	}
	b = append(b, 0)
	for _, n := range []int{0, 1, 7, 8, 9, 51, 64, 77} {
		for trial := range 10 {
			idx := make([]int32, n)
			for t := range idx {
				idx[t] = int32(rng.IntN(nIn))
			}
			slices.Sort(idx)
			rows := rng.IntN(30)
			u := make([]float32, rows)
			off := make([]int32, rows)
			for r := range u {
				u[r] = float32(rng.NormFloat64())
				off[r] = int32(rng.IntN(rowsIn) * nIn)
			}
			want, got := make([]float32, n), make([]float32, n)
			for t := range want {
				want[t] = float32(rng.NormFloat64())
			}
			copy(got, want)
			gatherRowsGo(want, u, off, pos, b, idx)
			GatherRows(got, u, off, pos, b, idx)
			if !bitsEqual(want, got) {
				t.Fatalf("n=%d trial %d: vector gather differs from the loop", n, trial)
			}
		}
	}
}

// TestAdamCoefLayout pins the field offsets adamRowAVX2 reads.
func TestAdamCoefLayout(t *testing.T) {
	var k AdamCoef
	for _, c := range []struct {
		name      string
		got, want uintptr
	}{
		{"eta", unsafe.Offsetof(k.eta), 192}, {"wd", unsafe.Offsetof(k.wd), 256},
		{"lam", unsafe.Offsetof(k.lam), 288}, {"tiny", unsafe.Offsetof(k.tiny), 320},
		{"hasWD", unsafe.Offsetof(k.hasWD), 352}, {"hasLam", unsafe.Offsetof(k.hasLam), 356},
		{"leak", unsafe.Offsetof(k.leak), 360}, {"divBC1", unsafe.Offsetof(k.divBC1), 364},
		{"divBC2", unsafe.Offsetof(k.divBC2), 368},
	} {
		if c.got != c.want {
			t.Errorf("AdamCoef.%s at offset %d, the kernel reads %d", c.name, c.got, c.want)
		}
	}
}

// TestKernelsVEXOnly checks that the module's assembly uses no legacy SSE
// instruction on a vector register (see the note at the top of
// vec_amd64.s): every instruction naming an X, Y or Z register must be a
// V... instruction.
func TestKernelsVEXOnly(t *testing.T) {
	t.Parallel()
	vreg := regexp.MustCompile(`\b[XYZ]([0-9]|[12][0-9]|3[01])\b`)
	files := 0
	err := filepath.WalkDir("../..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && path != "../.." && strings.HasPrefix(d.Name(), ".") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".s") {
			return nil
		}
		files++
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for n, line := range strings.Split(string(src), "\n") {
			code, _, _ := strings.Cut(line, "//")
			f := strings.Fields(code)
			// A macro's use (NAME(args)) is skipped: its body's lines,
			// below its #define, are checked like any others.
			if len(f) < 2 || strings.HasSuffix(f[0], ":") || f[0] == "TEXT" || strings.HasPrefix(f[0], "#") || strings.Contains(f[0], "(") {
				continue
			}
			if vreg.MatchString(strings.Join(f[1:], " ")) && !strings.HasPrefix(f[0], "V") {
				t.Errorf("%s:%d: %s is not VEX-encoded: %s", path, n+1, f[0], strings.TrimSpace(code))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 3 {
		t.Fatalf("found %d assembly files, want the module's 3 or more", files)
	}
}
