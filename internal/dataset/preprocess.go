package dataset

import (
	"fmt"
	"math"
)

// minStd is the reference's floor: a dimension whose population s.d. is
// below it (constant border pixels of MNIST) gets s.d. 1, so it maps to 0.
const minStd = 1e-6

// Luminance coefficients (ITU-R BT.601), as in the reference.
const (
	lumR = 0.299
	lumG = 0.587
	lumB = 0.114
)

// Intensities returns the raw inputs on [0, 1] as float32 [N*D]: MNIST
// pixels /255 (D = 784); CIFAR luminance 0.299R + 0.587G + 0.114B of the
// /255 planes (D = 1,024), computed in float32 like the reference's numpy
// code. Explicit float32 conversions keep the compiler from fusing the
// multiply-adds, so the bits do not depend on GOAMD64.
func Intensities(r *Raw) []float32 {
	switch r.Channels {
	case 1:
		x := make([]float32, len(r.Pixels))
		for i, p := range r.Pixels {
			x[i] = float32(p) / 255
		}
		return x
	case 3:
		plane := r.Height * r.Width
		x := make([]float32, r.N*plane)
		for i := range r.N {
			row := r.Row(i)
			out := x[i*plane : (i+1)*plane]
			for j := range plane {
				rr := float32(row[j]) / 255
				gg := float32(row[plane+j]) / 255
				bb := float32(row[2*plane+j]) / 255
				out[j] = float32(float32(float32(lumR*rr)+float32(lumG*gg)) + float32(lumB*bb))
			}
		}
		return x
	}
	panic(fmt.Sprintf("dataset: Intensities of a %d-channel set", r.Channels))
}

// FitStandardize returns the per-dimension mean and population s.d.
// (ddof 0) of the n = len(x)/d rows of x, accumulated in float64 in two
// passes; an s.d. below 1e-6 is returned as 1. It panics if d <= 0 or
// len(x) is not a multiple of d.
func FitStandardize(x []float32, d int) (mean, std []float32) {
	if d <= 0 || len(x)%d != 0 {
		panic(fmt.Sprintf("dataset: FitStandardize of %d values in rows of %d", len(x), d))
	}
	n := len(x) / d
	sum := make([]float64, d)
	for i := range n {
		for j, v := range x[i*d : (i+1)*d] {
			sum[j] += float64(v)
		}
	}
	mu := make([]float64, d)
	for j := range mu {
		mu[j] = sum[j] / float64(n)
		sum[j] = 0
	}
	for i := range n {
		for j, v := range x[i*d : (i+1)*d] {
			e := float64(v) - mu[j]
			sum[j] += e * e
		}
	}
	mean = make([]float32, d)
	std = make([]float32, d)
	for j := range d {
		mean[j] = float32(mu[j])
		s := math.Sqrt(sum[j] / float64(n))
		if s < minStd {
			s = 1
		}
		std[j] = float32(s)
	}
	return mean, std
}

// ApplyStandardize replaces every row of x by (x - mean) / std in float32.
// It panics if len(mean) != len(std) or len(x) is not a multiple of it.
func ApplyStandardize(x, mean, std []float32) {
	d := len(mean)
	if d == 0 || len(std) != d || len(x)%d != 0 {
		panic("dataset: ApplyStandardize shape mismatch")
	}
	for i := 0; i < len(x); i += d {
		row := x[i : i+d]
		for j := range row {
			row[j] = (row[j] - mean[j]) / std[j]
		}
	}
}

// Prepared is a data set ready for the learners: standardised float32
// inputs of the official training and test sets (test standardised with
// the training statistics), labels, the statistics and the raw intensities.
type Prepared struct {
	TrainX, TestX []float32 // [N*D], [M*D]
	TrainY, TestY []int32
	Mean, Std     []float32 // [D]
	Train, Test   *Raw
	D             int
	// Height and Width place the D inputs on a sheet (28x28 MNIST, 32x32
	// CIFAR and, as in the reference, the 1,024 CIFAR features).
	Height, Width int
	Classes       int
}

// Prepare converts a decoded data set: Intensities, then per-dimension
// standardisation fitted on the whole official training set (the held-out
// tenth included, as in the reference).
func Prepare(train, test *Raw) *Prepared {
	p := &Prepared{
		TrainX: Intensities(train), TestX: Intensities(test),
		TrainY: train.Labels, TestY: test.Labels,
		Train: train, Test: test,
		D: train.Height * train.Width, Height: train.Height, Width: train.Width,
		Classes: train.Classes,
	}
	p.Mean, p.Std = FitStandardize(p.TrainX, p.D)
	ApplyStandardize(p.TrainX, p.Mean, p.Std)
	ApplyStandardize(p.TestX, p.Mean, p.Std)
	return p
}
