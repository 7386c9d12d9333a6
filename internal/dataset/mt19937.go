package dataset

// mt19937 is the 32-bit Mersenne Twister exactly as numpy's legacy
// RandomState runs it (Matsumoto and Nishimura's genrand_int32, seeded by
// init_genrand as RandomState(seed) does for an integer seed), so that the
// reference's held-out split (np.random.RandomState(1234).shuffle, class by
// class) can be drawn bit for bit. The project's own randomness uses
// core/rng.go; this generator serves only that compatibility.
type mt19937 struct {
	key [624]uint32
	pos int
}

func newMT19937(seed uint32) *mt19937 {
	m := &mt19937{pos: 624}
	m.key[0] = seed
	for i := 1; i < 624; i++ {
		prev := m.key[i-1]
		m.key[i] = 1812433253*(prev^(prev>>30)) + uint32(i)
	}
	return m
}

// uint32 is genrand_int32: the next tempered output.
func (m *mt19937) uint32() uint32 {
	const (
		n, mm      = 624, 397
		upperMask  = 0x80000000
		lowerMask  = 0x7fffffff
		matrixA    = 0x9908b0df
		temperingB = 0x9d2c5680
		temperingC = 0xefc60000
	)
	if m.pos >= n {
		for i := range n {
			y := m.key[i]&upperMask | m.key[(i+1)%n]&lowerMask
			v := m.key[(i+mm)%n] ^ y>>1
			if y&1 != 0 {
				v ^= matrixA
			}
			m.key[i] = v
		}
		m.pos = 0
	}
	y := m.key[m.pos]
	m.pos++
	y ^= y >> 11
	y ^= y << 7 & temperingB
	y ^= y << 15 & temperingC
	y ^= y >> 18
	return y
}

// interval returns a uniform integer in [0, max], as numpy's
// random_interval: 32-bit draws masked to the smallest 2^k - 1 >= max,
// rejected while above max.
func (m *mt19937) interval(max uint32) uint32 {
	if max == 0 {
		return 0
	}
	mask := max
	mask |= mask >> 1
	mask |= mask >> 2
	mask |= mask >> 4
	mask |= mask >> 8
	mask |= mask >> 16
	for {
		if v := m.uint32() & mask; v <= max {
			return v
		}
	}
}

// shuffle permutes idx in place as numpy's RandomState.shuffle does a 1-d
// array: for i = len-1 down to 1, swap i with interval(i).
func (m *mt19937) shuffle(idx []int) {
	for i := len(idx) - 1; i > 0; i-- {
		j := int(m.interval(uint32(i)))
		idx[i], idx[j] = idx[j], idx[i]
	}
}
