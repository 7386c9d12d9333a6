//go:build !purego

package kernelpath

// built is the best path this build can run: every path (the CPU decides).
const built = AVX512
