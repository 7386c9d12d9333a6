//go:build !amd64 || purego

package kernels

func driveRowsImpl(acc, w []float32, col []uint16, rowPtr []int32, x []float32) {
	driveRowsGo(acc, w, col, rowPtr, x)
}

func dotRowsImpl(c, w []float32, col []uint16, rowPtr []int32, o []float32) {
	dotRowsGo(c, w, col, rowPtr, o)
}
