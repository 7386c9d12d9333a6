package dataset

import "fmt"

// CIFAR record layout: a label byte (CIFAR-100: coarse then fine), then
// 1,024 R, 1,024 G and 1,024 B bytes, each plane row-major 32x32.
const (
	cifarPixels     = 3072
	cifar10Record   = 1 + cifarPixels
	cifar100Record  = 2 + cifarPixels
	cifar100Coarse  = 20
	cifar100Classes = 100
)

// DecodeCIFAR10 decodes concatenated CIFAR-10 binary batches. Each record is
// 3,073 bytes; the length must be a multiple of that and labels lie in
// [0, 10).
func DecodeCIFAR10(b []byte) (*Raw, error) {
	if len(b)%cifar10Record != 0 {
		return nil, fmt.Errorf("cifar-10: %w: %d bytes is not a whole number of %d-byte records", ErrMalformed, len(b), cifar10Record)
	}
	n := len(b) / cifar10Record
	r := newCIFARRaw(n, 10)
	for i := range n {
		rec := b[i*cifar10Record : (i+1)*cifar10Record]
		if rec[0] >= 10 {
			return nil, fmt.Errorf("cifar-10: %w: record %d has label %d, not in [0, 10)", ErrMalformed, i, rec[0])
		}
		r.Labels[i] = int32(rec[0])
		copy(r.Pixels[i*cifarPixels:], rec[1:])
	}
	return r, nil
}

// DecodeCIFAR100 decodes a CIFAR-100 binary file (train.bin or test.bin).
// Each record is 3,074 bytes: coarse label in [0, 20), fine label in
// [0, 100), pixels. The returned Raw carries the fine labels; coarse holds
// the coarse ones.
func DecodeCIFAR100(b []byte) (r *Raw, coarse []int32, err error) {
	if len(b)%cifar100Record != 0 {
		return nil, nil, fmt.Errorf("cifar-100: %w: %d bytes is not a whole number of %d-byte records", ErrMalformed, len(b), cifar100Record)
	}
	n := len(b) / cifar100Record
	r = newCIFARRaw(n, cifar100Classes)
	coarse = make([]int32, n)
	for i := range n {
		rec := b[i*cifar100Record : (i+1)*cifar100Record]
		if rec[0] >= cifar100Coarse {
			return nil, nil, fmt.Errorf("cifar-100: %w: record %d has coarse label %d, not in [0, %d)", ErrMalformed, i, rec[0], cifar100Coarse)
		}
		if rec[1] >= cifar100Classes {
			return nil, nil, fmt.Errorf("cifar-100: %w: record %d has fine label %d, not in [0, %d)", ErrMalformed, i, rec[1], cifar100Classes)
		}
		coarse[i] = int32(rec[0])
		r.Labels[i] = int32(rec[1])
		copy(r.Pixels[i*cifarPixels:], rec[2:])
	}
	return r, coarse, nil
}

func newCIFARRaw(n, classes int) *Raw {
	return &Raw{
		Pixels: make([]uint8, n*cifarPixels), Labels: make([]int32, n),
		N: n, R: cifarPixels, Height: 32, Width: 32, Channels: 3, Classes: classes,
	}
}
