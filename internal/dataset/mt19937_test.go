package dataset

import "testing"

// TestMT19937 checks the generator against published outputs: the
// reference implementation's first output for init_genrand(5489), and
// numpy's np.random.RandomState(1234).random_sample(3).
func TestMT19937(t *testing.T) {
	if got := newMT19937(5489).uint32(); got != 3499211612 {
		t.Errorf("init_genrand(5489) first output = %d, want 3499211612", got)
	}
	m := newMT19937(1234)
	for i, want := range []float64{0.1915194503788923, 0.6221087710398319, 0.4377277390071145} {
		// numpy's random_sample: 53 random bits from two outputs.
		a, b := m.uint32()>>5, m.uint32()>>6
		if got := (float64(a)*67108864 + float64(b)) / 9007199254740992; got != want {
			t.Errorf("RandomState(1234).random_sample() #%d = %.16g, want %.16g", i, got, want)
		}
	}
}

// TestMT19937Interval checks interval's range and that it consumes draws
// only by rejection.
func TestMT19937Interval(t *testing.T) {
	m := newMT19937(7)
	for _, max := range []uint32{0, 1, 2, 5, 591, 6741, 1<<31 - 1} {
		for range 200 {
			if v := m.interval(max); v > max {
				t.Fatalf("interval(%d) = %d", max, v)
			}
		}
	}
}
