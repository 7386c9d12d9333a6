//go:build !purego

package kernels

import (
	"golang.org/x/sys/cpu"

	"repro/internal/kernelpath"
)

// The CPU features the kernels use, capped by REPRO_KERNELS (package
// kernelpath) and fixed at start-up: useAVX2 selects the 256-bit kernels,
// useAVX512 the 512-bit forms, useFMA the fused kernels (core/backprop's
// dense product, which rounds as the portable fma32 does). Every path
// gives identical bits. These are the package's only feature flags.
var (
	useAVX2   = cpu.X86.HasAVX2 && kernelpath.Allow(kernelpath.AVX2)
	useAVX512 = useAVX2 && cpu.X86.HasAVX512F && kernelpath.Allow(kernelpath.AVX512)
	useFMA    = useAVX2 && cpu.X86.HasFMA
)
