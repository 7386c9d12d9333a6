//go:build !purego

package kernels

//go:noescape
func addRowsAVX512(c, v []float32, off []int32, b []float32, zero bool)

//go:noescape
func addRowsAVX2(c, v []float32, off []int32, b []float32, zero bool)

func addRowsImpl(c, v []float32, off []int32, b []float32, zero bool) {
	n := len(c)
	if !useAVX2 || n < 8 {
		if zero {
			clear(c)
		}
		addRowsGo(c, v, off, b)
		return
	}
	// The assembly does no bounds checks.
	for _, o := range off {
		if o < 0 || int(o)+n > len(b) {
			panic("kernels: AddRows column out of range")
		}
	}
	if n16 := n &^ 15; useAVX512 && n16 > 0 {
		addRowsAVX512(c[:n16], v, off, b, zero)
		c, b, n = c[n16:], b[n16:], n-n16
	}
	if n >= 8 {
		addRowsAVX2(c, v, off, b, zero)
	}
	if n8 := n &^ 7; n8 < n {
		if zero {
			clear(c[n8:])
		}
		addRowsGo(c[n8:], v, off, b[n8:])
	}
}

//go:noescape
func sgdRowInputAVX2(w, v []float32, col []uint16, g []float32, k *SGDCoef, wT []float32, ld int)

func sgdRowInputImpl(w, v []float32, col []uint16, g []float32, k *SGDCoef, wT []float32, ld int) {
	n := len(w)
	if !useAVX2 || n < 8 {
		sgdRowInputGo(w, v, col, g, k)
		if wT != nil {
			CopyColumn(wT, w, col, ld)
		}
		return
	}
	if len(v) < n || len(col) < n {
		panic("kernels: SGDRowInput length mismatch")
	}
	// The gather and the column copy's stores do no bounds checks; col is
	// ascending (a row's stored synapses), so its ends bound every entry.
	if g != nil && int(col[n-1]) >= len(g) {
		panic("kernels: SGDRowInput column out of range")
	}
	if wT == nil {
		ld = 0 // no copy
	} else if ld < 1 || int(col[n-1])*ld >= len(wT) {
		panic("kernels: SGDRowInput column copy out of range")
	}
	sgdRowInputAVX2(w, v[:n], col[:n], g, k, wT, ld) // the tail too
}

//go:noescape
func sgdRowFBAVX2(w, fb, v []float32, col []int32, g []float32, flags []int32, k *SGDFBCoef, wT []float32, ld int)

func sgdRowFBImpl(w, fb, v []float32, col []int32, g []float32, flags []int32, k *SGDFBCoef, wT []float32, ld int) {
	n := len(w)
	if !useAVX2 || n < 8 {
		sgdRowFBGo(w, fb, v, col, g, flags, k)
		CopyColumn(wT, w, col, ld)
		return
	}
	if len(fb) < n || len(v) < n || len(col) < n {
		panic("kernels: SGDRowFB length mismatch")
	}
	// The gathers and the column copy's stores do no bounds checks; col is
	// ascending (a row's stored synapses), so its ends bound every entry.
	if col[0] < 0 || int(col[n-1]) >= len(flags) || (g != nil && int(col[n-1]) >= len(g)) {
		panic("kernels: SGDRowFB column out of range")
	}
	if ld < 1 || int(col[n-1])*ld >= len(wT) {
		panic("kernels: SGDRowFB column copy out of range")
	}
	sgdRowFBAVX2(w, fb[:n], v[:n], col[:n], g, flags, k, wT, ld) // the tail too
}

//go:noescape
func sgdRowFBWordsAVX2(w, fb, v []float32, colWord []int32, g []float32, k *SGDFBCoef, wT []float32, ld int)

