//go:build !amd64 || purego

package kernels

func gramUpperImpl(gram []float64, n int, x []float64, ld, nb int) {
	gramUpperGo(gram, n, x[:nb*ld], ld)
}
