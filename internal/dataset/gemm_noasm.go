//go:build !amd64 || purego

package dataset

// useKernel is false off amd64 and in a purego build (no assembly compiled
// in): gemm and reluAdd run their Go loops alone, which give the same bits
// as the kernels (gemm.go). The two stubs below are never called; they
// exist so that gemm.go compiles on every build.
const useKernel = false

func kern4x64(c *float32, ldc int, a *float32, lda int, bt *float32, ldb int, k int) {
	panic("dataset: no gemm kernel in this build (off amd64 or purego)")
}

func reluAdd16(acc, z, t *float32, blocks int) {
	panic("dataset: no relu kernel in this build (off amd64 or purego)")
}
