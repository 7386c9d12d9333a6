//go:build !amd64

package dataset

const useKernel = false

func kern4x64(c *float32, ldc int, a *float32, lda int, bt *float32, ldb int, k int) {
	panic("dataset: no gemm kernel on this architecture")
}

func reluAdd16(acc, z, t *float32, blocks int) {
	panic("dataset: no relu kernel on this architecture")
}
