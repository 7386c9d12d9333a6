//go:build !purego

package kernels

//go:noescape
func driveRows4AVX512(acc *float32, w *float32, col *uint16, ptr *int32, x *float32)

//go:noescape
func driveRows4AVX2(acc *float32, w *float32, col *uint16, ptr *int32, x *float32)

//go:noescape
func dotRows4AVX(c *float32, w *float32, col *uint16, ptr *int32, o *float32)

func dotRowsImpl(c, w []float32, col []uint16, rowPtr []int32, o []float32) {
	if !useAVX2 {
		dotRowsGo(c, w, col, rowPtr, o)
		return
	}
	n := len(rowPtr) - 1
	i := 0
	for ; i+4 <= n; i += 4 {
		dotRows4AVX(&c[i], &w[0], &col[0], &rowPtr[i], &o[0])
	}
	if i < n {
		dotRowsGo(c[i:], w, col, rowPtr[i:], o)
	}
}

func driveRowsImpl(acc, w []float32, col []uint16, rowPtr []int32, x []float32) {
	switch {
	case useAVX512:
		driveRowsVec(driveRows4AVX512, acc, w, col, rowPtr, x)
	case useAVX2:
		driveRowsVec(driveRows4AVX2, acc, w, col, rowPtr, x)
	default:
		driveRowsGo(acc, w, col, rowPtr, x)
	}
}

// driveRowsVec runs DriveRows with kernel on the rows four at a time and
// the loop on the last 1-3.
func driveRowsVec(kernel func(acc *float32, w *float32, col *uint16, ptr *int32, x *float32), acc, w []float32, col []uint16, rowPtr []int32, x []float32) {
	n := len(rowPtr) - 1
	i := 0
	for ; i+4 <= n; i += 4 {
		kernel(&acc[i*Lanes], &w[0], &col[0], &rowPtr[i], &x[0])
	}
	if i < n {
		driveRowsGo(acc[i*Lanes:], w, col, rowPtr[i:], x)
	}
}
