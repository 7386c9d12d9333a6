//go:build amd64

package backprop

// forcePortable switches to the portable kernels until the returned
// function is called. Only for non-parallel tests.
func forcePortable() (restore func()) {
	old := useAVX2
	useAVX2 = false
	return func() { useAVX2 = old }
}