func sgdRowFBWordsImpl(w, fb, v []float32, colWord []int32, g []float32, k *SGDFBCoef, wT []float32, ld int) {
	n := len(w)
	if !useAVX2 || n < 8 {
		sgdRowFBWordsGo(w, fb, v, colWord, g, k, wT, ld)
		return
	}
	if len(fb) < n || len(v) < n || len(colWord) < n {
		panic("kernels: SGDRowFBWords length mismatch")
	}
	// As in sgdRowFBImpl: the columns ascend, so the ends bound them all.
	first, last := colWord[0]&0xffff, colWord[n-1]&0xffff
	if colWord[0] < 0 || (g != nil && int(last) >= len(g)) || first > last {
		panic("kernels: SGDRowFBWords column out of range")
	}
	if ld < 1 || int(last)*ld >= len(wT) {
		panic("kernels: SGDRowFBWords column copy out of range")
	}
	sgdRowFBWordsAVX2(w, fb[:n], v[:n], colWord[:n], g, k, wT, ld) // the tail too
}

//go:noescape
func sgdRowFBDenseAVX2(w, fb, v, g []float32, flags []int32, k *SGDFBCoef)

func sgdRowFBDenseImpl(w, fb, v, g []float32, flags []int32, k *SGDFBCoef) {
	n8 := 0
	if useAVX2 {
		n8 = len(w) &^ 7
	}
	if n8 > 0 {
		sgdRowFBDenseAVX2(w[:n8], fb, v, g, flags, k) // the caller checked the lengths
	}
	sgdRowFBDenseGo(w[n8:], fb[n8:], v[n8:], g[n8:], flags[n8:], k)
}

//go:noescape
func addTiles8AVX2(c, v []float32, off []int32, b []float32, ts int)

func addTilesImpl(c, v []float32, off []int32, b []float32, ts int) {
	if !useAVX2 {
		addTilesGo(c, v, off, b, ts)
		return
	}
	const strip = 8 * Tile
	q := 0
	for ; q+strip <= len(c); q += strip {
		addTiles8AVX2(c[q:q+strip], v, off, b[q/Tile*ts:], ts)
	}
	for ; q < len(c); q += Tile {
		addRowsAVX2(c[q:q+Tile], v, off, b[q/Tile*ts:], false)
	}
}

//go:noescape
func addTilesBatch8AVX2(z []float32, zbytes int, v []float32, off, ptr, cur []int32, b []float32, ts, block, end int)

func addTilesBatchImpl(z []float32, zstride int, v []float32, off, ptr, cur []int32, b []float32, ts int) {
	if !useAVX2 {
		addTilesBatchGo(z, zstride, v, off, ptr, b, ts)
		return
	}
	copy(cur, ptr)
	const block = batchBlockCols * Tile
	addTilesBatch8AVX2(z, 4*zstride, v, off, ptr, cur, b, ts, block, ts) // offsets < ts
}

//go:noescape
func transposeRows8AVX2(dst []float32, ld int, src []float32, cols, n int)

func transposeRows8Impl(dst []float32, ld int, src []float32, n int) {
	n8 := n &^ 7
	if useAVX2 && n8 > 0 {
		transposeRows8AVX2(dst, ld, src, n8, n) // the callers checked the shape
	} else {
		n8 = 0
	}
	transposeRows8Go(dst, ld, src, n, n8)
}

//go:noescape
func adamRowAVX2(w, fb, m1, m2 []float32, col []int32, g []float32, frozen []int32, sign []float32, k *AdamCoef, wT []float32, ld int)

