package data

// Dataset is a labelled set of samples stored row-major: sample i occupies
// X[i*D : (i+1)*D]. Labels lie in [0, Classes).
type Dataset struct {
	X       []float32
	Y       []int32
	N, D    int
	Classes int
	// Height and Width place the D inputs on a sheet for the
	// distance-dependent wiring (28x28 for MNIST, 32x32 for CIFAR and, as in
	// the reference, for the 1,024 CIFAR features too).
	Height, Width int
}

// Row returns sample i's features.
func (d *Dataset) Row(i int) []float32 { return d.X[i*d.D : (i+1)*d.D] }

// Subset returns the samples at idx, in that order, as a new Dataset.
func (d *Dataset) Subset(idx []int) *Dataset {
	s := &Dataset{
		X: make([]float32, len(idx)*d.D), Y: make([]int32, len(idx)),
		N: len(idx), D: d.D, Classes: d.Classes, Height: d.Height, Width: d.Width,
	}
	for j, i := range idx {
		copy(s.X[j*d.D:(j+1)*d.D], d.Row(i))
		s.Y[j] = d.Y[i]
	}
	return s
}

// Task is the set of classes presented together in one phase of a
// class-incremental stream, e.g. {0, 1} for the first split-MNIST task.
type Task []int
