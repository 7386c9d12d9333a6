//go:build !amd64

package dataset

const useKernel = false

func kern4x64(c *float32, ldc int, a *float32, lda int, bt *float32, ldb int, k int) {
	panic("dataset: no gemm kernel on this architecture")
}
