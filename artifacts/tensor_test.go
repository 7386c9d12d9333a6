package artifacts

import (
	"bytes"
	"math"
	"testing"
)

func TestTensorRoundTrip(t *testing.T) {
	t.Parallel()
	f := []float32{0, -1.5, float32(math.Inf(1)), 3e-38}
	v, shape, err := Float32s(EncodeFloat32(f, 2, 2))
	if err != nil || len(v) != 4 || shape[0] != 2 || shape[1] != 2 {
		t.Fatalf("Float32s = %v %v %v", v, shape, err)
	}
	for i := range f {
		if v[i] != f[i] {
			t.Fatalf("element %d = %v, want %v", i, v[i], f[i])
		}
	}
	iv, _, err := Int32s(EncodeInt32([]int32{-7, 1 << 30}, 2))
	if err != nil || iv[0] != -7 || iv[1] != 1<<30 {
		t.Fatalf("Int32s = %v %v", iv, err)
	}
	if _, _, err := Int32s(EncodeFloat32(f, 4)); err == nil {
		t.Fatal("decoding float32 as int32 succeeded")
	}
	// Equal tensors encode to equal bytes.
	if !bytes.Equal(EncodeUint8([]uint8{1, 2, 3}, 3), EncodeUint8([]uint8{1, 2, 3}, 3)) {
		t.Fatal("encoding is not deterministic")
	}
}

func FuzzDecodeTensor(f *testing.F) {
	f.Add(EncodeFloat32([]float32{1, 2, 3}, 3))
	f.Add(EncodeUint8([]uint8{1, 2, 3, 4}, 2, 2))
	f.Add([]byte("RTN\x01\x02\x01"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tn, err := DecodeTensor(b)
		if err != nil {
			return
		}
		if got := tn.Encode(); !bytes.Equal(got, b) {
			t.Fatalf("re-encoding differs: %x vs %x", got, b)
		}
	})
}
