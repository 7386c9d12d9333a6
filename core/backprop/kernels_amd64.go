//go:build amd64

package backprop

import "golang.org/x/sys/cpu"

// useAVX2 selects the vector kernels; it is a property of the CPU, fixed at
// start-up, and both paths give identical bits.
var useAVX2 = cpu.X86.HasAVX2

//go:noescape
func accRowsAVX2(c, v []float32, off []int32, b []float32)

//go:noescape
func adamAVX2(p, g, m, v []float32, mask []uint32, k *adamCoef)

//go:noescape
func adamMaskedAVX2(p, g, m, v []float32, mask []uint32, k *adamCoef)

//go:noescape
func accRows4AVX2(c []float32, ldc int, v4 []float32, off []int32, b []float32, n int)

func accRows4Impl(c []float32, ldc int, v4 []float32, off []int32, b []float32, n int) {
	if !useAVX2 || n < 8 {
		accRows4Go(c, ldc, v4, off, b, n, 0)
		return
	}
	for _, o := range off {
		if o < 0 || int(o)+n > len(b) {
			panic("backprop: accRows4 row out of range")
		}
	}
	accRows4AVX2(c, ldc, v4, off, b, n)
	if n8 := n &^ 7; n8 < n {
		accRows4Go(c, ldc, v4, off, b, n, n8)
	}
}

func accRowsImpl(c, v []float32, off []int32, b []float32) {
	n := len(c)
	if !useAVX2 || n < 8 {
		accRowsGo(c, v, off, b)
		return
	}
	// The assembly does no bounds checks: every row must fit in b.
	for _, o := range off {
		if o < 0 || int(o)+n > len(b) {
			panic("backprop: accRows row out of range")
		}
	}
	accRowsAVX2(c, v, off, b)
	if n8 := n &^ 7; n8 < n {
		accRowsGo(c[n8:], v, off, b[n8:])
	}
}

func adamStep(p, g, m, v []float32, mask []uint32, k *adamCoef) {
	n := len(p)
	if !useAVX2 || n < 8 {
		adamStepGo(p, g, m, v, mask, k)
		return
	}
	g, m, v = g[:n], m[:n], v[:n]
	if mask == nil {
		adamAVX2(p, g, m, v, nil, k)
	} else {
		mask = mask[:n]
		adamMaskedAVX2(p, g, m, v, mask, k)
	}
	if n8 := n &^ 7; n8 < n {
		var mt []uint32
		if mask != nil {
			mt = mask[n8:]
		}
		adamStepGo(p[n8:], g[n8:], m[n8:], v[n8:], mt, k)
	}
}
