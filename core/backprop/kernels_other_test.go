//go:build !amd64

package backprop

func forcePortable() (restore func()) { return func() {} }
