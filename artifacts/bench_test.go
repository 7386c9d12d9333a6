package artifacts

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

// mnistLike returns n float32 values shaped like standardised MNIST: most
// pixels sit at a per-pixel background value, a fifth vary.
func mnistLike(n int) []byte {
	r := rand.New(rand.NewPCG(1, 1))
	b := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		v := float32(-0.42 + 0.001*float64(i%784))
		if r.IntN(5) == 0 {
			v = float32(r.IntN(256))/255*3 - 0.4
		}
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(v))
	}
	return b
}

// BenchmarkStore compares zstd blobs with raw files (same atomic write and
// fsync, no compression) on a 30 MB MNIST-like float tensor.
func BenchmarkStore(b *testing.B) {
	data := mnistLike(10000 * 784)
	b.Run("zstd/write", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			s, _ := Open(b.TempDir(), Options{})
			if _, err := s.Put(data); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("zstd/read", func(b *testing.B) {
		s, _ := Open(b.TempDir(), Options{})
		d, _ := s.Put(data)
		fi, _ := os.Stat(s.BlobPath(d))
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if _, err := s.Get(d); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(len(data))/float64(fi.Size()), "ratio")
	})
	b.Run("raw/write", func(b *testing.B) {
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			if err := WriteFile(filepath.Join(b.TempDir(), "x"), data, 0o644); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("raw/read", func(b *testing.B) {
		p := filepath.Join(b.TempDir(), "x")
		WriteFile(p, data, 0o644)
		b.SetBytes(int64(len(data)))
		for b.Loop() {
			got, err := os.ReadFile(p)
			if err != nil || Sum(got) == (Digest{}) {
				b.Fatal(err)
			}
		}
	})
}

// weightsLike returns n float32 values shaped like trained weights: small
// Gaussian-ish values, which compress little.
func weightsLike(n int) []byte {
	r := rand.New(rand.NewPCG(2, 2))
	b := make([]byte, 4*n)
	for i := 0; i < n; i++ {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(float32(r.NormFloat64()*0.05)))
	}
	return b
}

// BenchmarkCheckBlob is the cost verify-on-read adds to a run for each
// cached output it counts (CheckBlob on a Store that has not read the blob
// yet): a train cell's result record (4 KB of JSON-like text), a kept
// network's W^1 (784x512 float32, 1.6 MB), and a prepared MNIST-like data
// tensor (30 MB). Compare with stat, what Lookup alone costs per output.
func BenchmarkCheckBlob(b *testing.B) {
	for _, c := range []struct {
		name string
		data []byte
	}{
		{"result-4KB", []byte(fmt.Sprintf("%0*d", 4096, 7))},
		{"network_w1-1.6MB", weightsLike(784 * 512)},
		{"data-30MB", mnistLike(10000 * 784)},
	} {
		dir := b.TempDir()
		s, _ := Open(dir, Options{})
		d, err := s.Put(c.data)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(c.name+"/check", func(b *testing.B) {
			b.SetBytes(int64(len(c.data)))
			for b.Loop() {
				fresh, _ := Open(dir, Options{})
				if err := fresh.CheckBlob(d); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"/stat", func(b *testing.B) {
			for b.Loop() {
				if _, err := s.Stat(d); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
