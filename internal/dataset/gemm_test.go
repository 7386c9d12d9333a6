package dataset

import (
	"fmt"
	"math"
	"slices"
	"testing"

	"repro/internal/data"
)

func TestGemmPathsAgree(t *testing.T) {
	t.Parallel()
	g := data.NewRNG(5, 5)
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

// BenchmarkGemm measures gemm on the V1 shape: a batch of 16 images (3,136
// positions) against 256 filters of 108 values.
func BenchmarkGemm(b *testing.B) {
	for _, path := range []string{"kernel", "go"} {
		b.Run(path, func(b *testing.B) {
			if path == "kernel" && !useKernel {
				b.Skip("no AVX-512")
			}
			m, n, k := 3136, 256, 108
			a, bt, c := make([]float32, m*k), make([]float32, k*n), make([]float32, m*n)
			for i := range a {
				a[i] = float32(i%255) / 255
			}
			for i := range bt {
				bt[i] = float32(i%17)/17 - 0.5
			}
			for b.Loop() {
				if path == "kernel" {
					gemm(c, a, bt, m, n, k)
				} else {
					gemmGo(c, a, bt, n, k, 0, m, 0, n)
				}
			}
			b.ReportMetric(float64(m*n*k)*float64(b.N)/b.Elapsed().Seconds()/1e9, "GMAC/s")
		})
	}
}

func TestReluAddPathsAgree(t *testing.T) {
	t.Parallel()
	g := data.NewRNG(6, 6)
	for _, n := range []int{1, 15, 16, 17, 256, 1000} {
		z, th := make([]float32, n), make([]float32, n)
		for i := range z {
			z[i], th[i] = float32(g.NormFloat64()), float32(g.NormFloat64())
		}
		z[0] = th[0] // a zero difference
		got, want := make([]float32, n), make([]float32, n)
		for range 3 {
			reluAdd(got, z, th)
			for j := range want {
				if d := z[j] - th[j]; d > 0 {
					want[j] += d
				}
			}
		}
		for j := range want {
			if math.Float32bits(got[j]) != math.Float32bits(want[j]) {
				t.Fatalf("n=%d: element %d is %g, want %g", n, j, got[j], want[j])
			}
		}
	}
}
