package spike

import (
	"fmt"
	"testing"

	"repro/core"
)

// BenchmarkRun simulates 100 MNIST-sized samples (a fifth of the pixels
// lit) per op at each of the paper's budgets and reports the CPU seconds
// one network's conversion costs: 5,999 held-out samples at T_s = 4, 8,
// 16 and 32 (60 steps per sample).
func BenchmarkRun(b *testing.B) {
	rng := core.NewRNG(5, core.StreamRun)
	nw := randomNetworkSized(rng, []int{784, 512, 256, 10})
	const n = 100
	raw, mean, sd := randomImages(rng, n, 784)
	thr, err := Thresholds(nw, standardise(raw, mean, sd), n, 0.999)
	if err != nil {
		b.Fatal(err)
	}
	c, err := Convert(nw, mean, sd, thr)
	if err != nil {
		b.Fatal(err)
	}
	y := make([]int32, n)
	for _, steps := range []int{4, 8, 16, 32} {
		b.Run(fmt.Sprintf("T=%d", steps), func(b *testing.B) {
			src := core.NewRNG(0, core.StreamConvert)
			var k *Counts
			for b.Loop() {
				k = c.Run(raw, y, steps, src)
			}
			perStep := b.Elapsed().Seconds() / float64(b.N) / float64(n*steps)
			b.ReportMetric(perStep*1e9, "ns/sample-step")
			b.ReportMetric(perStep*5999*60, "s/network")
			b.ReportMetric(c.Events(k), "events/sample")
		})
	}
}

// BenchmarkThresholds calibrates on 2,000 samples, as the spike stage does.
func BenchmarkThresholds(b *testing.B) {
	rng := core.NewRNG(6, core.StreamRun)
	nw := randomNetworkSized(rng, []int{784, 512, 256, 10})
	raw, mean, sd := randomImages(rng, 2000, 784)
	x := standardise(raw, mean, sd)
	for b.Loop() {
		if _, err := Thresholds(nw, x, 2000, 0.999); err != nil {
			b.Fatal(err)
		}
	}
}
