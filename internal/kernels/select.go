package kernels

import "math"

// NonZeros lists the non-zero entries of x as coefficients (into v) and
// row offsets index*stride (into o), in index order, without branching on
// the data (the sparsity pattern of ReLU layers is unpredictable).
// v and o must hold len(x) entries.
func NonZeros(v []float32, o []int32, x []float32, stride int) ([]float32, []int32) {
	return nonZerosImpl(v, o, x, stride)
}

// nonZerosGo is NonZeros on x = the entries from index base on, appending
// after the first c entries of v and o (which hold at least c+len(x)).
func nonZerosGo(v []float32, o []int32, x []float32, stride, base, c int) ([]float32, []int32) {
	v, o = v[:c+len(x)], o[:c+len(x)]
	for j, a := range x {
		v[c] = a
		o[c] = int32((base + j) * stride)
		if a != 0 {
			c++
		}
	}
	return v[:c], o[:c]
}

// Gate zeroes c[j] wherever a[j] is not positive: the derivative of the
// rectifier, suppression and k-WTA at their output. The gate clears the
// bits (+0), whatever c[j] was.
func Gate(c, a []float32) { gateImpl(c, a) }

// gateGo is Gate's loop.
func gateGo(c, a []float32) {
	a = a[:len(c)]
	for j, x := range a {
		m := uint32(0)
		if x > 0 {
			m = ^uint32(0)
		}
		c[j] = math.Float32frombits(math.Float32bits(c[j]) & m)
	}
}

// Relu is the rectifier in place: +0 for every z <= 0 (-0 included),
// every other value kept as it is, a NaN with its bits. (Go's max(z, 0),
// which this replaced, is the same but for a NaN's sign bit, which it
// clears; a NaN activity only arises in a diverged run.)
func Relu(z []float32) { reluImpl(z) }

// reluGo is Relu's loop.
func reluGo(z []float32) {
	for i, x := range z {
		if x <= 0 {
			z[i] = 0
		}
	}
}

// Positives lists the indices j of the entries x[j] > 0 into idx, in
// order, without a branch per entry; idx must hold len(x) entries.
func Positives(idx []int32, x []float32) []int32 { return positivesImpl(idx, x) }

// positivesGo is Positives on x = the entries from index base on,
// appending after the first c entries of idx (which holds c+len(x)).
func positivesGo(idx []int32, x []float32, base, c int) []int32 {
	idx = idx[:c+len(x)]
	for j, a := range x {
		idx[c] = int32(base + j)
		if a > 0 {
			c++
		}
	}
	return idx[:c]
}

// DiffBits sets bit j of nz[j/64] when x[j] != o[j] (a NaN differs, -0
// and +0 do not), for j < len(x), and clears the rest of the last word.
// nz holds (len(x)+63)/64 words and o at least len(x) entries.
func DiffBits(nz []uint64, x, o []float32) {
	if len(nz) != (len(x)+63)/64 || len(o) < len(x) {
		panic("kernels: DiffBits shape")
	}
	diffBitsImpl(nz, x, o[:len(x)])
}

// diffBitsGo is DiffBits' loop: a word of 64 columns at a time, without a
// branch per entry (whether a pixel is off its background is
// unpredictable).
func diffBitsGo(nz []uint64, x, o []float32) {
	for k := range nz {
		lo := k << 6
		xs, os := x[lo:min(lo+64, len(x))], o[lo:min(lo+64, len(x))]
		var m uint64
		for j, a := range xs {
			m |= b2u(a != os[j]) << j
		}
		nz[k] = m
	}
}

// b2u is 1 for true, 0 for false (compiled to a flag move, not a branch).
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
