package dataset

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"slices"
	"sync"
	"testing"
)

// idxBytes encodes a uint8 IDX file with the given dims and payload.
func idxBytes(dims []int, payload []byte) []byte {
	b := []byte{0, 0, 0x08, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return append(b, payload...)
}

func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func TestDecodeIDX(t *testing.T) {
	t.Parallel()
	good := idxBytes([]int{2, 3}, []byte{1, 2, 3, 4, 5, 6})
	for _, c := range []struct {
		name string
		in   []byte
		ok   bool
	}{
		{"good", good, true},
		{"empty", nil, false},
		{"short magic", []byte{0, 0, 8}, false},
		{"bad magic", append([]byte{1}, good[1:]...), false},
		{"float type", append([]byte{0, 0, 0x0d}, good[3:]...), false},
		{"zero dims", []byte{0, 0, 8, 0}, false},
		{"truncated header", good[:7], false},
		{"truncated payload", good[:len(good)-1], false},
		{"trailing bytes", append(append([]byte(nil), good...), 0), false},
		{"huge dims", idxBytes([]int{1 << 20, 1 << 20}, nil), false},
	} {
		x, err := DecodeIDX(c.in)
		if c.ok != (err == nil) {
			t.Errorf("%s: err = %v", c.name, err)
			continue
		}
		if err != nil && !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: error %v does not wrap ErrMalformed", c.name, err)
		}
		if c.ok && (!slices.Equal(x.Dims, []int{2, 3}) || !bytes.Equal(x.Data, good[12:])) {
			t.Errorf("%s: decoded %v %v", c.name, x.Dims, x.Data)
		}
	}
}

func TestDecodeMNISTErrors(t *testing.T) {
	t.Parallel()
	im := idxBytes([]int{2, 28, 28}, make([]byte, 2*784))
	for _, c := range []struct {
		name       string
		im, labels []byte
		ok         bool
	}{
		{"good", im, idxBytes([]int{2}, []byte{3, 9}), true},
		{"label 10", im, idxBytes([]int{2}, []byte{3, 10}), false},
		{"count mismatch", im, idxBytes([]int{3}, []byte{3, 1, 2}), false},
		{"wrong image size", idxBytes([]int{2, 27, 29}, make([]byte, 2*27*29)), idxBytes([]int{2}, []byte{0, 0}), false},
	} {
		_, err := DecodeMNIST(c.im, c.labels)
		if c.ok != (err == nil) {
			t.Errorf("%s: err = %v", c.name, err)
		}
	}
	files := map[string][]byte{MNISTTrainImages: gz(im), MNISTTrainLabels: gz(idxBytes([]int{2}, []byte{1, 2})), MNISTTestImages: gz(im)}
	if _, _, err := DecodeMNISTFiles(files); err == nil {
		t.Error("DecodeMNISTFiles with a missing file succeeded")
	}
	files[MNISTTestLabels] = []byte("not gzip")
	if _, _, err := DecodeMNISTFiles(files); !errors.Is(err, ErrMalformed) {
		t.Errorf("DecodeMNISTFiles with a bad gzip: %v", err)
	}
	files[MNISTTestLabels] = gz(idxBytes([]int{2}, []byte{4, 5}))
	train, test, err := DecodeMNISTFiles(files)
	if err != nil || train.N != 2 || test.Labels[1] != 5 {
		t.Errorf("DecodeMNISTFiles: %v", err)
	}
}

// cifar100Record builds one CIFAR-100 record whose pixels encode i.
func cifar100Rec(coarse, fine byte, i int) []byte {
	rec := make([]byte, cifar100Record)
	rec[0], rec[1] = coarse, fine
	for j := range cifarPixels {
		rec[2+j] = byte(i*7 + j)
	}
	return rec
}

func TestDecodeCIFAR100(t *testing.T) {
	t.Parallel()
	// Small files in the release's format: 3 training, 2 test records.
	var trainB, testB []byte
	for i := range 3 {
		trainB = append(trainB, cifar100Rec(byte(i), byte(33*i), i)...)
	}
	testB = append(cifar100Rec(19, 99, 10), cifar100Rec(0, 0, 11)...)
	train, test, err := DecodeCIFAR100Files(map[string][]byte{CIFAR100TrainFile: trainB, CIFAR100TestFile: testB})
	if err != nil {
		t.Fatal(err)
	}
	if train.N != 3 || test.N != 2 || train.Classes != 100 || train.Channels != 3 {
		t.Fatalf("decoded %d/%d records, %d classes", train.N, test.N, train.Classes)
	}
	if !slices.Equal(train.Labels, []int32{0, 33, 66}) || !slices.Equal(test.Labels, []int32{99, 0}) {
		t.Errorf("fine labels %v %v", train.Labels, test.Labels)
	}
	if !bytes.Equal(train.Row(2), cifar100Rec(2, 66, 2)[2:]) {
		t.Error("pixels of record 2 differ")
	}
	_, coarse, _ := DecodeCIFAR100(trainB)
	if !slices.Equal(coarse, []int32{0, 1, 2}) {
		t.Errorf("coarse labels %v", coarse)
	}
	for _, c := range []struct {
		name string
		in   []byte
	}{
		{"truncated", trainB[:len(trainB)-1]},
		{"coarse 20", cifar100Rec(20, 0, 0)},
		{"fine 100", cifar100Rec(0, 100, 0)},
	} {
		if _, _, err := DecodeCIFAR100(c.in); !errors.Is(err, ErrMalformed) {
			t.Errorf("%s: err = %v", c.name, err)
		}
	}
}

