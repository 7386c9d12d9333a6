package core

import "repro/internal/kernels"

// layer holds the synapses into one layer l (W^l, b^l) and, for l >= 2, the
// Kolen-Pollack feedback twin B^{l-1} of the same shape (n_l x n_{l-1}).
//
// Synapses are stored sparsely, row by row (post unit i), keeping only the
// synapses that exist under the connectivity mask. Absent synapses are
// re-zeroed after every update in the reference, so their weights are
// always 0 and, without the adaptive controller, their (phantom) velocities
// never reach a weight; dropping them is exact. With the controller they
// enter its drive estimate, so then every synapse is
// stored and absent ones carry a flag.
//
// W^l and B^{l-1} receive the same local product e^T a^{l-1}/n (wd = 0 for
// l >= 2) from the same zero start, so their heavy-ball
// velocities (or Adam moments) are identical at every step, masked or not.
// One optimiser state per synapse therefore serves both; the values differ
// through their initialisation, the decay and the Dale clamp.
//
// Beside the values themselves, the layer's state comes in parts, one job
// each, embedded so that the update's kernels read their fields directly;
// each part allocates its own slices (newLayer calls their constructors):
// the stored synapses (csrView), the column-order copy the forward pass
// reads (colMajor), the fixed connectivity and Dale signs (connState), the
// optimiser state (optState), the anchor's slow copies (anchorState), the
// adaptive decay controller's running estimates (ctrlState) and the buffers
// one update call reuses (layerScratch).
type layer struct {
	csrView
	colMajor

	w, fb []float32 // W^l and its twin B^{l-1} (nil for l = 1), per stored synapse
	bias  []float32 // b^l
	// fbPos maps (i, j) to the index in fb of synapse (i, j), or to
	// len(fb), where fb's backing array holds a zero that nothing writes,
	// when the synapse is absent (n_out x n_in, row-major; nil but for the
	// layers between hidden layers). The sweep reads the twin through it at
	// the active units only. Connectivity is fixed, so it never changes.
	fbPos []int32
	// noBias marks a skip layer S^l: it has no bias of its own (the bias
	// into layer l belongs to W^l), so the update leaves bias alone.
	noBias bool

	connState
	optState
	anchorState
	ctrlState
	layerScratch
}

// csrView is which synapses of an n_out x n_in matrix a layer stores, row by
// row (compressed sparse rows): the synapses of post unit i are the stored
// indices s in rowPtr[i]:rowPtr[i+1], ascending in their pre unit col[s].
// Every per-synapse slice of the layer (w, fb, m1, m2, absent, pos, ...) is
// indexed by s. Connectivity is fixed between structural rewirings (which
// build a new layer), so the view never changes.
type csrView struct {
	nIn, nOut int
	rowPtr    []int32  // len nOut+1
	col       []int32  // pre unit of each stored synapse
	col16     []uint16 // the same in 16 bits (n_in <= 65536), for W^1's row step
}

// newCSRView stores the synapses that keep marks (every one when keep is
// nil or storeAll is set: the adaptive controller's layers keep absent
// synapses, flagged in connState).
func newCSRView(nIn, nOut int, keep []bool, storeAll bool) csrView {
	v := csrView{nIn: nIn, nOut: nOut, rowPtr: make([]int32, nOut+1)}
	for i := range nOut {
		for j := range nIn {
			if keep == nil || keep[i*nIn+j] || storeAll {
				v.col = append(v.col, int32(j))
			}
		}
		v.rowPtr[i+1] = int32(len(v.col))
	}
	if nIn <= 1<<16 {
		v.col16 = make([]uint16, len(v.col))
		for s, j := range v.col {
			v.col16[s] = uint16(j)
		}
	}
	return v
}

// gather returns the stored synapses' entries of the row-major n_out x n_in
// matrix m, 0 for the synapses keep marks absent (nil for a nil m).
func (v *csrView) gather(m []float32, keep []bool) []float32 {
	if m == nil {
		return nil
	}
	var out []float32
	for i := range v.nOut {
		for s := v.rowPtr[i]; s < v.rowPtr[i+1]; s++ {
			f := i*v.nIn + int(v.col[s])
			x := m[f]
			if keep != nil && !keep[f] {
				x = 0
			}
			out = append(out, x)
		}
	}
	return out
}

// dense reports whether every synapse of the matrix is stored, so that
// row i's stored synapse j comes from pre unit j.
func (v *csrView) dense() bool { return len(v.col) == v.nIn*v.nOut }

