package core

import (
	"math"
	"slices"
)

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
type layer struct {
	nIn, nOut int
	rowPtr    []int32  // len nOut+1; synapses of post i are rowPtr[i]:rowPtr[i+1]
	col       []int32  // pre unit of each stored synapse
	col16     []uint16 // the same in 16 bits (n_in <= 65536), for W^1's row step
	// Column view for the forward pass: stored synapses of pre j are
	// colSyn[colPtr[j]:colPtr[j+1]], with post units colPost.
	colPtr, colSyn, colPost []int32
	// wT holds W^l densely in column order (0 for absent synapses), for
	// the vector forward product; pos[s] is stored synapse s's place in it.
	// Untiled, wT[j*ldT+i] = W_ij, with ldT = nOut padded so that columns
	// do not start a power-of-two distance apart (an update writes one
	// row, i.e. one element of every column, and at a 2 KiB stride those
	// fall into two sets of the L1 cache and evict each other). Tiled (every
	// layer whose width is a multiple of 8), rows come in tiles of 8: wT[(i/8)*nIn*8 + j*8 + i%8] = W_ij, so the 8
	// rows of a tile (25 KB for W^1 on MNIST) stay in L1 both while an update
	// writes them row by row and while the forward pass reads them for
	// every sample of a batch.
	wT    []float32
	ldT   int
	tiled bool
	pos   []int32

	w, fb []float32 // W^l and its twin B^{l-1} (nil for l = 1)
	// fbPos maps (i, j) to the index in fb of synapse (i, j), or to
	// len(fb), where fb's backing array holds a zero that nothing writes,
	// when the synapse is absent (n_out x n_in, row-major; nil but for the
	// layers between hidden layers). The sweep reads the twin through it at
	// the active units only. Connectivity is fixed, so it never changes.
	fbPos  []int32
	m1, m2 []float32 // velocity (sgd) or Adam moments (m2 nil for sgd)
	absent []bool    // connectivity-absent stored synapse (controller only)
	// absentWord is absent as all-ones words (ctrlDecayRow's re-mask);
	// nil with absent.
	absentWord []int32
	sign       []float32 // Dale sign of each pre unit (nil for l = 1)
	// fbNoDale exempts the twin from the Dale clamp (no_dale_fb).
	fbNoDale bool

	bias, bm1, bm2 []float32
	g, gb          []float32 // gradient scratch
	// The plasticity signal of one call as per-row terms (CSR over posts):
	// pre-row offset and e/n, ascending in the sample.
	termPtr, termFill, termOff []int32
	termCoef                   []float32
	gRow                       []float32 // one row's dense gradient
	zeroRow                    []float32 // all +0: the gradient of a silent row
	zeroWord, oneWord          []int32   // per pre unit: all 0, all 1
	frozenPre                  []int32   // per pre unit: 1 where awake (replay)
	// Per pre unit, sgdRowFB's flags: flagExc where excitatory, flagInh
	// where inhibitory (signWord), plus flagFrozen where awake in the
	// call's mask (flagPre).
	signWord, flagPre []int32
	// Anchor slow copies, cloned at the first waking call.
	wSlow, fbSlow, biasSlow []float32
	anchorLam, anchorMu     float32
	anchorFirst             bool
	// Adaptive decay state (layers >= 2).
	noBias  bool    // skip synapses: the bias belongs to W^l
	lastLam float64 // the controller's lambda of the last call
	uEMA    float64
	uSet    bool
	kpEff   float64
	kpEffOK bool
}

// net is the local learner's substrate.
type net struct {
	sizes []int // [d, h1, ..., C]
	L     int   // number of weight layers; hidden layers are 1..L-1
	k     []int // k-WTA winners per layer (index l, hidden only)
	lay   []*layer
	skip  []*layer    // skip[l]: S^l from layer l-2 (l >= 3 hidden), or nil
	types [][]float32 // cell type (+1 exc, -1 inh) per hidden layer l
	// Input offset o (the training set's per-pixel majority value, or 0) and
	// c = W^1 o, kept current after every update of W^1: the forward pass
	// computes W^1 x as c + W^1 (x - o), where x - o is sparse on MNIST.
	off    []float32
	c      []float32
	offIdx []int32     // j * n_1 for the inputs with o_j != 0
	offVal []float32   // o_j there
	ebar   [][]float32 // burst baseline per hidden layer
	kappa  float32
	t      int // update calls so far (Adam's shared step counter)
	// generalOnly disables the SGD fast path (tests compare the two).
	generalOnly bool
	sub         substrate  // substrate switches (all off by default)
	mode        localModes // the config's modes, resolved
}

