//go:build !amd64

package backprop

func adamStep(p, g, m, v []float32, mask []uint32, k *adamCoef) { adamStepGo(p, g, m, v, mask, k) }

func accRows4Impl(c []float32, ldc int, v4 []float32, off []int32, b []float32, n int) {
	accRows4Go(c, ldc, v4, off, b, n, 0)
}
