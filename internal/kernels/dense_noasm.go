//go:build !amd64 || purego

package kernels

func adamStepImpl(p, g, m, v []float32, mask []uint32, k *AdamStepCoef) {
	adamStepGo(p, g, m, v, mask, k)
}

func accRows4Impl(c []float32, ldc int, v4 []float32, off []int32, b []float32, n int) {
	accRows4Run(c, ldc, v4, off, b, n)
}

func accRows4Run(c []float32, ldc int, v4 []float32, off []int32, b []float32, n int) {
	accRows4Go(c, ldc, v4, off, b, n, 0)
}

func nonZerosImpl(v []float32, o []int32, x []float32, stride int) ([]float32, []int32) {
	return nonZerosGo(v[:len(x)], o[:len(x)], x, stride, 0, 0)
}

func positivesImpl(idx []int32, x []float32) []int32 { return positivesGo(idx[:len(x)], x, 0, 0) }

func reluImpl(z []float32) { reluGo(z) }

func gateImpl(c, a []float32) { gateGo(c, a[:len(c)]) }

func diffBitsImpl(nz []uint64, x, o []float32) { diffBitsGo(nz, x, o) }