func adamRowImpl(w, fb, m1, m2 []float32, col []int32, g []float32, frozen []int32, sign []float32, k *AdamCoef, wT []float32, ld int) {
	n := len(w)
	if !useAVX2 || n < 8 {
		adamRowGo(w, fb, m1, m2, col, g, frozen, sign, k)
		CopyColumn(wT, w, col, ld)
		return
	}
	if len(m1) < n || len(m2) < n || len(col) < n || (fb != nil && (len(fb) < n || len(sign) < n)) {
		panic("kernels: AdamRow length mismatch")
	}
	// The gathers and the column copy's stores do no bounds checks; col is
	// ascending (a row's stored synapses), so its ends bound every entry.
	top := len(g)
	if frozen != nil {
		top = min(top, len(frozen))
	}
	if col[0] < 0 || int(col[n-1]) >= top {
		panic("kernels: AdamRow column out of range")
	}
	if wT == nil {
		ld = 0 // no copy
	} else if ld < 1 || int(col[n-1])*ld >= len(wT) {
		panic("kernels: AdamRow column copy out of range")
	}
	var fb8 []float32
	if fb != nil {
		fb8 = fb[:n]
	}
	adamRowAVX2(w, fb8, m1, m2, col, g, frozen, sign, k, wT, ld)
	if n8 := n &^ 7; n8 < n {
		var fbt, st []float32
		if fb != nil {
			fbt, st = fb[n8:n], sign[n8:n]
		}
		adamRowGo(w[n8:], fbt, m1[n8:n], m2[n8:n], col[n8:n], g, frozen, st, k)
		CopyColumn(wT, w[n8:], col[n8:n], ld)
	}
}

//go:noescape
func compressPosAVX2(dst, src []float32, perm *[256][8]int32) (n int, bad bool)

// packPerm[m] lists the set bits of m, then zeros: the lane order that
// left-packs the lanes selected by m.
var packPerm = func() *[256][8]int32 {
	var t [256][8]int32
	for m := range 256 {
		k := 0
		for b := range 8 {
			if m&(1<<b) != 0 {
				t[m][k] = int32(b)
				k++
			}
		}
	}
	return &t
}()

func compressPositiveImpl(dst, src []float32) (int, bool) {
	if !useAVX2 || len(src) < 8 {
		return compressPositiveGo(dst, src)
	}
	if len(dst) < len(src) {
		panic("kernels: CompressPositive dst too short")
	}
	n8 := len(src) &^ 7
	n, bad := compressPosAVX2(dst, src[:n8], packPerm)
	m, bad2 := compressPositiveGo(dst[n:], src[n8:])
	return n + m, bad || bad2
}

//go:noescape
func thresholdListAVX2(a []float32, thr float32, idx []int32, perm *[256][8]int32, lanes *[8]int32) int

var laneIdx = &[8]int32{0, 1, 2, 3, 4, 5, 6, 7}

func thresholdListImpl(a []float32, thr float32, idx []int32) int {
	if !useAVX2 || len(a) < 8 {
		return thresholdListGo(a, thr, idx, 0)
	}
	if len(idx) < len(a) {
		panic("kernels: ThresholdList idx too short")
	}
	n8 := len(a) &^ 7
	n := thresholdListAVX2(a[:n8], thr, idx, packPerm, laneIdx)
	return n + thresholdListGo(a[n8:], thr, idx[n:], n8)
}

//go:noescape
func splitAVX2(hi, lo, src []float32, p float32, perm *[256][8]int32) (nhi, nlo int)

func splitImpl(hi, lo, src []float32, p float32) (nhi, nlo int) {
	if !useAVX2 || len(src) < 8 {
		return splitGo(hi, lo, src, p)
	}
	if len(hi) < len(src) || len(lo) < len(src) {
		panic("kernels: Split buffers too short")
	}
	n8 := len(src) &^ 7
	nhi, nlo = splitAVX2(hi, lo, src[:n8], p, packPerm)
	h, l := splitGo(hi[nhi:], lo[nlo:], src[n8:], p)
	return nhi + h, nlo + l
}

//go:noescape
func sparseDiffAVX2(x, o, val []float32, idx []int32, perm *[256][8]int32, lanes *[8]int32) int

