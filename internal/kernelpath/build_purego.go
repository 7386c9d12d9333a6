//go:build purego

package kernelpath

// built is the best path this build can run: a purego build compiles no
// assembly (package kernels), so only the portable code.
const built = Portable