// tile is the number of rows per tile of a tiled wT (the kernels' tile).
const tile = kernels.Tile

// colMajor holds W^l densely in column order (0 for absent synapses), for
// the vector forward product; pos[s] is stored synapse s's place in it. The
// update rewrites it from w (syncT, or a row at a time with kernels.CopyColumn), so
// it always equals w after an update call.
//
// Untiled, wT[j*ldT+i] = W_ij, with ldT = nOut padded so that columns do not
// start a power-of-two distance apart (an update writes one row, i.e. one
// element of every column, and at a 2 KiB stride those fall into two sets
// of the L1 cache and evict each other). Tiled (every layer whose width is
// a multiple of 8), rows come in tiles of 8:
// wT[(i/8)*nIn*8 + j*8 + i%8] = W_ij, so the 8 rows of a tile (25 KB for
// W^1 on MNIST) stay in L1 both while an update writes them row by row and
// while the forward pass reads them for every sample of a batch.
type colMajor struct {
	wT      []float32
	ldT     int // column stride, untiled (0 when tiled)
	tileLen int // nIn*tile: the length of one tile of rows, tiled (0 untiled)
	tiled   bool
	pos     []int32
}

// newColMajor allocates the column-order copy for the synapses v stores and
// places each of them; the values are written by the layer's syncT.
func newColMajor(v *csrView, tiled bool) colMajor {
	c := colMajor{tiled: tiled, pos: make([]int32, len(v.col))}
	if tiled {
		c.tileLen = v.nIn * tile
		c.wT = make([]float32, v.nIn*v.nOut)
	} else {
		c.ldT = paddedStride(v.nOut)
		c.wT = make([]float32, v.nIn*c.ldT)
	}
	for i := range v.nOut {
		base, stride := c.colBase(i)
		for s := v.rowPtr[i]; s < v.rowPtr[i+1]; s++ {
			c.pos[s] = int32(base + int(v.col[s])*stride)
		}
	}
	return c
}

// colCopy returns row i's place in the column copy (W_ij at wT[j*stride])
// and the column stride, or nil and 0 for a layer that keeps no copy (W^1
// under the row-order forward product, dropCopy).
func (c *colMajor) colCopy(i int) (wT []float32, stride int) {
	if c.wT == nil {
		return nil, 0
	}
	base, stride := c.colBase(i)
	return c.wT[base:], stride
}

// dropCopy frees the column copy: no forward product reads it, and the
// updates, seeing wT nil, no longer write it.
func (c *colMajor) dropCopy() { c.wT, c.pos = nil, nil }

// colBase returns where row i starts in wT and the distance between its
// columns: W_ij is wT[base + j*stride].
func (c *colMajor) colBase(i int) (base, stride int) {
	if c.tiled {
		return (i/tile)*c.tileLen + i%tile, tile
	}
	return i, c.ldT
}

// paddedStride returns the column stride of wT for n rows: n, plus one
// cache line when n floats span a multiple of 256 bytes.
func paddedStride(n int) int {
	if n*4%256 == 0 {
		return n + 16
	}
	return n
}

// connState is a layer's fixed connectivity and Dale constraints, per stored
// synapse and per pre unit. Both are set at construction and never change.
type connState struct {
	// absent flags the connectivity-absent stored synapses (nil unless the
	// layer stores every synapse, as the adaptive controller's do); the
	// update re-zeroes them after every step. absentWord is the same as
	// all-ones words, for kernels.CtrlDecayRow's re-mask (nil with absent).
	absent     []bool
	absentWord []int32
	// sign is the Dale sign (+1 excitatory, -1 inhibitory) of each pre unit
	// (nil for l = 1 and without Dale's law). signWord holds kernels.SGDRowFB's flags
	// for it: kernels.FlagExc where excitatory, kernels.FlagInh where inhibitory, 0 else.
	sign     []float32
	signWord []int32
	// synSign is sign per stored synapse (sign[col[s]]), for masked Adam's
	// row kernel; nil unless the layer has Dale signs and runs Adam.
	synSign []float32
	// colWord is per stored synapse its column with its pre unit's Dale
	// flags above (col[s] | signWord[col[s]]<<16), for the heavy-ball row
	// step of a row that no mask freezes: one load instead of a column
	// load and a flag gather. nil unless the layer has a twin and Dale
	// signs, runs heavy-ball, and has fewer than 2^16 pre units.
	colWord []int32
	// fbNoDale exempts the twin from the Dale clamp (no_dale_fb).
	fbNoDale bool
}

