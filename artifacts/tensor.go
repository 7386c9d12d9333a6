package artifacts

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

// DType is the element type of a Tensor.
type DType uint8

// The element types a tensor can hold.
const (
	Uint8 DType = 1 + iota
	Int32
	Int64
	Float32
	Float64
)

var dtypeNames = [...]string{Uint8: "uint8", Int32: "int32", Int64: "int64", Float32: "float32", Float64: "float64"}
var dtypeSizes = [...]int{Uint8: 1, Int32: 4, Int64: 8, Float32: 4, Float64: 8}

func (d DType) String() string {
	if d == 0 || int(d) >= len(dtypeNames) {
		return fmt.Sprintf("dtype(%d)", uint8(d))
	}
	return dtypeNames[d]
}

// Size is the width of one element in bytes; 0 for an unknown dtype.
func (d DType) Size() int {
	if d == 0 || int(d) >= len(dtypeSizes) {
		return 0
	}
	return dtypeSizes[d]
}

// tensorMagic opens every encoded tensor; the final byte is the format version.
var tensorMagic = [4]byte{'R', 'T', 'N', 1}

// maxDims bounds a header so that a corrupt one cannot ask for huge allocations.
const maxDims = 8

// ErrBadTensor is wrapped by every tensor decoding error.
var ErrBadTensor = errors.New("malformed tensor")

// Tensor is a dense little-endian array with a shape. Encoded, it is a
// 4-byte magic ("RTN" + version), one dtype byte, one rank byte, rank uint64
// dims, then the payload; nothing else, so equal tensors encode to equal
// bytes and so to equal digests.
type Tensor struct {
	DType DType
	Shape []int
	Data  []byte // little-endian payload, len = prod(Shape) * DType.Size()
}

// Len is the number of elements.
func (t *Tensor) Len() int {
	n := 1
	for _, d := range t.Shape {
		n *= d
	}
	return n
}

// Encode returns the tensor's byte encoding.
func (t *Tensor) Encode() []byte {
	out := make([]byte, 0, 6+8*len(t.Shape)+len(t.Data))
	out = append(out, tensorMagic[:]...)
	out = append(out, byte(t.DType), byte(len(t.Shape)))
	for _, d := range t.Shape {
		out = binary.LittleEndian.AppendUint64(out, uint64(d))
	}
	return append(out, t.Data...)
}

// DecodeTensor parses an encoded tensor. The returned Data aliases b.
func DecodeTensor(b []byte) (*Tensor, error) {
	if len(b) < 6 || [4]byte(b[:4]) != tensorMagic {
		return nil, fmt.Errorf("%w: bad magic", ErrBadTensor)
	}
	t := &Tensor{DType: DType(b[4])}
	if t.DType.Size() == 0 {
		return nil, fmt.Errorf("%w: unknown dtype %d", ErrBadTensor, b[4])
	}
	rank := int(b[5])
	if rank > maxDims {
		return nil, fmt.Errorf("%w: rank %d > %d", ErrBadTensor, rank, maxDims)
	}
	b = b[6:]
	if len(b) < 8*rank {
		return nil, fmt.Errorf("%w: truncated shape", ErrBadTensor)
	}
	n := uint64(1)
	for i := 0; i < rank; i++ {
		d := binary.LittleEndian.Uint64(b[8*i:])
		if d > math.MaxInt32 {
			return nil, fmt.Errorf("%w: dim %d = %d too large", ErrBadTensor, i, d)
		}
		t.Shape = append(t.Shape, int(d))
		n *= d
		if n > math.MaxInt64/16 {
			return nil, fmt.Errorf("%w: too many elements", ErrBadTensor)
		}
	}
	b = b[8*rank:]
	if want := n * uint64(t.DType.Size()); uint64(len(b)) != want {
		return nil, fmt.Errorf("%w: payload is %d bytes, shape %v of %s needs %d", ErrBadTensor, len(b), t.Shape, t.DType, want)
	}
	t.Data = b
	return t, nil
}

// EncodeFloat32 encodes v with the given shape; it panics if the shape does
// not match len(v).
func EncodeFloat32(v []float32, shape ...int) []byte {
	t := Tensor{DType: Float32, Shape: shape, Data: make([]byte, 4*len(v))}
	checkLen(&t, len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(t.Data[4*i:], math.Float32bits(x))
	}
	return t.Encode()
}

// EncodeInt32 encodes v with the given shape; it panics on a shape mismatch.
func EncodeInt32(v []int32, shape ...int) []byte {
	t := Tensor{DType: Int32, Shape: shape, Data: make([]byte, 4*len(v))}
	checkLen(&t, len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(t.Data[4*i:], uint32(x))
	}
	return t.Encode()
}

// EncodeUint8 encodes v with the given shape; it panics on a shape mismatch.
func EncodeUint8(v []uint8, shape ...int) []byte {
	t := Tensor{DType: Uint8, Shape: shape, Data: append([]byte(nil), v...)}
	checkLen(&t, len(v))
	return t.Encode()
}

func checkLen(t *Tensor, n int) {
	if t.Len() != n {
		panic(fmt.Sprintf("artifacts: shape %v does not hold %d elements", t.Shape, n))
	}
}

// Float32s decodes b as a float32 tensor.
func Float32s(b []byte) ([]float32, []int, error) {
	t, err := decodeAs(b, Float32)
	if err != nil {
		return nil, nil, err
	}
	v := make([]float32, t.Len())
	for i := range v {
		v[i] = math.Float32frombits(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v, t.Shape, nil
}

// Int32s decodes b as an int32 tensor.
func Int32s(b []byte) ([]int32, []int, error) {
	t, err := decodeAs(b, Int32)
	if err != nil {
		return nil, nil, err
	}
	v := make([]int32, t.Len())
	for i := range v {
		v[i] = int32(binary.LittleEndian.Uint32(t.Data[4*i:]))
	}
	return v, t.Shape, nil
}

// Uint8s decodes b as a uint8 tensor. The result aliases b.
func Uint8s(b []byte) ([]uint8, []int, error) {
	t, err := decodeAs(b, Uint8)
	if err != nil {
		return nil, nil, err
	}
	return t.Data, t.Shape, nil
}

func decodeAs(b []byte, want DType) (*Tensor, error) {
	t, err := DecodeTensor(b)
	if err != nil {
		return nil, err
	}
	if t.DType != want {
		return nil, fmt.Errorf("%w: dtype %s, want %s", ErrBadTensor, t.DType, want)
	}
	return t, nil
}