func TestDecodeCIFAR10Errors(t *testing.T) {
	t.Parallel()
	rec := make([]byte, cifar10Record)
	rec[0] = 10
	if _, err := DecodeCIFAR10(rec); !errors.Is(err, ErrMalformed) {
		t.Errorf("label 10: %v", err)
	}
	if _, err := DecodeCIFAR10(rec[:100]); !errors.Is(err, ErrMalformed) {
		t.Errorf("truncated: %v", err)
	}
	if _, _, err := DecodeCIFAR10Files(map[string][]byte{}); err == nil {
		t.Error("no files: no error")
	}
}

var (
	cifarOnce             sync.Once
	cifarTrain, cifarTest *Raw
	cifarErr              error
)

func loadCIFAR10(t testing.TB) (train, test *Raw) {
	t.Helper()
	dir := dataRoot(t)
	cifarOnce.Do(func() { cifarTrain, cifarTest, cifarErr = fetchDecode(dir, "cifar10", DecodeCIFAR10Files) })
	if cifarErr != nil {
		t.Fatal(cifarErr)
	}
	return cifarTrain, cifarTest
}

func TestLoadCIFAR10(t *testing.T) {
	train, test := loadCIFAR10(t)
	for _, c := range []struct {
		name string
		r    *Raw
		n    int
	}{{"train", train, 5000}, {"test", test, 1000}} {
		per := make([]int, 10)
		for _, l := range c.r.Labels {
			per[l]++
		}
		for k, n := range per {
			if n != c.n {
				t.Errorf("%s class %d: %d samples, want %d", c.name, k, n, c.n)
			}
		}
	}
	held, rest := StratifiedHoldout(train.Labels, HeldoutFrac, SplitSeed1)
	if len(held) != 5000 || len(rest) != 45000 {
		t.Errorf("CIFAR-10 held-out %d, rest %d, want 5000 and 45000", len(held), len(rest))
	}
	p := Prepare(train, test)
	if p.D != 1024 || p.Height != 32 || len(p.TrainX) != 50000*1024 {
		t.Errorf("prepared D=%d H=%d len %d", p.D, p.Height, len(p.TrainX))
	}
}

func TestIntensitiesLuminance(t *testing.T) {
	t.Parallel()
	r := newCIFARRaw(1, 10)
	r.Pixels[0], r.Pixels[1024], r.Pixels[2048] = 255, 255, 255 // white pixel 0
	r.Pixels[1] = 255                                           // pure red pixel 1
	r.Pixels[2048+2] = 255                                      // pure blue pixel 2
	x := Intensities(r)
	// Tolerance: float32 rounding of three products.
	for _, c := range []struct {
		j    int
		want float32
	}{{0, 1}, {1, 0.299}, {2, 0.114}, {3, 0}} {
		if d := x[c.j] - c.want; d > 1e-6 || d < -1e-6 {
			t.Errorf("luminance of pixel %d = %g, want %g", c.j, x[c.j], c.want)
		}
	}
}

func FuzzDecodeIDX(f *testing.F) {
	f.Add(idxBytes([]int{2, 3}, []byte{1, 2, 3, 4, 5, 6}))
	f.Add(idxBytes([]int{1, 28, 28}, make([]byte, 784)))
	f.Add([]byte{0, 0, 8, 1, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		x, err := DecodeIDX(b)
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		// Round trip: re-encoding gives the input back.
		if re := idxBytes(x.Dims, x.Data); !bytes.Equal(re, b) {
			t.Fatalf("round trip changed %x into %x", b, re)
		}
	})
}

func FuzzDecodeCIFAR(f *testing.F) {
	f.Add(make([]byte, cifar10Record), false)
	f.Add(cifar100Rec(3, 42, 1), true)
	f.Add([]byte{1, 2, 3}, true)
	f.Fuzz(func(t *testing.T, b []byte, hundred bool) {
		var r *Raw
		var coarse []int32
		var err error
		if hundred {
			r, coarse, err = DecodeCIFAR100(b)
		} else {
			r, err = DecodeCIFAR10(b)
		}
		if err != nil {
			if !errors.Is(err, ErrMalformed) {
				t.Fatalf("error %v does not wrap ErrMalformed", err)
			}
			return
		}
		// Round trip: re-encode the records.
		var re []byte
		for i := range r.N {
			if hundred {
				re = append(re, byte(coarse[i]))
			}
			re = append(re, byte(r.Labels[i]))
			re = append(re, r.Row(i)...)
		}
		if !bytes.Equal(re, b) {
			t.Fatal("round trip changed the records")
		}
	})
}