// sheet returns the coordinates of n units on a side x side grid (hidden
// layers) or of an h x w image (input), in the unit square.
func sheet(n, h, w int) [][2]float64 {
	if h <= 0 || w <= 0 || h*w != n {
		side := int(math.Ceil(math.Sqrt(float64(n))))
		h, w = side, side
	}
	pos := make([][2]float64, n)
	for k := range n {
		y, x := k/w, k%w
		var fy, fx float64
		if h > 1 {
			fy = float64(y) / float64(h-1)
		}
		if w > 1 {
			fx = float64(x) / float64(w-1)
		}
		pos[k] = [2]float64{fy, fx}
	}
	return pos
}

// connMask draws the connectivity of an n_out x n_in matrix: round(density *
// n_out * n_in) synapses without replacement, with probability proportional
// to exp(-d/lambda) ("dist", Efraimidis-Spirakis keys log(u)/p) or uniformly
// ("random"). It returns a row-major keep mask.
func connMask(rng *RNG, pre, post [][2]float64, density, lambda float64, mode string) []bool {
	nIn, nOut := len(pre), len(post)
	total := nIn * nOut
	nKeep := int(math.RoundToEven(density * float64(total)))
	keep := make([]bool, total)
	if mode == "random" {
		for _, s := range rng.Perm(total)[:nKeep] {
			keep[s] = true
		}
		return keep
	}
	keys := make([]float64, total)
	for i := range nOut {
		for j := range nIn {
			dy, dx := post[i][0]-pre[j][0], post[i][1]-pre[j][1]
			p := math.Exp(-math.Sqrt(dy*dy+dx*dx) / lambda)
			keys[i*nIn+j] = math.Log(rng.Float64()) / p
		}
	}
	idx := make([]int32, total)
	for s := range idx {
		idx[s] = int32(s)
	}
	slices.SortFunc(idx, func(a, b int32) int {
		switch ka, kb := keys[a], keys[b]; {
		case ka > kb:
			return -1
		case ka < kb:
			return 1
		}
		return int(a - b)
	})
	for _, s := range idx[:nKeep] {
		keep[s] = true
	}
	return keep
}

