package backprop

import (
	"math"
	"strconv"

	"repro/core"
)

// blobs returns a small learnable dataset: n samples of d features in
// `classes` Gaussian clusters whose means are fixed (stream 98), the noise
// drawn from seed, for fast end-to-end tests.
func blobs(n, d, classes int, seed int64) *core.Dataset {
	mr := core.NewRNG(0, 98)
	means := make([]float32, classes*d)
	for i := range means {
		means[i] = float32(mr.NormFloat64())
	}
	rng := core.NewRNG(seed, 99)
	ds := &core.Dataset{X: make([]float32, n*d), Y: make([]int32, n), N: n, D: d, Classes: classes, Height: 1, Width: d}
	for i := range n {
		c := i % classes
		ds.Y[i] = int32(c)
		for j := range d {
			ds.X[i*d+j] = means[c*d+j] + 0.7*float32(rng.NormFloat64())
		}
	}
	return ds
}

func pairTasks(classes int) []core.Task {
	var ts []core.Task
	for c := 0; c+1 < classes; c += 2 {
		ts = append(ts, core.Task{c, c + 1})
	}
	return ts
}

func sqrt(x float64) float64 { return math.Sqrt(x) }

func itoa(n int) string { return strconv.Itoa(n) }