// newConnState flags the synapses v stores that keep marks absent (only
// where storeAll kept them) and derives the per-pre-unit Dale flags of sign.
func newConnState(v *csrView, keep []bool, storeAll bool, sign []float32) connState {
	c := connState{sign: sign, signWord: make([]int32, v.nIn)}
	if storeAll {
		for i := range v.nOut {
			for s := v.rowPtr[i]; s < v.rowPtr[i+1]; s++ {
				c.absent = append(c.absent, keep != nil && !keep[i*v.nIn+int(v.col[s])])
			}
		}
		c.absentWord = make([]int32, len(v.col))
		for s, a := range c.absent {
			if a {
				c.absentWord[s] = -1
			}
		}
	}
	for j, sg := range sign {
		switch {
		case sg > 0:
			c.signWord[j] = kernels.FlagExc
		case sg < 0:
			c.signWord[j] = kernels.FlagInh
		}
	}
	return c
}

// optState is the optimiser state: per stored synapse the heavy-ball
// velocity (sgd) or Adam's first and second moments, shared by W^l and its
// twin (they receive the same gradient, see layer), and the same per bias.
// m2 and bm2 are nil under sgd. All start at zero.
type optState struct {
	m1, m2   []float32
	bm1, bm2 []float32
}

func newOptState(nSyn, nOut int, adam bool) optState {
	o := optState{m1: make([]float32, nSyn), bm1: make([]float32, nOut)}
	if adam {
		o.m2 = make([]float32, nSyn)
		o.bm2 = make([]float32, nOut)
	}
	return o
}

// anchorState is the two-timescale anchor's state: slow copies of w, fb and
// bias (nil until the first anchored call allocates them, see start), its
// rates lambda_a and mu_a, and anchorFirst, set during the first anchored
// call, which clones the values into the slow copies instead of pulling
// them.
type anchorState struct {
	wSlow, fbSlow, biasSlow []float32
	anchorLam, anchorMu     float32
	anchorFirst             bool
}

// start allocates the slow copies for the layer values w, fb (fbSlow stays
// nil without a twin) and bias at the first anchored call and sets the
// rates; later calls leave the state alone.
func (a *anchorState) start(lam, mu float64, w, fb, bias []float32) {
	if a.wSlow != nil {
		return
	}
	a.anchorLam, a.anchorMu = float32(lam), float32(mu)
	a.wSlow = make([]float32, len(w))
	if fb != nil {
		a.fbSlow = make([]float32, len(fb))
	}
	a.biasSlow = make([]float32, len(bias))
	a.anchorFirst = true
}

// ctrlState is the adaptive decay controller's running state for one layer
// (layers >= 2 under kp_adapt): uEMA, the EMA of its drive u over waking
// calls (uSet once it holds a value); lastLam, the decay it set at the last
// call (replay reuses it under the fixed-replay modes); kpEff, the EMA of
// those decays reported as the run's effective decay (kpEffOK once set).
type ctrlState struct {
	lastLam float64
	uEMA    float64
	uSet    bool
	kpEff   float64
	kpEffOK bool
}

// drive folds a waking call's drive u into the EMA (replay calls use it
// without moving it) and returns the drive the decay is set from: the
// EMA, or u itself while the EMA is unset or 0.
func (c *ctrlState) drive(u float64, replay bool) float64 {
	if !replay {
		if !c.uSet {
			c.uEMA, c.uSet = u, true
		} else {
			c.uEMA = 0.98*c.uEMA + 0.02*u
		}
	}
	ub := c.uEMA
	if !c.uSet || ub == 0 {
		ub = u
	}
	return ub
}

// record keeps lam as the decay of the last call and folds it into kpEff.
func (c *ctrlState) record(lam float64) {
	c.lastLam = lam
	if !c.kpEffOK {
		c.kpEff, c.kpEffOK = lam, true
	} else {
		c.kpEff = 0.99*c.kpEff + 0.01*lam
	}
}

