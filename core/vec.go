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

// sgdFBCoef holds the constants of one heavy-ball row step with decay.
type sgdFBCoef struct {
	mu, eta, lam float32
	tiny         float32 // tinyVelocity
}

// sgdRowFB is the heavy-ball step of one row of a layer with a feedback
// twin (W^l and B^{l-1}, l >= 2): for each stored synapse s whose pre unit
// j = col[s] may move (awake[j] == 0),
//
//	v[s] = flushTiny(mu*v[s] + g[j])
//	d = eta*v[s]
//	w[s] = clamp_j(w[s] + d - lam*(w[s] + d))
//	fb[s] = clamp_j(fb[s] + d - lam*(fb[s] + d))
//
// where clamp_j is max(x, 0) for an excitatory pre unit (sign[j] > 0) and
// min(x, 0) otherwise (Dale's law); synapses with awake[j] != 0 keep their
// state (frozen, learner.md §3.4). g is the row's dense gradient (all +0 for
// a row without one) and lam != 0. The vector kernel performs the same
// float32 operations in the same order, so both give identical bits,
// signed zeros included.
func sgdRowFB(w, fb, v []float32, col []int32, g []float32, awake []int32, sign []float32, k *sgdFBCoef) {
	sgdRowFBImpl(w, fb, v, col, g, awake, sign, k)
}

func sgdRowFBGo(w, fb, v []float32, col []int32, g []float32, awake []int32, sign []float32, k *sgdFBCoef) {
	fb = fb[:len(w)]
	v = v[:len(w)]
	col = col[:len(w)]
	for s := range w {
		j := col[s]
		if awake[j] != 0 {
			continue
		}
		vs := flushTiny(float32(k.mu*v[s]) + g[j])
		v[s] = vs
		d := float32(k.eta * vs)
		ws := w[s] + d
		bs := fb[s] + d
		ws -= float32(k.lam * ws)
		bs -= float32(k.lam * bs)
		if sign[j] > 0 {
			ws = max(ws, 0)
			bs = max(bs, 0)
		} else {
			ws = min(ws, 0)
			bs = min(bs, 0)
		}
		w[s] = ws
		fb[s] = bs
	}
}

// copyColumn writes a row's stored weights into the column-order copy:
// wT[col[s]*ld] = w[s].
func copyColumn(wT, w []float32, col []int32, ld int) {
	for s, j := range col[:len(w)] {
		wT[int(j)*ld] = w[s]
	}
}

// addTiles adds sum_t v[t] * column off[t] of a tiled matrix b (tiles of
// 8 rows, ts floats apart; column j of a tile at offset j*8) to c, whose
// len(c)/8 tiles start at b[0]: per element of c in ascending t, multiply
// and add separate, as addRows. Offsets are multiples of 8 below ts, which
// the callers guarantee by construction (pre units j < nIn, ts = nIn*8),
// so only the shape is checked.
func addTiles(c, v []float32, off []int32, b []float32, ts int) {
	if len(c)%tile != 0 || len(v) != len(off) || len(b) < len(c)/tile*ts {
		panic("core: addTiles shape")
	}
	if len(v) == 0 {
		return
	}
	addTilesImpl(c, v, off, b, ts)
}

func addTilesGo(c, v []float32, off []int32, b []float32, ts int) {
	for q := range len(c) / tile {
		addRowsGo(c[q*tile:(q+1)*tile], v, off, b[q*ts:])
	}
}