// newNet builds and initialises the network in the reference's order:
// forward weights, feedback weights, cell types, Dale
// projection, connectivity masks, zero optimiser state.
func newNet(cfg *LocalConfig, d, classes, height, width int, rng *RNG) *net {
	sizes := append(append([]int{d}, cfg.Hidden...), classes)
	L := len(sizes) - 1
	nt := &net{sizes: sizes, L: L, k: make([]int, L+1), lay: make([]*layer, L+1), skip: make([]*layer, L+1),
		types: make([][]float32, L), ebar: make([][]float32, L), kappa: float32(cfg.Kappa), mode: cfg.modes()}
	for l := 1; l < L; l++ {
		nt.k[l] = cfg.kwtaK(l, sizes[l])
		nt.ebar[l] = make([]float32, sizes[l])
	}
	randn := func(n int, scale float64) []float32 {
		v := make([]float32, n)
		for i := range v {
			v[i] = float32(rng.NormFloat64() * scale)
		}
		return v
	}
	W := make([][]float32, L+1)
	for l := 1; l <= L; l++ {
		W[l] = randn(sizes[l]*sizes[l-1], 1/math.Sqrt(float64(sizes[l-1])))
	}
	B := make([][]float32, L+1) // B[l] is the twin of W[l], i.e. B^{l-1}
	for l := 2; l <= L; l++ {
		B[l] = randn(sizes[l]*sizes[l-1], 1/math.Sqrt(float64(sizes[l-1])))
	}
	// Skip weights S^l and twins Bs^l, l = 3..L-1 (deep nets with skip).
	S := make([][]float32, L+1)
	Bs := make([][]float32, L+1)
	if cfg.Skip {
		for l := 3; l < L; l++ {
			sc := 1 / math.Sqrt(float64(sizes[l-2]))
			S[l] = randn(sizes[l]*sizes[l-2], sc)
			Bs[l] = randn(sizes[l]*sizes[l-2], sc)
		}
	}
	// Cell types: +1 in the first round(ei_frac n) places, then a permutation.
	for l := 1; l < L; l++ {
		n := sizes[l]
		nExc := int(math.RoundToEven(cfg.EIFrac * float64(n)))
		base := make([]float32, n)
		for i := range base {
			base[i] = -1
			if i < nExc {
				base[i] = 1
			}
		}
		t := make([]float32, n)
		for i, p := range rng.Perm(n) {
			t[i] = base[p]
		}
		nt.types[l] = t
	}
	// Dale projection on W^l, l >= 2, and their twins (before the masks).
	// Under weight transport the feedback is W^l itself.
	for l := 2; l <= L && !cfg.NoDale; l++ {
		daleClamp(W[l], nt.types[l-1])
		if !cfg.NoDaleFB {
			daleClamp(B[l], nt.types[l-1])
		}
		if S[l] != nil {
			daleClamp(S[l], nt.types[l-2])
			daleClamp(Bs[l], nt.types[l-2])
		}
	}
	// Connectivity for W^l, l <= L-1 (the input layer included); the twin
	// B^{l-1} shares W^l's mask; the readout is dense.
	keep := make([][]bool, L+1)
	for l := 1; l < L; l++ {
		var pre [][2]float64
		if l == 1 {
			pre = sheet(d, height, width)
		} else {
			pre = sheet(sizes[l-1], 0, 0)
		}
		keep[l] = connMask(rng, pre, sheet(sizes[l], 0, 0), cfg.ConnDensity, cfg.ConnLambda, cfg.ConnMode)
	}
	for l := 1; l <= L; l++ {
		storeAll := cfg.KPAdapt > 0 && l >= 2
		var sign []float32
		if l >= 2 && !cfg.NoDale {
			sign = nt.types[l-1]
		}
		if cfg.Transport && B[l] != nil {
			copy(B[l], W[l])
		}
		nt.lay[l] = newLayer(sizes[l-1], sizes[l], W[l], B[l], keep[l], storeAll, sign, nt.mode.opt == optAdam, sizes[l]%tile == 0)
		nt.lay[l].fbNoDale = cfg.NoDaleFB
		if S[l] != nil {
			nt.skip[l] = newLayer(sizes[l-2], sizes[l], S[l], Bs[l], nil, false, nt.types[l-2], nt.mode.opt == optAdam, sizes[l]%tile == 0)
			nt.skip[l].noBias = true
		}
	}
	for l := 2; l < L; l++ {
		nt.lay[l].indexTwin()
	}
	nt.off = make([]float32, d)
	nt.c = make([]float32, sizes[1])
	return nt
}

// daleClamp applies W <- s * max(s * W, 0) column-wise on a row-major
// n_out x n_in matrix, with s the sign of each pre unit.
func daleClamp(w []float32, sign []float32) {
	n := len(sign)
	for s := range w {
		if x := w[s]; (sign[s%n] > 0 && x < 0) || (sign[s%n] < 0 && x > 0) {
			w[s] = 0
		}
	}
}

// tile is the number of rows per tile of a tiled wT.
const tile = 8

// colBase returns where row i starts in wT and the distance between its
// columns: W_ij is wT[base + j*stride].
func (ly *layer) colBase(i int) (base, stride int) {
	if ly.tiled {
		return (i/tile)*ly.nIn*tile + i%tile, tile
	}
	return i, ly.ldT
}

// paddedStride returns the column stride of wT for n rows: n, plus one
// cache line when n floats span a multiple of 256 bytes.
func paddedStride(n int) int {
	if n*4%256 == 0 {
		return n + 16
	}
	return n
}

