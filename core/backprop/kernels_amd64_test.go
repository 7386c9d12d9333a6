//go:build amd64

package backprop

// forcePortable switches to the portable kernels until the returned
// function is called. Only for non-parallel tests.
func forcePortable() (restore func()) {
	a, f, z := useAVX2, useFMA, useAVX512
	useAVX2, useFMA, useAVX512 = false, false, false
	return func() { useAVX2, useFMA, useAVX512 = a, f, z }
}
