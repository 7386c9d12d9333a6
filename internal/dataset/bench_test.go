package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// BenchmarkMNISTPipeline measures decode (gunzip + IDX) + standardise +
// held-out split of the real MNIST, from bytes already in memory.
func BenchmarkMNISTPipeline(b *testing.B) {
	dir := filepath.Join(dataRoot(b), "mnist")
	files := map[string][]byte{}
	var total int64
	for _, n := range []string{MNISTTrainImages, MNISTTrainLabels, MNISTTestImages, MNISTTestLabels} {
		buf, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			b.Fatal(err)
		}
		files[n] = buf
		total += int64(len(buf))
	}
	b.SetBytes(total)
	for b.Loop() {
		train, test, err := DecodeMNISTFiles(files)
		if err != nil {
			b.Fatal(err)
		}
		p := Prepare(train, test)
		held, _ := StratifiedHoldout(p.TrainY, HeldoutFrac, SplitSeed1)
		if len(held) != 5999 {
			b.Fatal(len(held))
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/op")
}

// peakMACs is this machine's single-core float32 peak: an Intel Xeon
// (Sapphire Rapids, family 6 model 207) at 2.3 GHz with two AVX-512 FMA
// ports, 2 x 16 multiply-adds per cycle.
const peakMACs = 2.3e9 * 32

// BenchmarkV1Features measures the V1 front-end's convolution + pooling on
// real CIFAR-10 images (the first n training images, 256 filters), for a
// size ladder and 1 or 2 workers. Each image costs 196 x 256 x 108
// multiply-adds; 60,000 images are 3.25e11.
func BenchmarkV1Features(b *testing.B) {
	train, _ := loadCIFAR10(b)
	bank := NewV1Bank(train, V1CIFAR10())
	thr := bank.Threshold(train, 500)
	for _, n := range []int{1000, 10000} {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("n=%d/workers=%d", n, w), func(b *testing.B) {
				sub := *train
				sub.N = n
				for b.Loop() {
					if _, err := bank.Features(context.Background(), &sub, thr, w); err != nil {
						b.Fatal(err)
					}
				}
				ips := float64(n) * float64(b.N) / b.Elapsed().Seconds()
				macs := ips * 196 * 256 * 108
				b.ReportMetric(ips, "images/s")
				b.ReportMetric(macs/1e9, "GMAC/s")
				b.ReportMetric(macs/peakMACs, "peak-fraction")
				b.ReportMetric(60000/ips, "s/60k-images")
			})
		}
	}
}
