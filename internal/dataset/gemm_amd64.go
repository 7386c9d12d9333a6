//go:build !purego

package dataset

import (
	"golang.org/x/sys/cpu"

	"repro/internal/kernelpath"
)

// useKernel selects the AVX-512 kernel, capped by REPRO_KERNELS (package
// kernelpath); x/sys/cpu also checks that the OS saves the ZMM state.
var useKernel = cpu.X86.HasAVX512F && kernelpath.Allow(kernelpath.AVX512)

// kern4x64 computes the 4 x 64 block c[r*ldc+j] = Σ_p a[r*lda+p] *
// bt[p*ldb+j] for r < 4, j < 64. Strides are in elements.
//
//go:noescape
func kern4x64(c *float32, ldc int, a *float32, lda int, bt *float32, ldb int, k int)

// reluAdd16 does reluAdd on blocks*16 elements.
//
//go:noescape
func reluAdd16(acc, z, t *float32, blocks int)
