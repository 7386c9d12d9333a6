package dataset

import (
	"math"
	"slices"
	"testing"
)

func TestLoadMNISTCounts(t *testing.T) {
	train, test := loadMNIST(t)
	for _, c := range []struct {
		name string
		r    *Raw
		want []int
	}{
		{"train", train, []int{5923, 6742, 5958, 6131, 5842, 5421, 5918, 6265, 5851, 5949}},
		{"test", test, []int{980, 1135, 1032, 1010, 982, 892, 958, 1028, 974, 1009}},
	} {
		per := make([]int, 10)
		for _, l := range c.r.Labels {
			per[l]++
		}
		if !slices.Equal(per, c.want) {
			t.Errorf("%s label counts %v, want %v", c.name, per, c.want)
		}
		if len(c.r.Pixels) != c.r.N*784 {
			t.Errorf("%s: %d pixels for %d images", c.name, len(c.r.Pixels), c.r.N)
		}
	}
}

func TestPrepareMNIST(t *testing.T) {
	train, test := loadMNIST(t)
	p := Prepare(train, test)
	if p.D != 784 || len(p.TrainX) != 60000*784 || len(p.TestX) != 10000*784 {
		t.Fatalf("shapes D=%d train %d test %d", p.D, len(p.TrainX), len(p.TestX))
	}
	// Every training column has mean 0 and population s.d. 1, or is
	// constant (s.d. floored to 1) and then exactly 0. Tolerance: float32
	// rounding of 60,000 terms summed in float64, about 1e-6 relative.
	constant := 0
	for j := range p.D {
		var s, ss float64
		for i := range 60000 {
			v := float64(p.TrainX[i*784+j])
			s += v
			ss += v * v
		}
		m := s / 60000
		sd := math.Sqrt(ss/60000 - m*m)
		if p.Std[j] == 1 && sd == 0 {
			constant++
			continue
		}
		if math.Abs(m) > 1e-5 || math.Abs(sd-1) > 1e-4 {
			t.Fatalf("column %d: mean %g s.d. %g after standardisation", j, m, sd)
		}
	}
	// MNIST has 67 pixels that are 0 in every training image.
	if constant != 67 {
		t.Errorf("%d constant columns, want 67", constant)
	}
	// The raw corner pixel is 0 everywhere, so it must standardise to 0
	// on the test set too.
	if p.TestX[0] != 0 {
		t.Errorf("test corner pixel %g, want 0", p.TestX[0])
	}
}
