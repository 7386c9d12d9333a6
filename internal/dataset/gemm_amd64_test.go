//go:build !purego

package dataset

import (
	"context"
	"slices"
	"testing"
)

// TestV1PortableAgrees computes V1 features with the AVX-512 kernels and
// with the portable loops: a host without AVX-512 must cache the same
// bytes. Not parallel: it switches useKernel, and parallel tests only
// start after the sequential ones.
func TestV1PortableAgrees(t *testing.T) {
	if !useKernel {
		t.Skip("no AVX-512 on this host; the portable path is the only one")
	}
	train := randomCIFAR(40, 8)
	cfg := V1CIFAR10()
	cfg.Filters = 128
	b := NewV1Bank(train, cfg)
	thr := b.Threshold(train, 20)
	fast, err := b.Features(context.Background(), train, thr, 1)
	if err != nil {
		t.Fatal(err)
	}
	useKernel = false
	defer func() { useKernel = true }()
	if thr2 := b.Threshold(train, 20); !slices.Equal(thr, thr2) {
		t.Error("thresholds differ between the kernel and the portable path")
	}
	slow, _ := b.Features(context.Background(), train, thr, 1)
	if !slices.Equal(fast, slow) {
		t.Error("features differ between the kernel and the portable path")
	}
}
