package core

// addRows adds sum_t v[t] * b[off[t] : off[t]+len(c)] to c, each element of
// c accumulating in ascending t with a separate multiply and add (never
// fused), so the vector kernel (vec_amd64.s, AVX2) and the portable loop
// give the same bits. It is the forward product: c is a layer's drive, the
// pairs are the active presynaptic units with their dense weight columns.
// It panics if a column of b is too short.
func addRows(c, v []float32, off []int32, b []float32) {
	if len(v) != len(off) {
		panic("core: addRows length mismatch")
	}
	if len(c) == 0 || len(v) == 0 {
		return
	}
	addRowsImpl(c, v, off, b)
}

func addRowsGo(c, v []float32, off []int32, b []float32) {
	n := len(c)
	for t, a := range v {
		row := b[off[t] : int(off[t])+n]
		for j := range c {
			// The conversion forbids fusing into an FMA.
			c[j] += float32(a * row[j])
		}
	}
}
