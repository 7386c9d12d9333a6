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

// AddRows is addRows for the other learners (core/backprop's forward and
// gradient products): one vector kernel, with the same bits on every CPU.
func AddRows(c, v []float32, off []int32, b []float32) { addRows(c, v, off, b) }

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

// sgdCoef holds the constants of one heavy-ball row step without decay.
type sgdCoef struct {
	wd, mu, eta float32
	tiny        float32 // tinyVelocity
}

// sgdRowInput is the heavy-ball step of one row of W^1 (no decay, no Dale):
// for each stored synapse s,
//
//	gs = g[col[s]] - wd*w[s]
//	v[s] = flushTiny(mu*v[s] + gs)
//	w[s] = w[s] + eta*v[s]
//
// with g the row's dense gradient (all +0 for a row without one) and col
// ascending, as a row's stored synapses are. The
// vector kernel performs the same float32 operations in the same order, so
// both give identical bits (a NaN velocity, which cannot arise, would be
// flushed by the kernel and kept by the loop).
func sgdRowInput(w, v []float32, col []int32, g []float32, k *sgdCoef) {
	sgdRowInputImpl(w, v, col, g, k)
}

func sgdRowInputGo(w, v []float32, col []int32, g []float32, k *sgdCoef) {
	v = v[:len(w)]
	col = col[:len(w)]
	for s, ws := range w {
		gs := g[col[s]]
		gs -= float32(k.wd * ws)
		vs := flushTiny(float32(k.mu*v[s]) + gs)
		v[s] = vs
		w[s] = ws + float32(k.eta*vs)
	}
}
