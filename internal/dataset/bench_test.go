//go:build unix

package dataset

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user + system CPU time. The machine is shared,
// so wall-clock rates understate the code; CPU-time rates are reported too.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

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
	cpu0 := cpuTime()
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
	b.ReportMetric((cpuTime()-cpu0).Seconds()/float64(b.N), "cpu-s/op")
}

// peakMACs is this machine's single-core float32 peak: an Intel Xeon
// (Sapphire Rapids, family 6 model 207) at its nominal 2.3 GHz with two
// AVX-512 FMA ports, 2 x 16 multiply-adds per cycle. Turbo clocks run
// higher, so fractions can look better than they are. Our kernel issues a
// separate multiply and add (no FMA, for bit-identical portable results),
// which caps it at half this peak.
const peakMACs = 2.3e9 * 32

// BenchmarkV1Features measures the V1 front-end's convolution + pooling on
// real CIFAR-10 images (the first n training images, 256 filters), for a
// size ladder and 1 or 2 workers. Each image costs 196 x 256 x 108
// multiply-adds; 60,000 images are 3.25e11.
func BenchmarkV1Features(b *testing.B) {
	train, _ := loadCIFAR10(b)
	bank := NewV1Bank(train, V1CIFAR10())
	thr := bank.Threshold(train, 500)
	for _, n := range []int{1000, 10000, 50000} {
		for _, w := range []int{1, 2} {
			b.Run(fmt.Sprintf("n=%d/workers=%d", n, w), func(b *testing.B) {
				sub := *train
				sub.N = n
				cpu0 := cpuTime()
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
				cpuIPS := float64(n) * float64(b.N) / (cpuTime() - cpu0).Seconds()
				b.ReportMetric(cpuIPS, "images/cpu-s")
				b.ReportMetric(cpuIPS*196*256*108/peakMACs, "peak-fraction-cpu") // per core-second
			})
		}
	}
}
