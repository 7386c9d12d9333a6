package dataset

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"repro/core"
)

func TestGemmPathsAgree(t *testing.T) {
	t.Parallel()
	g := core.NewRNG(5, 5)
	rnd := func(n int) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(g.NormFloat64())
		}
		return v
	}
	for _, s := range [][3]int{{4, 64, 108}, {9, 130, 108}, {3, 20, 5}, {196, 256, 108}, {8, 128, 0}, {5, 64, 1}} {
		m, n, k := s[0], s[1], s[2]
		t.Run(fmt.Sprintf("%dx%dx%d", m, n, k), func(t *testing.T) {
			a, bt := rnd(m*k), rnd(k*n)
			got := rnd(m * n) // garbage that must be overwritten
			gemm(got, a, bt, m, n, k)
			want := make([]float32, m*n)
			gemmGo(want, a, bt, n, k, 0, m, 0, n)
			if !slices.Equal(got, want) {
				t.Errorf("kernel (%v) and portable loop differ", useKernel)
			}
			// And both are a correct product (float64 reference; the
			// tolerance covers float32 rounding of k terms of size ~1).
			for i := range m {
				for j := range n {
					s := 0.0
					for p := range k {
						s += float64(a[i*k+p]) * float64(bt[p*n+j])
					}
					if d := math.Abs(float64(got[i*n+j]) - s); d > 1e-4*float64(k+1) {
						t.Fatalf("c[%d][%d] = %g, want %g", i, j, got[i*n+j], s)
					}
				}
			}
		})
	}
}
