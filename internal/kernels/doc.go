// Package kernels holds the learners' inner loops with their vector
// (SIMD) forms: the sparse and dense products, the optimisers' row steps,
// the list builders of the forward pass and the gram of the metrics. It is
// shared by core (the local learner), core/backprop and core/spike, and
// does no I/O.
//
// The layout follows gonum's: each kernel is an exported Go function whose
// doc comment states its reference loop; it checks its arguments and calls
// the kernel's Impl, which is defined twice:
//
//   - *_amd64.go with *_amd64.s (build tag !purego): the dispatch to the
//     assembly, by the CPU features in cpu_amd64.go (AVX2, AVX-512F, FMA,
//     capped by REPRO_KERNELS through package kernelpath), with the Go loop
//     on the tail and on CPUs without the instructions;
//   - *_noasm.go (build tag !amd64 || purego): the Go loop alone.
//
// The Go loops are the *Go functions beside each stub. Every vector form
// performs the same float32 (or float64) operations in the same order as
// its loop, multiply and add separate unless a kernel says it fuses (then
// the loop rounds as the FMA does), so every path gives the same bits: the
// package's tests compare each kernel with its loop bit for bit, and the
// learners' goldens pass under `go test -tags purego` (no assembly compiled
// in) and under REPRO_KERNELS=portable or avx2.
//
// The kernels panic on arguments of the wrong shape, as documented per
// kernel, before any assembly reads memory.
package kernels
