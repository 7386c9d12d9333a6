package core

import (
	"slices"
	"testing"
)

func TestKWTAK(t *testing.T) {
	t.Parallel()
	tests := []struct {
		frac float64
		n    int
		want int
	}{
		{0.10, 512, 51}, // 51.2
		{0.10, 256, 26}, // 25.6
		{0.10, 128, 13}, // 12.8
		{0.10, 5, 1},    // 0.5 -> 0 (half to even) -> max(1, 0)
		{0.10, 25, 2},   // 2.5 -> 2 (half to even)
		{0.10, 35, 4},   // 3.5 -> 4 (half to even)
		{0.15, 512, 77}, // 76.8
		{0.25, 256, 64},
		{0.0, 100, 1},
		{1.0, 7, 7},
	}
	for _, tc := range tests {
		if got := KWTAK(tc.frac, tc.n); got != tc.want {
			t.Errorf("KWTAK(%v, %d) = %d, want %d", tc.frac, tc.n, got, tc.want)
		}
	}
}

func TestKWTA(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		row  []float32
		k    int
		want []float32
	}{
		{"plain", []float32{0.1, 0.5, 0.3, 0.9, 0}, 2, []float32{0, 0.5, 0, 0.9, 0}},
		{"ties kept", []float32{1, 2, 2, 2, 0.5}, 2, []float32{0, 2, 2, 2, 0}},
		{"ties at threshold", []float32{3, 1, 1, 0.5, 1}, 2, []float32{3, 1, 1, 0, 1}},
		{"fewer positive than k", []float32{0, 0.2, 0, 0, 0.1}, 3, []float32{0, 0.2, 0, 0, 0.1}},
		{"all zero", []float32{0, 0, 0}, 1, []float32{0, 0, 0}},
		{"k = n", []float32{1, 0, 2}, 3, []float32{1, 0, 2}},
		{"k = 1", []float32{1, 4, 2}, 1, []float32{0, 4, 0}},
		{"signed row", []float32{-1, -3, 2, -2}, 2, []float32{-1, 0, 2, 0}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			row := slices.Clone(tc.row)
			KWTAScratch(row, tc.k, make([]float32, len(row)))
			if !slices.Equal(row, tc.want) {
				t.Errorf("KWTAScratch(%v, %d) = %v, want %v", tc.row, tc.k, row, tc.want)
			}
		})
	}
}

// TestKWTAMatchesSort checks the selection against a sort on random rows,
// including rows with many ties and many zeros.
func TestKWTAMatchesSort(t *testing.T) {
	t.Parallel()
	rng := NewRNG(1, StreamRun)
	for trial := range 2000 {
		n := 1 + rng.IntN(600)
		row := make([]float32, n)
		levels := 1 + rng.IntN(20) // few levels => many ties
		for i := range row {
			switch {
			case trial%3 == 0:
				row[i] = float32(rng.IntN(levels)) // ties and zeros
			case trial%3 == 1:
				row[i] = max(0, float32(rng.NormFloat64()))
			default:
				row[i] = float32(rng.NormFloat64())
			}
		}
		k := 1 + rng.IntN(n)
		sorted := slices.Clone(row)
		slices.Sort(sorted)
		thr := sorted[n-k]
		want := slices.Clone(row)
		for i, v := range want {
			if v < thr {
				want[i] = 0
			}
		}
		got := slices.Clone(row)
		KWTAScratch(got, k, make([]float32, len(got)))
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: KWTAScratch(n=%d, k=%d) differs from the sort reference", trial, n, k)
		}
		kth := KthLargest(row, k, make([]float32, n))
		if kth != max(thr, 0) && kth != thr {
			t.Fatalf("trial %d: KthLargest = %v, want %v", trial, kth, thr)
		}
		// The vector selection (scratch of 3n) gives the same value.
		if v := KthLargest(row, k, make([]float32, 3*n)); v != kth {
			t.Fatalf("trial %d: vector selection %v, quickselect %v (n=%d, k=%d)", trial, v, kth, n, k)
		}
	}
}

func BenchmarkKWTA(b *testing.B) {
	rng := NewRNG(1, StreamRun)
	row := make([]float32, 512)
	for i := range row {
		row[i] = max(0, float32(rng.NormFloat64()))
	}
	work := make([]float32, 512)
	scratch := make([]float32, 512)
	for b.Loop() {
		copy(work, row)
		KWTAScratch(work, 51, scratch)
	}
}
