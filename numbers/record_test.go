package numbers

import (
	"math"
	"testing"
)

func TestMeanSD(t *testing.T) {
	t.Parallel()
	// Values computed by hand: sd = sqrt(sum (x - m)^2 / (n - 1)).
	cases := []struct {
		name     string
		x        []float64
		mean, sd float64
	}{
		{"empty", nil, 0, 0},
		{"one seed", []float64{91.6}, 91.6, 0},
		{"1..4", []float64{1, 2, 3, 4}, 2.5, math.Sqrt(5.0 / 3)},
		{"three seeds", []float64{91.2, 91.9, 91.7}, 91.6, math.Sqrt(0.26 / 2)},
		{"constant", []float64{19.4, 19.4, 19.4}, 19.4, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			got := MeanSD(c.x)
			// Tolerance 1e-9: a few roundings of numbers near 100.
			if math.Abs(got.Mean-c.mean) > 1e-9 || math.Abs(got.SD-c.sd) > 1e-9 {
				t.Errorf("MeanSD(%v) = %+v, want mean %v sd %v", c.x, got, c.mean, c.sd)
			}
		})
	}
}
