package core

import (
	"math"

	"repro/internal/kernels"
)

// KWTAK returns the number of winners of a k-WTA layer of n units at active
// fraction frac: max(1, round(frac*n)), rounding half to even as Python's
// round does (the reference's `max(1, int(round(f*n)))`, cortex.py:207).
// For f = 0.10 that is 51 of 512, 26 of 256 and 13 of 128.
func KWTAK(frac float64, n int) int {
	k := int(math.RoundToEven(frac * float64(n)))
	if k < 1 {
		k = 1
	}
	return k
}

// KWTAScratch applies k-winners-take-all to one row in place, using
// scratch (len(scratch) >= len(row)), and returns the threshold used: every
// entry below the row's k-th largest value becomes 0, every entry at or
// above it is kept. Ties at the threshold are all kept, so more than k
// entries can survive; on a non-negative row with fewer than k positive
// entries the threshold is 0 and every positive entry survives. This is
// the reference's `a * (a >= topk(a, k).values[:, -1:])`. If k >= len(row)
// the row is left unchanged. It panics if k < 1 or scratch is too short.
func KWTAScratch(row []float32, k int, scratch []float32) float32 {
	thr := kwtaThreshold(row, k, scratch)
	if k >= len(row) {
		return thr
	}
	for i, v := range row {
		if v < thr {
			row[i] = 0
		}
	}
	return thr
}

// KthLargest returns the k-th largest value of xs (1 <= k <= len(xs)),
// using scratch (len >= len(xs)) as working space; xs is not modified. The
// result is a value of xs and does not depend on the selection algorithm.
//
// It is the hot part of every forward pass. On the non-negative rows of a
// rectified layer it first gathers the strictly positive entries: when
// fewer than k are positive the answer is 0 without any selection, and
// otherwise only the positive entries are partitioned.
//
// With scratch of 3*len(xs) elements the positive entries are selected by
// vector partitioning (selectSplit), without a branch per entry; with less,
// by quickselect.
func KthLargest(xs []float32, k int, scratch []float32) float32 {
	if k < 1 || k > len(xs) {
		panic("core: KthLargest k out of range")
	}
	n, bad := kernels.CompressPositive(scratch[:len(xs)], xs)
	buf := scratch[:n]
	if bad {
		buf = append(scratch[:0], xs...)
	} else if len(buf) < k {
		return 0
	} else if m := len(xs); len(scratch) >= 3*m {
		return selectSplit(buf, scratch[m:2*m], scratch[2*m:3*m], k)
	}
	return selectKth(buf, k)
}

// selectSplit returns the k-th largest element of a (1-based), a set of
// positive, non-NaN values, using b and c (each at least len(a) long) as
// scratch; all three are overwritten. Each round splits the current set
// around a median-of-three pivot into the entries above and below it with
// the vector kernel and keeps the side that holds rank k (or returns the
// pivot when rank k falls on its ties); small sets finish in selectKth.
func selectSplit(a, b, c []float32, k int) float32 {
	t := k - 1 // index in descending order
	// bufA is the buffer a lives in; b and c are free.
	bufA := a
	for len(a) > 32 {
		n := len(a)
		x, y, z := a[0], a[n/2], a[n-1]
		p := max(min(x, y), min(max(x, y), z)) // median of three
		nh, nl := kernels.Split(b, c, a, p)
		switch ne := n - nh - nl; {
		case t < nh:
			a, bufA, b = b[:nh], b, bufA
		case t < nh+ne:
			return p
		default:
			t -= nh + ne
			a, bufA, c = c[:nl], c, bufA
		}
	}
	return selectKth(a, t+1)
}

// selectKth returns the k-th largest element of a (1-based), reordering a.
// Hoare-style quickselect with a median-of-three pivot; deterministic.
// k-WTA selects on float32 rates, the connectivity draw on float64 keys.
func selectKth[T float32 | float64](a []T, k int) T {
	lo, hi := 0, len(a)-1
	t := k - 1 // index in descending order
	for lo < hi {
		mid := lo + (hi-lo)/2
		// median of three into a[mid]
		if a[lo] < a[mid] {
			a[lo], a[mid] = a[mid], a[lo]
		}
		if a[mid] < a[hi] {
			a[mid], a[hi] = a[hi], a[mid]
			if a[lo] < a[mid] {
				a[lo], a[mid] = a[mid], a[lo]
			}
		}
		p := a[mid]
		i, j := lo, hi
		for i <= j {
			for a[i] > p {
				i++
			}
			for a[j] < p {
				j--
			}
			if i <= j {
				a[i], a[j] = a[j], a[i]
				i++
				j--
			}
		}
		// a[lo..j] >= p, a[i..hi] <= p, a[j+1..i-1] == p
		switch {
		case t <= j:
			hi = j
		case t >= i:
			lo = i
		default:
			return p
		}
	}
	return a[t]
}

// kwtaThreshold is KWTAScratch's threshold without applying it.
func kwtaThreshold(row []float32, k int, scratch []float32) float32 {
	if k < 1 {
		panic("core: KWTA with k < 1")
	}
	if k >= len(row) {
		if len(row) == 0 {
			return 0
		}
		m := row[0]
		for _, v := range row {
			m = min(m, v)
		}
		return m
	}
	return KthLargest(row, k, scratch)
}
