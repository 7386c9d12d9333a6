package kernels

// Lanes is how many samples DriveRows carries per row: one 512-bit vector
// of float32.
const Lanes = 16

// DriveRows adds, for every row i of a sparse matrix in row order (row i's
// stored synapses rowPtr[i]:rowPtr[i+1], weights w, ascending columns col)
// and every sample lane b < 16, sum_s w[s] * x[col[s]*16+b] to
// acc[i*16+b], per element in ascending s, multiply and add separate. x
// holds the batch by column, 16 lanes per column. It is the forward
// product W x of a batch without a column-order copy of W: a term whose x
// is zero adds an exact zero, which leaves every sum that is not -0 as it
// was, so the drives equal those of a product over the non-zero entries
// only (AddTiles) when the sums start from a value that is not -0 and the
// weights are finite. Each row's columns ascend, as a row's stored
// synapses do. It panics if the shapes do not fit or a column is past x.
func DriveRows(acc, w []float32, col []uint16, rowPtr []int32, x []float32) {
	n := len(rowPtr) - 1
	if n < 0 || len(acc) < n*Lanes {
		panic("kernels: DriveRows shape")
	}
	checkRows("DriveRows", w, col, rowPtr, len(x)/Lanes)
	if n > 0 {
		driveRowsImpl(acc, w, col, rowPtr, x)
	}
}

// checkRows panics, naming fn, unless rowPtr delimits rows of w and col in
// order and every column is below nIn. The columns of a row ascend, so its
// last bounds them all.
func checkRows(fn string, w []float32, col []uint16, rowPtr []int32, nIn int) {
	n := len(rowPtr) - 1
	if n < 0 || len(col) < len(w) {
		panic("kernels: " + fn + " shape")
	}
	if n == 0 {
		return
	}
	if rowPtr[0] < 0 || int(rowPtr[n]) > len(w) {
		panic("kernels: " + fn + " out of range")
	}
	for i := range n {
		lo, hi := rowPtr[i], rowPtr[i+1]
		if hi < lo {
			panic("kernels: " + fn + " rows out of order")
		}
		if hi > lo && int(col[hi-1]) >= nIn {
			panic("kernels: " + fn + " column out of range")
		}
	}
}

func driveRowsGo(acc, w []float32, col []uint16, rowPtr []int32, x []float32) {
	for i := range len(rowPtr) - 1 {
		a := acc[i*Lanes : (i+1)*Lanes]
		for s := rowPtr[i]; s < rowPtr[i+1]; s++ {
			ws := w[s]
			xs := x[int(col[s])*Lanes:][:Lanes]
			for b, v := range xs {
				// The conversion forbids fusing into an FMA.
				a[b] += float32(ws * v)
			}
		}
	}
}

// DotRows sets c[i] to the sum over row i's stored synapses (rowPtr[i]:
// rowPtr[i+1] of w and col, columns ascending) of w[s] * o[col[s]], in
// ascending s from +0, multiply and add separate. It panics if the shapes
// do not fit or a column is past o.
func DotRows(c, w []float32, col []uint16, rowPtr []int32, o []float32) {
	n := len(rowPtr) - 1
	if n < 0 || len(c) < n {
		panic("kernels: DotRows shape")
	}
	checkRows("DotRows", w, col, rowPtr, len(o))
	if n > 0 {
		dotRowsImpl(c, w, col, rowPtr, o)
	}
}

func dotRowsGo(c, w []float32, col []uint16, rowPtr []int32, o []float32) {
	for i := range len(rowPtr) - 1 {
		var sum float32
		for s := rowPtr[i]; s < rowPtr[i+1]; s++ {
			// The conversion forbids fusing into an FMA.
			sum += float32(w[s] * o[col[s]])
		}
		c[i] = sum
	}
}
