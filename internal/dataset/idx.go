package dataset

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"

	"github.com/klauspost/compress/gzip"
)

// IDX is a decoded IDX file with uint8 payload (the only element type the
// MNIST release uses).
type IDX struct {
	Dims []int  // e.g. [60000 28 28] for images, [60000] for labels
	Data []byte // row-major payload, len = prod(Dims)
}

// maxIDXElems bounds the payload a header may announce, so a corrupt header
// cannot ask for a huge allocation (MNIST's largest file holds 47,040,000).
const maxIDXElems = 1 << 30

// DecodeIDX parses an IDX file: two zero bytes, a type byte (0x08 = uint8),
// the number of dimensions, that many big-endian uint32 sizes, then the
// payload. The payload must fill the rest of b exactly. Data aliases b.
func DecodeIDX(b []byte) (*IDX, error) {
	if len(b) < 4 {
		return nil, fmt.Errorf("idx: %w: %d bytes, shorter than the 4-byte magic", ErrMalformed, len(b))
	}
	if b[0] != 0 || b[1] != 0 {
		return nil, fmt.Errorf("idx: %w: magic %x does not start with two zero bytes", ErrMalformed, b[:4])
	}
	if b[2] != 0x08 {
		return nil, fmt.Errorf("idx: %w: element type 0x%02x, only 0x08 (uint8) is supported", ErrMalformed, b[2])
	}
	nd := int(b[3])
	if nd == 0 {
		return nil, fmt.Errorf("idx: %w: zero dimensions", ErrMalformed)
	}
	if len(b) < 4+4*nd {
		return nil, fmt.Errorf("idx: %w: header announces %d dimensions but the file has %d bytes", ErrMalformed, nd, len(b))
	}
	x := &IDX{Dims: make([]int, nd)}
	n := 1
	for i := range nd {
		d := int(binary.BigEndian.Uint32(b[4+4*i:]))
		x.Dims[i] = d
		if d != 0 && n > maxIDXElems/d {
			return nil, fmt.Errorf("idx: %w: dimensions %v exceed %d elements", ErrMalformed, x.Dims[:i+1], maxIDXElems)
		}
		n *= d
	}
	payload := b[4+4*nd:]
	if len(payload) != n {
		return nil, fmt.Errorf("idx: %w: dimensions %v need %d payload bytes, file has %d", ErrMalformed, x.Dims, n, len(payload))
	}
	x.Data = payload
	return x, nil
}

// maxGunzip bounds a decompressed file (MNIST's largest is 47 MB).
const maxGunzip = 1 << 28

// Gunzip decompresses a gzip file held in memory.
func Gunzip(b []byte) ([]byte, error) {
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w: %v", ErrMalformed, err)
	}
	out, err := io.ReadAll(io.LimitReader(zr, maxGunzip+1))
	if err != nil {
		return nil, fmt.Errorf("gunzip: %w: %v", ErrMalformed, err)
	}
	if len(out) > maxGunzip {
		return nil, fmt.Errorf("gunzip: %w: more than %d bytes", ErrMalformed, maxGunzip)
	}
	return out, nil
}

// DecodeMNIST decodes a pair of MNIST IDX files (already decompressed):
// images [N, 28, 28] and labels [N] with labels in [0, 10).
func DecodeMNIST(images, labels []byte) (*Raw, error) {
	im, err := DecodeIDX(images)
	if err != nil {
		return nil, fmt.Errorf("images: %w", err)
	}
	lb, err := DecodeIDX(labels)
	if err != nil {
		return nil, fmt.Errorf("labels: %w", err)
	}
	if len(im.Dims) != 3 || im.Dims[1] != 28 || im.Dims[2] != 28 {
		return nil, fmt.Errorf("images: %w: dimensions %v, want [N 28 28]", ErrMalformed, im.Dims)
	}
	if len(lb.Dims) != 1 || lb.Dims[0] != im.Dims[0] {
		return nil, fmt.Errorf("labels: %w: dimensions %v, want [%d]", ErrMalformed, lb.Dims, im.Dims[0])
	}
	r := &Raw{
		Pixels: im.Data, Labels: make([]int32, len(lb.Data)),
		N: im.Dims[0], R: 784, Height: 28, Width: 28, Channels: 1, Classes: 10,
	}
	for i, l := range lb.Data {
		if l >= 10 {
			return nil, fmt.Errorf("labels: %w: label %d at index %d is not in [0, 10)", ErrMalformed, l, i)
		}
		r.Labels[i] = int32(l)
	}
	return r, nil
}
