package core

import (
	"math"
	"testing"
)

// TestAddGramDense: the blocked dense product adds to the gram's upper
// triangle and the sums exactly what addOuter adds sample by sample from
// the same rows given sparsely, on every shape around the Go loop's 2 x 4
// tiles and the vector kernel's 4 x 8 (go test -tags purego runs the Go
// loop's).
func TestAddGramDense(t *testing.T) {
	t.Parallel()
	rng := NewRNG(9, StreamRun)
	for _, n := range []int{1, 2, 3, 5, 8, 11, 12, 13, 16, 19, 32, 37, 40} {
		for _, nb := range []int{1, 3, 17} {
			x := make([]float64, nb*n)
			for k := range x {
				if rng.IntN(4) != 0 {
					x[k] = float64(float32(rng.NormFloat64()))
				}
			}
			// The same rows 3 entries apart, NaN between them: a read
			// past a row's n entries shows in the gram.
			ld := n + 3
			xp := make([]float64, nb*ld)
			for k := range xp {
				xp[k] = math.NaN()
			}
			for b := range nb {
				copy(xp[b*ld:], x[b*n:(b+1)*n])
			}
			want, got, got3 := make([]float64, n*n), make([]float64, n*n), make([]float64, n*n)
			ws, gs, gs3 := make([]float64, n), make([]float64, n), make([]float64, n)
			for k := range want {
				want[k] = float64(k%7) * 0.25
				got[k], got3[k] = want[k], want[k]
			}
			for b := range nb {
				var idx []int32
				var val []float32
				for j, v := range x[b*n : (b+1)*n] {
					if v != 0 {
						idx = append(idx, int32(j))
						val = append(val, float32(v))
					}
				}
				addOuter(want, ws, n, idx, val, nil)
			}
			addGramDense(got, gs, n, x, n, nb)
			addGramDense(got3, gs3, n, xp, ld, nb)
			for i := range n {
				if math.Float64bits(ws[i]) != math.Float64bits(gs[i]) || math.Float64bits(ws[i]) != math.Float64bits(gs3[i]) {
					t.Fatalf("n=%d nb=%d: sums[%d] = %v (rows %d apart: %v), want %v", n, nb, i, gs[i], ld, gs3[i], ws[i])
				}
				for j := i; j < n; j++ {
					if math.Float64bits(want[i*n+j]) != math.Float64bits(got[i*n+j]) {
						t.Fatalf("n=%d nb=%d: gram[%d][%d] = %v, want %v", n, nb, i, j, got[i*n+j], want[i*n+j])
					}
					if math.Float64bits(want[i*n+j]) != math.Float64bits(got3[i*n+j]) {
						t.Fatalf("n=%d nb=%d, rows %d apart: gram[%d][%d] = %v, want %v", n, nb, ld, i, j, got3[i*n+j], want[i*n+j])
					}
				}
			}
		}
	}
}