// layerScratch holds the buffers an update call of the layer reuses, so
// that a call allocates nothing. None carries information between calls:
// g, gb and gRow are zero again (or overwritten) before a call returns or
// is read; the term slices are rebuilt by every call; zeroRow, zeroWord and
// oneWord are constants.
type layerScratch struct {
	g, gb []float32 // per stored synapse / per post unit gradient (general path)
	// The plasticity signal of one call as per-row terms (CSR over posts):
	// pre-row offset and e/n, ascending in the sample. termOff and termCoef
	// grow to the largest call seen.
	termPtr, termFill, termOff []int32
	termCoef                   []float32
	gRow                       []float32 // one row's dense gradient
	zeroRow                    []float32 // all +0: the gradient of a silent row
	zeroWord, oneWord          []int32   // per pre unit: all 0, all 1
	// Per pre unit, a masked call's row-step words (preWords): masked
	// Adam's frozen words (frozenPre, 1 where the pre unit is awake) and
	// kernels.SGDRowFB's flags (flagPre: signWord plus kernels.FlagFrozen where awake).
	frozenPre, flagPre []int32
}

func newLayerScratch(nSyn, nIn, nOut int) layerScratch {
	s := layerScratch{
		g:         make([]float32, nSyn),
		gb:        make([]float32, nOut),
		termPtr:   make([]int32, nOut+1),
		termFill:  make([]int32, nOut),
		gRow:      make([]float32, nIn),
		zeroRow:   make([]float32, nIn),
		zeroWord:  make([]int32, nIn),
		oneWord:   make([]int32, nIn),
		frozenPre: make([]int32, nIn),
		flagPre:   make([]int32, nIn),
	}
	for j := range s.oneWord {
		s.oneWord[j] = 1
	}
	return s
}

// newLayer stores the synapses of the n_out x n_in matrices w and fb (fb
// nil for l = 1) that keep marks (all when keep is nil; with storeAll every
// synapse, absent ones flagged and zero), with Dale signs sign (nil for
// none), Adam's moments if adam, and a tiled column copy if tiled.
func newLayer(nIn, nOut int, w, fb []float32, keep []bool, storeAll bool, sign []float32, adam, tiled bool) *layer {
	v := newCSRView(nIn, nOut, keep, storeAll)
	n := len(v.col)
	ly := &layer{
		csrView:      v,
		colMajor:     newColMajor(&v, tiled),
		w:            v.gather(w, keep),
		fb:           v.gather(fb, keep),
		bias:         make([]float32, nOut),
		connState:    newConnState(&v, keep, storeAll, sign),
		optState:     newOptState(n, nOut, adam),
		layerScratch: newLayerScratch(n, nIn, nOut),
	}
	if adam && sign != nil {
		ly.synSign = make([]float32, n)
		for s, j := range ly.col {
			ly.synSign[s] = sign[j]
		}
	}
	if !adam && fb != nil && sign != nil && nIn <= 1<<16 {
		ly.colWord = make([]int32, n)
		for s, j := range ly.col {
			ly.colWord[s] = j | ly.signWord[j]<<16
		}
	}
	ly.syncT()
	return ly
}

// present returns the number of synapses of the layer that exist under the
// connectivity (the stored ones not flagged absent).
func (ly *layer) present() int {
	if ly.absent == nil {
		return len(ly.col)
	}
	n := 0
	for _, a := range ly.absent {
		if !a {
			n++
		}
	}
	return n
}

// indexTwin builds fbPos and gives fb a zero past its end.
func (ly *layer) indexTwin() {
	n := len(ly.fb)
	fb := make([]float32, n+1) // fb[n] = 0: the absent synapses
	copy(fb, ly.fb)
	ly.fb = fb[:n]
	ly.fbPos = make([]int32, ly.nOut*ly.nIn)
	for i := range ly.nOut {
		row := ly.fbPos[i*ly.nIn : (i+1)*ly.nIn]
		for j := range row {
			row[j] = int32(n)
		}
		for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
			row[ly.col[s]] = s
		}
	}
}

// syncT rewrites the column-order copy of the weights. A dense tiled
// layer (every controller layer) is a tile of 8 rows at a time, each a
// transpose (the scattered copy was a tenth of a deep controller run); the
// others go synapse by synapse.
func (ly *layer) syncT() {
	if ly.wT == nil {
		return // no copy kept (dropCopy)
	}
	if ly.tiled && ly.dense() {
		n := ly.tileLen
		for q := 0; q+n <= len(ly.pos); q += n {
			kernels.TransposeTile(ly.wT[q:q+n], ly.w[q:q+n], ly.nIn)
		}
		return
	}
	for s, k := range ly.pos {
		ly.wT[k] = ly.w[s]
	}
}