func sparseDiffImpl(x, o, val []float32, idx []int32) int {
	if !useAVX2 || len(x) < 8 {
		return sparseDiffGo(x, o, val, idx, 0)
	}
	if len(o) < len(x) || len(val) < len(x) || len(idx) < len(x) {
		panic("kernels: SparseDiff buffers too short")
	}
	n8 := len(x) &^ 7
	n := sparseDiffAVX2(x[:n8], o, val, idx, packPerm, laneIdx)
	return n + sparseDiffGo(x[n8:], o[n8:], val[n:], idx[n:], n8)
}

//go:noescape
func reluGainAVX2(a, z, g []float32)

func reluGainImpl(a, z, g []float32) {
	n := len(a)
	if !useAVX2 || n < 8 {
		reluGainGo(a, z, g)
		return
	}
	if len(z) < n || len(g) < n {
		panic("kernels: ReluGain length mismatch")
	}
	n8 := n &^ 7
	reluGainAVX2(a[:n8], z, g)
	reluGainGo(a[n8:], z[n8:], g[n8:])
}

//go:noescape
func gatherRowsAVX2(acc, u []float32, off, pos []int32, b []float32, idx []int32)

func gatherRowsImpl(acc, u []float32, off, pos []int32, b []float32, idx []int32) {
	n := len(acc)
	if !useAVX2 || n < 8 {
		gatherRowsGo(acc, u, off, pos, b, idx)
		return
	}
	if len(idx) < n || len(off) < len(u) {
		panic("kernels: GatherRows length mismatch")
	}
	// The gathers do no bounds checks: pos holds indices of b (checked
	// when it is built); here the rows read.
	var lo, hi int32
	for _, j := range idx[:n] {
		lo, hi = min(lo, j), max(hi, j)
	}
	for _, o := range off[:len(u)] {
		if int(o)+int(lo) < 0 || int(o)+int(hi) >= len(pos) {
			panic("kernels: GatherRows index out of range")
		}
	}
	n8 := n &^ 7
	gatherRowsAVX2(acc[:n8], u, off, pos, b, idx)
	if n8 < n {
		gatherRowsGo(acc[n8:], u, off, pos, b, idx[n8:n])
	}
}

//go:noescape
func ctrlStepRowAVX2(w, fb, v, g []float32, flags []int32, k *CtrlCoef, s *CtrlSums)

func ctrlStepRowImpl(w, fb, v, g []float32, flags []int32, k *CtrlCoef, s *CtrlSums) {
	n := len(w)
	if !useAVX2 || n < 8 {
		ctrlStepRowGo(w, fb, v, g, flags, k, s)
		return
	}
	if len(fb) < n || len(v) < n || len(g) < n || len(flags) < n {
		panic("kernels: CtrlStepRow length mismatch")
	}
	n8 := n &^ 7
	ctrlStepRowAVX2(w[:n8], fb, v, g, flags, k, s)
	ctrlStepRowGo(w[n8:], fb[n8:], v[n8:], g[n8:], flags[n8:], k, s)
}

//go:noescape
func ctrlDecayRowAVX2(w, fb []float32, flags, absent []int32, k *DecayCoef)

func ctrlDecayRowImpl(w, fb []float32, flags, absent []int32, k *DecayCoef) {
	n := len(w)
	if !useAVX2 || n < 8 {
		ctrlDecayRowGo(w, fb, flags, absent, k)
		return
	}
	if len(fb) < n || len(flags) < n || len(absent) < n {
		panic("kernels: CtrlDecayRow length mismatch")
	}
	n8 := n &^ 7
	ctrlDecayRowAVX2(w[:n8], fb, flags, absent, k)
	ctrlDecayRowGo(w[n8:], fb[n8:], flags[n8:], absent[n8:], k)
}

//go:noescape
func anchorRowAVX2(w, ws []float32, lam, aMu, aLam float32)

func anchorRowVecImpl(w, ws []float32, lam, aMu, aLam float32) int {
	n8 := len(w) &^ 7
	if !useAVX2 || n8 == 0 {
		return 0
	}
	anchorRowAVX2(w[:n8], ws[:n8], lam, aMu, aLam)
	return n8
}
