//go:build !amd64 || purego

package kernels

func addRowsImpl(c, v []float32, off []int32, b []float32, zero bool) {
	if zero {
		clear(c)
	}
	addRowsGo(c, v, off, b)
}

func sgdRowInputImpl(w, v []float32, col []uint16, g []float32, k *SGDCoef, wT []float32, ld int) {
	sgdRowInputGo(w, v, col, g, k)
	if wT != nil {
		CopyColumn(wT, w, col, ld)
	}
}

func sgdRowFBImpl(w, fb, v []float32, col []int32, g []float32, flags []int32, k *SGDFBCoef, wT []float32, ld int) {
	sgdRowFBGo(w, fb, v, col, g, flags, k)
	CopyColumn(wT, w, col, ld)
}

func addTilesImpl(c, v []float32, off []int32, b []float32, ts int) { addTilesGo(c, v, off, b, ts) }

func addTilesBatchImpl(z []float32, zstride int, v []float32, off, ptr, _ []int32, b []float32, ts int) {
	addTilesBatchGo(z, zstride, v, off, ptr, b, ts)
}

func adamRowImpl(w, fb, m1, m2 []float32, col []int32, g []float32, frozen []int32, sign []float32, k *AdamCoef, wT []float32, ld int) {
	adamRowGo(w, fb, m1, m2, col, g, frozen, sign, k)
	CopyColumn(wT, w, col, ld)
}

func compressPositiveImpl(dst, src []float32) (int, bool) { return compressPositiveGo(dst, src) }

func thresholdListImpl(a []float32, thr float32, idx []int32) int {
	return thresholdListGo(a, thr, idx, 0)
}

func splitImpl(hi, lo, src []float32, p float32) (int, int) { return splitGo(hi, lo, src, p) }

func sparseDiffImpl(x, o, val []float32, idx []int32) int { return sparseDiffGo(x, o, val, idx, 0) }

func reluGainImpl(a, z, g []float32) { reluGainGo(a, z, g) }

func gatherRowsImpl(acc, u []float32, off, pos []int32, b []float32, idx []int32) {
	gatherRowsGo(acc, u, off, pos, b, idx)
}

func ctrlStepRowImpl(w, fb, v, g []float32, flags []int32, k *CtrlCoef, s *CtrlSums) {
	ctrlStepRowGo(w, fb, v, g, flags, k, s)
}

func ctrlDecayRowImpl(w, fb []float32, flags, absent []int32, k *DecayCoef) {
	ctrlDecayRowGo(w, fb, flags, absent, k)
}

func anchorRowVecImpl(w, ws []float32, lam, aMu, aLam float32) int { return 0 }

func transposeRows8Impl(dst []float32, ld int, src []float32, n int) {
	transposeRows8Go(dst, ld, src, n, 0)
}

func sgdRowFBDenseImpl(w, fb, v, g []float32, flags []int32, k *SGDFBCoef) {
	sgdRowFBDenseGo(w, fb, v, g, flags, k)
}

func sgdRowFBWordsImpl(w, fb, v []float32, colWord []int32, g []float32, k *SGDFBCoef, wT []float32, ld int) {
	sgdRowFBWordsGo(w, fb, v, colWord, g, k, wT, ld)
}
