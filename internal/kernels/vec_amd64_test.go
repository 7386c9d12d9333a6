//go:build !purego

package kernels

import (
	"slices"
	"testing"

	"golang.org/x/sys/cpu"
)

// TestAddRowsEachWidth runs the 256-bit and the 512-bit forms of AddRows
// directly, whichever one AddRows picks on this CPU, against the Go loop
// bit for bit (the 512-bit one only where the CPU has AVX-512F).
func TestAddRowsEachWidth(t *testing.T) {
	t.Parallel()
	if !cpu.X86.HasAVX2 {
		t.Skip("no AVX2")
	}
	type kernel struct {
		name  string
		width int
		rows  func(c, v []float32, off []int32, b []float32, zero bool)
	}
	kernels := []kernel{{"avx2", 8, addRowsAVX2}}
	if cpu.X86.HasAVX512F {
		kernels = append(kernels, kernel{"avx512", 16, addRowsAVX512})
	} else {
		t.Log("no AVX-512F: only the 256-bit kernel runs")
	}
	rng := newRNG(10)
	randoms := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(rng.NormFloat64())
		}
		return x
	}
	for _, k := range kernels {
		for _, terms := range []int{0, 1, 3, 17} {
			// Strips of 8 and 16 lanes, of 64 and 128 elements.
			for _, n := range []int{8, 16, 48, 64, 128, 144, 256, 784} {
				n -= n % k.width
				if n == 0 {
					continue
				}
				const ld = 800
				b := randoms(terms * ld)
				v := randoms(terms)
				off := make([]int32, terms)
				for i := range off {
					off[i] = int32(i*ld + rng.IntN(ld-n+1))
				}
				for _, zero := range []bool{false, true} {
					c0 := randoms(n)
					want, got := slices.Clone(c0), slices.Clone(c0)
					if zero {
						clear(want)
					}
					addRowsGo(want, v, off, b)
					k.rows(got, v, off, b, zero)
					if !bitsEqual(got, want) {
						t.Fatalf("%s AddRows n=%d terms=%d zero=%v: kernel differs from the loop", k.name, n, terms, zero)
					}
				}
			}
		}
	}
}
