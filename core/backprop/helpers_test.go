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

// backgroundSet returns n samples of h x w pixels shaped like standardised
// MNIST: each pixel holds its column's background value (negative, varying
// by column) except where a sample's stroke covers it. A stroke pixel is
// drawn with a probability that falls off from the image's centre (about a
// fifth of the pixels in all, none at the border) and holds a positive
// value; the class shifts the strokes so the classes can be told apart.
func backgroundSet(n, h, w, classes int, seed int64) *core.Dataset {
	d := h * w
	rng := core.NewRNG(seed, 97)
	bg := make([]float32, d)
	prob := make([]float64, d)
	for y := range h {
		for x := range w {
			j := y*w + x
			bg[j] = -0.2 - 0.3*float32(rng.Float64())
			dy, dx := (float64(y)-float64(h-1)/2)/float64(h), (float64(x)-float64(w-1)/2)/float64(w)
			if r2 := dx*dx + dy*dy; r2 < 0.16 {
				prob[j] = 0.55 * (1 - r2/0.16)
			}
		}
	}
	ds := &core.Dataset{X: make([]float32, n*d), Y: make([]int32, n), N: n, D: d, Classes: classes, Height: h, Width: w}
	for i := range n {
		c := i % classes
		ds.Y[i] = int32(c)
		row := ds.X[i*d : (i+1)*d]
		for j := range row {
			row[j] = bg[j]
			k := (j + 3*c) % d
			if rng.Float64() < prob[k] {
				row[j] = 0.5 + 2*float32(rng.Float64())
			}
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
