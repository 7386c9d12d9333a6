package kernels

import "math"

// AddRows adds sum_t v[t] * b[off[t] : off[t]+len(c)] to c, each element of
// c accumulating in ascending t with a separate multiply and add (never
// fused), so the vector kernel (vec_amd64.s, AVX2) and the portable loop
// give the same bits. It is the forward product: c is a layer's drive, the
// pairs are the active presynaptic units with their dense weight columns.
// It panics if a column of b is too short.
func AddRows(c, v []float32, off []int32, b []float32) {
	if len(v) != len(off) {
		panic("kernels: AddRows length mismatch")
	}
	if len(c) == 0 || len(v) == 0 {
		return
	}
	addRowsImpl(c, v, off, b, false)
}

// SetRows is clear(c) then AddRows, without the clear's stores: each
// element starts from +0.
func SetRows(c, v []float32, off []int32, b []float32) {
	if len(v) != len(off) {
		panic("kernels: SetRows length mismatch")
	}
	if len(c) == 0 {
		return
	}
	addRowsImpl(c, v, off, b, true)
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

// SGDCoef holds the constants of one heavy-ball row step without decay.
// Its fields are read by the vector kernel at fixed offsets.
type SGDCoef struct {
	wd, mu, eta float32
	tiny        float32 // TinyVelocity
}

// NewSGDCoef returns SGDRowInput's constants: coupled L2 wd, momentum mu,
// step eta.
func NewSGDCoef(wd, mu, eta float32) SGDCoef {
	return SGDCoef{wd: wd, mu: mu, eta: eta, tiny: TinyVelocity}
}

// SGDRowInput is the heavy-ball step of one row of W^1 (no decay, no Dale):
// for each stored synapse s,
//
//	gs = g[col[s]] - wd*w[s]
//	v[s] = FlushTiny(mu*v[s] + gs)
//	w[s] = w[s] + eta*v[s]
//
// with g the row's dense gradient (nil, read as all +0, for a row without
// one: the kernel then skips the gather) and col
// ascending, as a row's stored synapses are; then the column copy of the
// new weights, CopyColumn(wT, w, col, ld) (none if wT is nil), which the
// vector kernel fuses into the step (each new weight is stored while still
// in a register). The
// vector kernel performs the same float32 operations in the same order, so
// both give identical bits (a NaN velocity, which cannot arise, would be
// flushed by the kernel and kept by the loop). It panics if a column
// or its place in wT is out of range.
func SGDRowInput(w, v []float32, col []uint16, g []float32, k *SGDCoef, wT []float32, ld int) {
	sgdRowInputImpl(w, v, col, g, k, wT, ld)
}

func sgdRowInputGo(w, v []float32, col []uint16, g []float32, k *SGDCoef) {
	v = v[:len(w)]
	col = col[:len(w)]
	for s, ws := range w {
		var gs float32 // +0: a zero gradient (g nil)
		if g != nil {
			gs = g[col[s]]
		}
		gs -= float32(k.wd * ws)
		vs := FlushTiny(float32(k.mu*v[s]) + gs)
		v[s] = vs
		w[s] = ws + float32(k.eta*vs)
	}
}

// SGDFBCoef holds the constants of one heavy-ball row step with decay.
// Its fields are read by the vector kernels at fixed offsets.
type SGDFBCoef struct {
	mu, eta, lam float32
	tiny         float32 // TinyVelocity
}

// NewSGDFBCoef returns SGDRowFB's constants: momentum mu, step eta, decay
// lam.
func NewSGDFBCoef(mu, eta, lam float32) SGDFBCoef {
	return SGDFBCoef{mu: mu, eta: eta, lam: lam, tiny: TinyVelocity}
}

// SGDRowFB is the heavy-ball step of one row of a layer with a feedback
// twin (W^l and B^{l-1}, l >= 2): for each stored synapse s whose pre unit
// j = col[s] may move (flags[j]&FlagFrozen == 0),
//
//	v[s] = FlushTiny(mu*v[s] + g[j])
//	d = eta*v[s]
//	w[s] = clamp_j(w[s] + d - lam*(w[s] + d))
//	fb[s] = clamp_j(fb[s] + d - lam*(fb[s] + d))
//
// where clamp_j is max(x, 0) for an excitatory pre unit (flags[j]&FlagExc
// != 0) and min(x, 0) otherwise (Dale's law); the other synapses keep their
// state (frozen). One word per pre unit carries both bits,
// so the vector kernel gathers once per synapse. g is the row's dense
// gradient (all +0 for a row without one, or nil for that, which spares
// the kernel its gather) and lam != 0. Then the column
// copy of the (new or kept) weights, CopyColumn(wT, w, col, ld), fused into
// the vector kernel as in SGDRowInput. The vector kernel performs the same
// float32 operations in the same order, so both give identical bits,
// signed zeros included. It panics if a column or its place in wT is out
// of range.
func SGDRowFB(w, fb, v []float32, col []int32, g []float32, flags []int32, k *SGDFBCoef, wT []float32, ld int) {
	sgdRowFBImpl(w, fb, v, col, g, flags, k, wT, ld)
}

// SGDRowFBWords is SGDRowFB with each synapse's column and flags packed in
// one word, colWord[s] = col[s] | flags[col[s]]<<16 (layer.colWord), for
// rows whose flags are the static Dale bits: the same steps, the same bits.
func SGDRowFBWords(w, fb, v []float32, colWord []int32, g []float32, k *SGDFBCoef, wT []float32, ld int) {
	sgdRowFBWordsImpl(w, fb, v, colWord, g, k, wT, ld)
}

func sgdRowFBWordsGo(w, fb, v []float32, colWord []int32, g []float32, k *SGDFBCoef, wT []float32, ld int) {
	fb = fb[:len(w)]
	v = v[:len(w)]
	colWord = colWord[:len(w)]
	for s := range w {
		j := colWord[s] & 0xffff
		var gj float32 // +0: a zero gradient (g nil)
		if g != nil {
			gj = g[j]
		}
		fbSyn(k, colWord[s]>>16, gj, &w[s], &fb[s], &v[s])
		if wT != nil {
			wT[int(j)*ld] = w[s]
		}
	}
}

// The bits of SGDRowFB's per-pre-unit flag words.
const (
	FlagFrozen = 1 // the pre unit is awake: its synapses into awake posts are frozen
	FlagExc    = 2 // the pre unit is excitatory
	FlagInh    = 4 // the pre unit is inhibitory (the controller's decay pass; SGDRowFB reads only bits 0 and 1)
)

func sgdRowFBGo(w, fb, v []float32, col []int32, g []float32, flags []int32, k *SGDFBCoef) {
	fb = fb[:len(w)]
	v = v[:len(w)]
	col = col[:len(w)]
	for s := range w {
		j := col[s]
		var gj float32 // +0: a zero gradient (g nil)
		if g != nil {
			gj = g[j]
		}
		fbSyn(k, flags[j], gj, &w[s], &fb[s], &v[s])
	}
}

// SGDRowFBDense is SGDRowFB on a row of a dense layer, where synapse j
// comes from pre unit j, so that g and flags are read in step with the row
// (no gather), and without the column copy: the caller rewrites that with
// syncT once the layer's rows are done.
func SGDRowFBDense(w, fb, v, g []float32, flags []int32, k *SGDFBCoef) {
	n := len(w)
	if len(fb) < n || len(v) < n || len(g) < n || len(flags) < n {
		panic("kernels: SGDRowFBDense length mismatch")
	}
	sgdRowFBDenseImpl(w, fb, v, g, flags, k)
}

func sgdRowFBDenseGo(w, fb, v, g []float32, flags []int32, k *SGDFBCoef) {
	for s := range w {
		fbSyn(k, flags[s], g[s], &w[s], &fb[s], &v[s])
	}
}

// fbSyn is SGDRowFB's step of one synapse whose pre unit has flag word f
// and gradient gj.
func fbSyn(k *SGDFBCoef, f int32, gj float32, w, fb, v *float32) {
	if f&FlagFrozen != 0 {
		return
	}
	vs := FlushTiny(float32(k.mu**v) + gj)
	*v = vs
	d := float32(k.eta * vs)
	ws := *w + d
	bs := *fb + d
	ws -= float32(k.lam * ws)
	bs -= float32(k.lam * bs)
	if f&FlagExc != 0 {
		ws = max(ws, 0)
		bs = max(bs, 0)
	} else {
		ws = min(ws, 0)
		bs = min(bs, 0)
	}
	*w = ws
	*fb = bs
}

// CopyColumn writes a row's stored weights into the column-order copy:
// wT[col[s]*ld] = w[s]; nothing for a nil wT (a layer without a copy).
// W^1's fast path passes 16-bit columns (less memory traffic on the
// largest layer).
func CopyColumn[C int32 | uint16](wT, w []float32, col []C, ld int) {
	if wT == nil {
		return
	}
	for s, j := range col[:len(w)] {
		wT[int(j)*ld] = w[s]
	}
}

// TransposeTile writes one Tile of 8 rows of a dense matrix, n columns
// each, in the tiled column order: dst[j*8+r] = src[r*n+j]. It is the
// column copy (syncT) of a dense tiled layer, a Tile at a time.
func TransposeTile(dst, src []float32, n int) {
	if len(src) != Tile*n || len(dst) != Tile*n {
		panic("kernels: TransposeTile shape")
	}
	transposeRows8Impl(dst, Tile, src, n)
}

// TransposeInto writes the rows x cols matrix src (row-major) transposed to
// dst: dst[j*rows+r] = src[r*cols+j]. Blocks of 8 rows go through the Tile
// transpose's kernel (8 x 8 in registers), the last rows % 8 rows through a
// loop. Only moves, so the bits are the source's. It is core/backprop's
// transpose of a layer's activities and weights for its backward pass.
func TransposeInto(dst, src []float32, rows, cols int) {
	if rows < 0 || cols < 0 || len(src) < rows*cols || len(dst) < rows*cols {
		panic("kernels: TransposeInto shape")
	}
	r8 := rows &^ 7
	if cols > 0 {
		for r0 := 0; r0 < r8; r0 += Tile {
			transposeRows8Impl(dst[r0:], rows, src[r0*cols:(r0+Tile)*cols], cols)
		}
	}
	for r := r8; r < rows; r++ {
		row := src[r*cols : (r+1)*cols]
		for j, x := range row {
			dst[j*rows+r] = x
		}
	}
}

// transposeRows8Go writes columns from..n-1 of 8 rows of a dense matrix (n
// columns each) as columns ld floats apart: dst[j*ld+r] = src[r*n+j]
// (ld >= 8; the other entries of dst are left as they are).
// transposeRows8Impl does every column, by the vector kernel where the
// CPU has it; its callers check the shapes.
func transposeRows8Go(dst []float32, ld int, src []float32, n, from int) {
	for r := range Tile {
		row := src[r*n : (r+1)*n]
		for j := from; j < n; j++ {
			dst[j*ld+r] = row[j]
		}
	}
}

// AddTiles adds sum_t v[t] * column off[t] of a tiled matrix b (tiles of
// 8 rows, ts floats apart; column j of a Tile at offset j*8) to c, whose
// len(c)/8 tiles start at b[0]: per element of c in ascending t, multiply
// and add separate, as AddRows. Offsets are multiples of 8 below ts, which
// the callers guarantee by construction (pre units j < nIn, ts = nIn*8),
// so only the shape is checked.
func AddTiles(c, v []float32, off []int32, b []float32, ts int) {
	if len(c)%Tile != 0 || len(v) != len(off) || len(b) < len(c)/Tile*ts {
		panic("kernels: AddTiles shape")
	}
	if len(v) == 0 {
		return
	}
	addTilesImpl(c, v, off, b, ts)
}

func addTilesGo(c, v []float32, off []int32, b []float32, ts int) {
	for q := range len(c) / Tile {
		addRowsGo(c[q*Tile:(q+1)*Tile], v, off, b[q*ts:])
	}
}

// batchBlockCols is how many columns of a strip AddTilesBatch's kernel
// takes at a time: 128 columns of 64 rows are 32 KB, which the samples of
// a batch then read from the L1 cache. (Blocks of 64-256 columns ran a
// batch of 16 MNIST samples 20-25% faster than one block of all 784; 784
// columns of a strip are 200 KB, read from L2 by every sample.)
const batchBlockCols = 128

// AddTilesBatch runs AddTiles on a strip of 64 rows (8 tiles of b) for
// every sample s of a batch: z[s*zstride : s*zstride+64] += the sample's
// entries ptr[s]:ptr[s+1] of v and off. Per drive the terms are added in
// the sample's order, so the drives equal AddTiles' bit for bit when each
// sample's offsets ascend (they always do: SparseDiff lists entries in
// ascending columns); the kernel goes through the columns a block at a
// time (batchBlockCols) for all the samples, so that a block's weights are
// read from L1 by every sample. cur is scratch of len(ptr)-1 elements.
// Offsets are multiples of 8 below ts, as for AddTiles.
func AddTilesBatch(z []float32, zstride int, v []float32, off, ptr, cur []int32, b []float32, ts int) {
	n := len(ptr) - 1
	if n < 0 || len(cur) != n || len(v) != len(off) || len(b) < 8*ts || zstride < 8*Tile {
		panic("kernels: AddTilesBatch shape")
	}
	if n == 0 {
		return
	}
	if (n-1)*zstride+8*Tile > len(z) || ptr[0] < 0 || int(ptr[n]) > len(v) {
		panic("kernels: AddTilesBatch out of range")
	}
	for s := range n {
		if ptr[s+1] < ptr[s] {
			panic("kernels: AddTilesBatch entries out of order")
		}
	}
	addTilesBatchImpl(z, zstride, v, off, ptr, cur, b, ts)
}

func addTilesBatchGo(z []float32, zstride int, v []float32, off, ptr []int32, b []float32, ts int) {
	for s := range len(ptr) - 1 {
		lo, hi := ptr[s], ptr[s+1]
		addTilesGo(z[s*zstride:s*zstride+8*Tile], v[lo:hi], off[lo:hi], b, ts)
	}
}

// AnchorRowVec runs the anchor's steady state (anchorRowGo without twin,
// Dale signs or first call) on the longest prefix of w it can do with the
// vector kernel and returns its length (0 without one); the caller does
// the rest with the loop. len(ws) >= len(w).
func AnchorRowVec(w, ws []float32, lam, aMu, aLam float32) int {
	if len(ws) < len(w) {
		panic("kernels: AnchorRowVec length mismatch")
	}
	return anchorRowVecImpl(w, ws, lam, aMu, aLam)
}

// AdamCoef holds the constants of one masked-Adam row step, each
// broadcast to a vector's 8 lanes for the kernel's memory operands.
type AdamCoef struct {
	b1, c1, b2, c2 [8]float32 // c = 1 - beta, rounded as the loop rounds it
	bc1, bc2       [8]float32 // bias corrections
	eta, eps       [8]float32
	wd, lam        [8]float32
	tiny           [8]float32 // TinyVelocity: the first moment's flush
	hasWD, hasLam  int32      // apply the coupled L2 / the decay (the loop skips them at 0)
	leak           int32      // moments advance at frozen synapses too (leaking Adam)
	// divBC1, divBC2: the bias correction is not 1, so the kernel divides by
	// it. A bias correction reaches exactly 1 after a few hundred (bc1) or
	// some 17,000 (bc2) steps, and x/1 is x to the bit (the moments are
	// never signalling NaNs), so the kernel skips those divisions then: the
	// divider is the masked-Adam step's slowest unit.
	divBC1, divBC2 int32
}

// NewAdamCoef returns AdamRow's constants for the Adam step with betas b1,
// b2, bias corrections bc1, bc2 (1 - beta^t), rate eta, epsilon eps,
// coupled L2 wd and decay lam; leak lets the moments advance at frozen
// synapses.
func NewAdamCoef(b1, b2, bc1, bc2, eta, eps, wd, lam float32, leak bool) *AdamCoef {
	k := &AdamCoef{}
	for i := range 8 {
		k.b1[i], k.c1[i] = b1, 1-b1
		k.b2[i], k.c2[i] = b2, 1-b2
		k.bc1[i], k.bc2[i] = bc1, bc2
		k.eta[i], k.eps[i] = eta, eps
		k.wd[i], k.lam[i] = wd, lam
		k.tiny[i] = TinyVelocity
	}
	if wd != 0 {
		k.hasWD = 1
	}
	if lam != 0 {
		k.hasLam = 1
	}
	if leak {
		k.leak = 1
	}
	if bc1 != 1 {
		k.divBC1 = 1
	}
	if bc2 != 1 {
		k.divBC2 = 1
	}
	return k
}

// AdamRow is the masked-Adam step of one row with confined moments:
// for each stored synapse s whose pre unit j = col[s]
// may move (frozen[j] == 0; frozen nil: every pre unit may),
//
//	gs = g[j] - wd*w[s]                      (if wd != 0)
//	m1 = b1*m1 + (1-b1)*gs; m2 = b2*m2 + (1-b2)*gs*gs
//	d = eta*(m1/bc1) / (sqrt(m2/bc2) + eps)
//	w[s] = clamp_j(w[s] + d - lam*(w[s] + d))  (decay if lam != 0)
//	fb[s] = clamp_j(fb[s] + d - lam*(fb[s] + d)) (if fb != nil)
//
// where clamp_j (if fb != nil) zeroes a weight of the wrong Dale sign:
// negative at an excitatory pre unit, positive otherwise; sign holds the
// pre unit's Dale sign per stored synapse (sign[s] for pre unit col[s]), so
// that the vector kernel loads it in step with the row instead of
// gathering it.
// Synapses with frozen[j] != 0 keep their weights and, unless the moments
// leak (leak_moments), their moments. Then the column copy of the (new or
// kept) weights, CopyColumn(wT, w, col, ld) (none for a nil wT), fused
// into the vector kernel as in SGDRowInput. The vector kernel performs the
// same float32 operations in the same order (a float32 square root is the
// float64 one rounded), so both give identical bits, signed zeros
// included. It panics if a column or its place in wT is out of range.
func AdamRow(w, fb, m1, m2 []float32, col []int32, g []float32, frozen []int32, sign []float32, k *AdamCoef, wT []float32, ld int) {
	adamRowImpl(w, fb, m1, m2, col, g, frozen, sign, k, wT, ld)
}

func adamRowGo(w, fb, m1, m2 []float32, col []int32, g []float32, frozen []int32, sign []float32, k *AdamCoef) {
	m1, m2, col = m1[:len(w)], m2[:len(w)], col[:len(w)]
	for s := range w {
		j := col[s]
		frz := frozen != nil && frozen[j] != 0
		if frz && k.leak == 0 {
			continue
		}
		gs := g[j]
		ws := w[s]
		if k.hasWD != 0 {
			gs -= float32(k.wd[0] * ws)
		}
		a := FlushTiny(float32(k.b1[0]*m1[s]) + float32(k.c1[0]*gs))
		b := float32(k.b2[0]*m2[s]) + float32(float32(k.c2[0]*gs)*gs)
		m1[s], m2[s] = a, b
		if frz {
			continue
		}
		d := float32(k.eta[0]*(a/k.bc1[0])) / (float32(math.Sqrt(float64(b/k.bc2[0]))) + k.eps[0])
		ws += d
		if k.hasLam != 0 {
			ws -= float32(k.lam[0] * ws)
		}
		if fb != nil {
			bs := fb[s] + d
			if k.hasLam != 0 {
				bs -= float32(k.lam[0] * bs)
			}
			if sg := sign[s]; sg > 0 {
				if ws < 0 {
					ws = 0
				}
				if bs < 0 {
					bs = 0
				}
			} else {
				if ws > 0 {
					ws = 0
				}
				if bs > 0 {
					bs = 0
				}
			}
			fb[s] = bs
		}
		w[s] = ws
	}
}

// Tile is the number of rows per tile of a tiled matrix (AddTiles,
// TransposeTile): one 256-bit vector of float32.
const Tile = 8