func newLayer(nIn, nOut int, w, fb []float32, keep []bool, storeAll bool, sign []float32, adam, tiled bool) *layer {
	ly := &layer{nIn: nIn, nOut: nOut, sign: sign, rowPtr: make([]int32, nOut+1), tiled: tiled}
	for i := range nOut {
		for j := range nIn {
			s := i*nIn + j
			present := keep == nil || keep[s]
			if !present && !storeAll {
				continue
			}
			ly.col = append(ly.col, int32(j))
			wv := w[s]
			if !present {
				wv = 0
			}
			ly.w = append(ly.w, wv)
			if fb != nil {
				bv := fb[s]
				if !present {
					bv = 0
				}
				ly.fb = append(ly.fb, bv)
			}
			if storeAll {
				ly.absent = append(ly.absent, !present)
			}
		}
		ly.rowPtr[i+1] = int32(len(ly.col))
	}
	n := len(ly.col)
	if storeAll {
		ly.absentWord = make([]int32, n)
		for s, a := range ly.absent {
			if a {
				ly.absentWord[s] = -1
			}
		}
	}
	if nIn <= 1<<16 {
		ly.col16 = make([]uint16, n)
		for s, j := range ly.col {
			ly.col16[s] = uint16(j)
		}
	}
	ly.m1 = make([]float32, n)
	ly.g = make([]float32, n)
	ly.bias = make([]float32, nOut)
	ly.bm1 = make([]float32, nOut)
	ly.gb = make([]float32, nOut)
	ly.termPtr = make([]int32, nOut+1)
	ly.termFill = make([]int32, nOut)
	ly.gRow = make([]float32, nIn)
	ly.zeroRow = make([]float32, nIn)
	ly.zeroWord = make([]int32, nIn)
	ly.oneWord = make([]int32, nIn)
	for j := range ly.oneWord {
		ly.oneWord[j] = 1
	}
	ly.frozenPre = make([]int32, nIn)
	ly.flagPre = make([]int32, nIn)
	ly.signWord = make([]int32, nIn)
	for j, sg := range sign {
		switch {
		case sg > 0:
			ly.signWord[j] = flagExc
		case sg < 0:
			ly.signWord[j] = flagInh
		}
	}
	if adam {
		ly.m2 = make([]float32, n)
		ly.bm2 = make([]float32, nOut)
	}
	// Column view.
	ly.colPtr = make([]int32, nIn+1)
	for _, j := range ly.col {
		ly.colPtr[j+1]++
	}
	for j := range nIn {
		ly.colPtr[j+1] += ly.colPtr[j]
	}
	ly.colSyn = make([]int32, n)
	ly.colPost = make([]int32, n)
	ly.pos = make([]int32, n)
	ly.ldT = paddedStride(nOut)
	if tiled {
		ly.ldT = 0
		ly.wT = make([]float32, nIn*nOut)
	} else {
		ly.wT = make([]float32, nIn*ly.ldT)
	}
	fill := slices.Clone(ly.colPtr[:nIn])
	for i := range nOut {
		for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
			j := ly.col[s]
			ly.colSyn[fill[j]] = s
			ly.colPost[fill[j]] = int32(i)
			base, stride := ly.colBase(i)
			ly.pos[s] = int32(base + int(j)*stride)
			fill[j]++
		}
	}
	ly.syncT()
	return ly
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

// setOffset sets the input offset used by the forward pass to o and
// recomputes c = W^1 o.
func (nt *net) setOffset(o []float32) {
	copy(nt.off, o)
	nt.offIdx, nt.offVal = nt.offIdx[:0], nt.offVal[:0]
	_, stride := nt.lay[1].colBase(0)
	for j, v := range nt.off {
		if v != 0 {
			nt.offIdx = append(nt.offIdx, int32(j*stride))
			nt.offVal = append(nt.offVal, v)
		}
	}
	nt.refreshC()
}

// refreshC recomputes c = W^1 o with the vector kernel. Each c_i sums
// o_j W_ij in ascending j, the order of row i's stored synapses; the terms
// left out (o_j = 0 or W_ij absent) are exact zeros.
func (nt *net) refreshC() {
	clear(nt.c)
	ly := nt.lay[1]
	if !ly.tiled {
		addRows(nt.c, nt.offVal, nt.offIdx, ly.wT)
		return
	}
	addTiles(nt.c, nt.offVal, nt.offIdx, ly.wT, ly.nIn*tile)
}

// inputOffset returns, per input column, the value held by more than half of
// the rows of ds (0 when no value is), found with a Boyer-Moore majority vote
// and a counting pass. On standardised MNIST it is the background value
// -mu/sigma, so x - offset has about a fifth of its entries non-zero.
func inputOffset(ds *Dataset) []float32 {
	o := make([]float32, ds.D)
	cand := make([]float32, ds.D)
	cnt := make([]int, ds.D)
	for i := range ds.N {
		row := ds.Row(i)
		for j, v := range row {
			switch {
			case cnt[j] == 0:
				cand[j], cnt[j] = v, 1
			case cand[j] == v:
				cnt[j]++
			default:
				cnt[j]--
			}
		}
	}
	clear(cnt)
	for i := range ds.N {
		for j, v := range ds.Row(i) {
			if v == cand[j] {
				cnt[j]++
			}
		}
	}
	for j := range o {
		if 2*cnt[j] > ds.N {
			o[j] = cand[j]
		}
	}
	return o
}
