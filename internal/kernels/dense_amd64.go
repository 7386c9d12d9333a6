//go:build !purego

package kernels

//go:noescape
func adamAVX2(p, g, m, v []float32, mask []uint32, k *AdamStepCoef)

//go:noescape
func adamMaskedAVX2(p, g, m, v []float32, mask []uint32, k *AdamStepCoef)

//go:noescape
func adamAVX512(p, g, m, v []float32, mask []uint32, k *AdamStepCoef)

//go:noescape
func nonZerosAVX512(v []float32, o []int32, x []float32, stride int, lanes *[16]int32) int

var lanes16 = &[16]int32{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15}

func nonZerosImpl(v []float32, o []int32, x []float32, stride int) ([]float32, []int32) {
	v, o = v[:len(x)], o[:len(x)]
	n16 := len(x) &^ 15
	if !useAVX512 || n16 == 0 {
		return nonZerosGo(v, o, x, stride, 0, 0)
	}
	c := nonZerosAVX512(v, o, x[:n16], stride, lanes16)
	return nonZerosGo(v, o, x[n16:], stride, n16, c)
}

//go:noescape
func positivesAVX512(idx []int32, x []float32, lanes *[16]int32) int

func positivesImpl(idx []int32, x []float32) []int32 {
	idx = idx[:len(x)]
	n16 := len(x) &^ 15
	if !useAVX512 || n16 == 0 {
		return positivesGo(idx, x, 0, 0)
	}
	c := positivesAVX512(idx, x[:n16], lanes16)
	return positivesGo(idx, x[n16:], n16, c)
}

//go:noescape
func accRows4FMA(c []float32, ldc int, v4 []float32, off []int32, b []float32, n int)

//go:noescape
func accRows4AVX512(c []float32, ldc int, v4 []float32, off []int32, b []float32, n int)

func accRows4Impl(c []float32, ldc int, v4 []float32, off []int32, b []float32, n int) {
	if (useAVX512 && n >= 16) || (useFMA && n >= 8) {
		checkDenseRows(off, n, len(b))
	}
	accRows4Run(c, ldc, v4, off, b, n)
}

// accRows4Run is accRows4Impl after the caller has checked that every row
// [o, o+n) lies within b.
func accRows4Run(c []float32, ldc int, v4 []float32, off []int32, b []float32, n int) {
	done := 0
	switch {
	case useAVX512 && n >= 16:
		accRows4AVX512(c, ldc, v4, off, b, n)
		done = n &^ 15
	case useFMA && n >= 8:
		accRows4FMA(c, ldc, v4, off, b, n)
		done = n &^ 7
	}
	if done < n {
		accRows4Go(c, ldc, v4, off, b, n, done)
	}
}

func adamStepImpl(p, g, m, v []float32, mask []uint32, k *AdamStepCoef) {
	n := len(p)
	if !useAVX2 || n < 8 {
		adamStepGo(p, g, m, v, mask, k)
		return
	}
	g, m, v = g[:n], m[:n], v[:n]
	if mask != nil {
		mask = mask[:n]
	}
	// 16 lanes where the CPU has them: the divider and the square root,
	// which bound this step, take as long for 16 as for 8.
	if n16 := n &^ 15; useAVX512 && n16 > 0 {
		adamAVX512(p[:n16], g, m, v, mask, k)
		if n16 == n {
			return
		}
		p, g, m, v = p[n16:], g[n16:], m[n16:], v[n16:]
		if mask != nil {
			mask = mask[n16:]
		}
		n -= n16
		if n < 8 {
			adamStepGo(p, g, m, v, mask, k)
			return
		}
	}
	if mask == nil {
		adamAVX2(p, g, m, v, nil, k)
	} else {
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

//go:noescape
func reluAVX2(z []float32)

//go:noescape
func gateAVX2(c, a []float32)

func reluImpl(z []float32) {
	n8 := 0
	if useAVX2 {
		n8 = len(z) &^ 7
		if n8 > 0 {
			reluAVX2(z[:n8])
		}
	}
	reluGo(z[n8:])
}

func gateImpl(c, a []float32) {
	a = a[:len(c)]
	n8 := 0
	if useAVX2 {
		n8 = len(c) &^ 7
		if n8 > 0 {
			gateAVX2(c[:n8], a[:n8])
		}
	}
	gateGo(c[n8:], a[n8:])
}

//go:noescape
func diffBitsAVX2(nz []uint64, x, o []float32)

func diffBitsImpl(nz []uint64, x, o []float32) {
	full := len(x) / 64
	if useAVX2 && full > 0 {
		diffBitsAVX2(nz[:full], x[:64*full], o[:64*full]) // DiffBits checked the lengths
		nz, x, o = nz[full:], x[64*full:], o[64*full:]
	}
	diffBitsGo(nz, x, o)
}
