package kernels

// CompressPositive copies the entries of src that are > 0 into dst, in
// order (the vector kernel left-packs them without a branch per entry,
// whose outcome is a coin flip on a rectified layer), and returns their
// number; bad reports an entry < 0 or a NaN. len(dst) >= len(src).
func CompressPositive(dst, src []float32) (n int, bad bool) {
	return compressPositiveImpl(dst, src)
}

func compressPositiveGo(dst, src []float32) (n int, bad bool) {
	for _, v := range src {
		if v > 0 {
			dst[n] = v
			n++
		} else if v < 0 || v != v {
			bad = true
		}
	}
	return n, bad
}

// ThresholdList zeroes the entries of a below thr (k-WTA's last step) and
// writes the indices of the non-zero entries that remain, ascending, to
// idx (len(idx) >= len(a)); it returns their number.
func ThresholdList(a []float32, thr float32, idx []int32) int {
	return thresholdListImpl(a, thr, idx)
}

// thresholdListGo is ThresholdList with index base added to every index.
func thresholdListGo(a []float32, thr float32, idx []int32, base int) int {
	n := 0
	for i, v := range a {
		if v < thr {
			a[i] = 0
			continue
		}
		if v != 0 {
			idx[n] = int32(base + i)
			n++
		}
	}
	return n
}

// Split left-packs the entries of src above p into hi and those below p
// into lo, in order, and returns their numbers (entries equal to p go to
// neither); hi and lo need len(src) elements.
func Split(hi, lo, src []float32, p float32) (nhi, nlo int) {
	return splitImpl(hi, lo, src, p)
}

func splitGo(hi, lo, src []float32, p float32) (nhi, nlo int) {
	for _, v := range src {
		switch {
		case v > p:
			hi[nhi] = v
			nhi++
		case v < p:
			lo[nlo] = v
			nlo++
		}
	}
	return nhi, nlo
}

// GatherRows adds to acc[t], for r = 0, 1, ... in turn, u[r] *
// b[pos[off[r]+idx[t]]]: the rows of the index map pos at offsets off, read
// at the columns idx, weighted by u.
func GatherRows(acc, u []float32, off, pos []int32, b []float32, idx []int32) {
	gatherRowsImpl(acc, u, off, pos, b, idx)
}

func gatherRowsGo(acc, u []float32, off, pos []int32, b []float32, idx []int32) {
	for r, ur := range u {
		row := pos[off[r]:]
		for t, j := range idx[:len(acc)] {
			acc[t] += ur * b[row[j]]
		}
	}
}

// ReluGain writes a = relu(z) * g: the rectified drive under the
// suppression gain g = 1 - s (all ones without suppression, where the
// product is exact). relu follows Go's max(v, 0): NaN stays NaN and -0
// becomes +0. len(z), len(g) >= len(a).
func ReluGain(a, z, g []float32) {
	reluGainImpl(a, z, g)
}

func reluGainGo(a, z, g []float32) {
	for i := range a {
		a[i] = max(z[i], 0) * g[i]
	}
}

// SparseDiff writes the entries r = x[j] - o[j] that are not 0 to val and
// their indices j to idx, in ascending j, and returns their number; val and
// idx need len(x) elements (the vector kernel stores whole blocks).
func SparseDiff(x, o, val []float32, idx []int32) int {
	return sparseDiffImpl(x, o, val, idx)
}

// sparseDiffGo is SparseDiff with index base added to every index.
func sparseDiffGo(x, o, val []float32, idx []int32, base int) int {
	n := 0
	for j, v := range x {
		if r := v - o[j]; r != 0 {
			idx[n] = int32(base + j)
			val[n] = r
			n++
		}
	}
	return n
}
