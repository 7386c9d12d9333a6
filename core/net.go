package core

import (
	"math"
	"slices"

	"repro/internal/kernels"
)

// net is the local learner's substrate.
type net struct {
	sizes []int // [d, h1, ..., C]
	L     int   // number of weight layers; hidden layers are 1..L-1
	k     []int // k-WTA winners per layer (index l, hidden only)
	lay   []*layer
	skip  []*layer    // skip[l]: S^l from layer l-2 (l >= 3 hidden), or nil
	types [][]float32 // cell type (+1 exc, -1 inh) per hidden layer l
	// Input offset o (the training set's per-pixel majority value, or 0) and
	// c = W^1 o: the forward pass computes W^1 x as c + W^1 (x - o), where
	// x - o is sparse on MNIST. An update of W^1 marks c stale (staleC);
	// the next forward pass recomputes it strip by strip of W^1's rows, as
	// it reads each strip for the batch anyway.
	off    []float32
	c      []float32
	staleC bool
	// rowFwd: W^1's forward product reads its row-order weights and W^1
	// keeps no column copy (useRowForward).
	rowFwd bool
	offIdx []int32   // j * n_1 for the inputs with o_j != 0
	offVal []float32 // o_j there
	// offPlusZero: every o_j is +0, so x - o is x to the bit (-0 - -0
	// would be +0), and drive1Rows can move the inputs instead.
	offPlusZero bool
	ebar        [][]float32 // burst baseline per hidden layer
	kappa       float32
	t           int // update calls so far (Adam's shared step counter)
	// generalOnly sends every update call to the general path (no fast
	// path of fastpath.go) and decayRows to its scalar loop: tests compare
	// the two.
	generalOnly bool
	// pathCalls counts the layer update calls per entry of fastPaths, and
	// at numFastPaths those of the general path (a diagnostic: tests read
	// which paths a configuration takes).
	pathCalls [numFastPaths + 1]int
	sub       substrate  // substrate switches (all off by default)
	mode      localModes // the config's modes, resolved
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
	keepLargest(keep, keys, nKeep)
	return keep
}

// keepLargest marks in keep the n largest keys, the lower index first
// among equal keys: the first n of the indices sorted by key descending,
// then index ascending. Only the set matters, so it selects the n-th
// largest value t (quickselect on a copy of the keys, linear time, where
// sorting 400,000 indices through a comparison function took a good part
// of a short run) and takes every key above t and, in index order, as many
// equal to t as n leaves. The keys are never NaN (log(u)/p with u in
// [0, 1) and p >= 0 gives a number or -Inf).
func keepLargest(keep []bool, keys []float64, n int) {
	if n <= 0 {
		return
	}
	t := selectKth(slices.Clone(keys), n)
	equal := n // keys equal to t to take: n less those above t
	for _, k := range keys {
		if k > t {
			equal--
		}
	}
	for s, k := range keys {
		switch {
		case k > t:
			keep[s] = true
		case k == t && equal > 0:
			keep[s] = true
			equal--
		}
	}
}

// newNet builds and initialises the network in the reference's order:
// forward weights, feedback weights, cell types, Dale
// projection, connectivity masks, zero optimiser state.
func newNet(cfg *LocalConfig, d, classes, height, width int, rng *RNG) *net {
	sizes := append(append([]int{d}, cfg.Hidden...), classes)
	iw := drawWeights(sizes, cfg.Skip, rng)
	types := drawCellTypes(sizes, cfg.EIFrac, rng)
	if !cfg.NoDale {
		iw.daleProject(types, cfg.NoDaleFB)
	}
	keep := drawConnectivity(cfg, sizes, height, width, rng)
	return buildNet(cfg, sizes, iw, types, keep)
}

// buildNet assembles a net of the given sizes from its (Dale-projected)
// matrices iw, the cell types of its hidden layers and the keep masks of
// W^l, l <= L-1 (nil: dense), with zero optimiser state.
func buildNet(cfg *LocalConfig, sizes []int, iw initialWeights, types [][]float32, keep [][]bool) *net {
	L := len(sizes) - 1
	nt := &net{sizes: sizes, L: L, k: make([]int, L+1), lay: make([]*layer, L+1), skip: make([]*layer, L+1),
		ebar: make([][]float32, L), kappa: float32(cfg.Kappa), mode: cfg.modes(), types: types}
	for l := 1; l < L; l++ {
		nt.k[l] = cfg.kwtaK(l, sizes[l])
		nt.ebar[l] = make([]float32, sizes[l])
	}
	W, B, S, Bs := iw.W, iw.B, iw.S, iw.Bs
	for l := 1; l <= L; l++ {
		storeAll := cfg.KPAdapt > 0 && l >= 2
		var sign []float32
		if l >= 2 && !cfg.NoDale {
			sign = nt.types[l-1]
		}
		// Under weight transport the feedback is W^l itself.
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
	nt.off = make([]float32, sizes[0])
	nt.c = make([]float32, sizes[1])
	return nt
}

// initialWeights are the dense row-major initial matrices of a net, indexed
// by the layer l they feed: W[l] (l = 1..L), its twin B[l], i.e. B^{l-1}
// (l >= 2), and with skip connections S[l] and its twin Bs[l] from layer
// l-2 (l = 3..L-1); nil where a layer has none.
type initialWeights struct {
	W, B, S, Bs [][]float32
}

// drawWeights draws the initial matrices from N(0, 1/n_in), in the
// reference's order: every W^l, then every twin, then the skip pairs.
func drawWeights(sizes []int, skip bool, rng *RNG) initialWeights {
	L := len(sizes) - 1
	iw := initialWeights{W: make([][]float32, L+1), B: make([][]float32, L+1), S: make([][]float32, L+1), Bs: make([][]float32, L+1)}
	for l := 1; l <= L; l++ {
		iw.W[l] = randn(rng, sizes[l]*sizes[l-1], 1/math.Sqrt(float64(sizes[l-1])))
	}
	for l := 2; l <= L; l++ {
		iw.B[l] = randn(rng, sizes[l]*sizes[l-1], 1/math.Sqrt(float64(sizes[l-1])))
	}
	if skip {
		for l := 3; l < L; l++ {
			sc := 1 / math.Sqrt(float64(sizes[l-2]))
			iw.S[l] = randn(rng, sizes[l]*sizes[l-2], sc)
			iw.Bs[l] = randn(rng, sizes[l]*sizes[l-2], sc)
		}
	}
	return iw
}

// randn returns n draws of N(0, scale^2) as float32.
func randn(rng *RNG, n int, scale float64) []float32 {
	v := make([]float32, n)
	for i := range v {
		v[i] = float32(rng.NormFloat64() * scale)
	}
	return v
}

// drawCellTypes returns the cell type (+1 excitatory, -1 inhibitory) of
// every unit of each hidden layer l: +1 in the first round(eiFrac n) places,
// then a random permutation.
func drawCellTypes(sizes []int, eiFrac float64, rng *RNG) [][]float32 {
	L := len(sizes) - 1
	types := make([][]float32, L)
	for l := 1; l < L; l++ {
		n := sizes[l]
		nExc := int(math.RoundToEven(eiFrac * float64(n)))
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
		types[l] = t
	}
	return types
}

// daleProject clamps W^l, l >= 2, the twins (unless noDaleFB) and the skip
// pairs to the sign of their pre units, before the connectivity masks.
func (iw *initialWeights) daleProject(types [][]float32, noDaleFB bool) {
	for l := 2; l < len(iw.W); l++ {
		daleClamp(iw.W[l], types[l-1])
		if !noDaleFB {
			daleClamp(iw.B[l], types[l-1])
		}
		if iw.S[l] != nil {
			daleClamp(iw.S[l], types[l-2])
			daleClamp(iw.Bs[l], types[l-2])
		}
	}
}

// drawConnectivity draws the keep masks of W^l, l <= L-1 (the input layer
// included); the twin B^{l-1} shares W^l's mask; the readout (keep[L] nil)
// is dense.
func drawConnectivity(cfg *LocalConfig, sizes []int, height, width int, rng *RNG) [][]bool {
	L := len(sizes) - 1
	keep := make([][]bool, L+1)
	for l := 1; l < L; l++ {
		var pre [][2]float64
		if l == 1 {
			pre = sheet(sizes[0], height, width)
		} else {
			pre = sheet(sizes[l-1], 0, 0)
		}
		keep[l] = connMask(rng, pre, sheet(sizes[l], 0, 0), cfg.ConnDensity, cfg.ConnLambda, cfg.ConnMode)
	}
	return keep
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

// setOffset sets the input offset used by the forward pass to o and
// recomputes c = W^1 o.
func (nt *net) setOffset(o []float32) {
	copy(nt.off, o)
	nt.offIdx, nt.offVal = nt.offIdx[:0], nt.offVal[:0]
	nt.offPlusZero = true
	_, stride := nt.lay[1].colBase(0)
	for j, v := range nt.off {
		if math.Float32bits(v) != 0 {
			nt.offPlusZero = false
		}
		if v != 0 {
			nt.offIdx = append(nt.offIdx, int32(j*stride))
			nt.offVal = append(nt.offVal, v)
		}
	}
	nt.staleC = true
}

// refreshC recomputes c_i = (W^1 o)_i for rows i in [s0, s1) with the
// vector kernel (tiled, s0 and s1 are multiples of 8 or s1 = n_1). Each
// c_i sums o_j W_ij in ascending j, the order of row i's stored synapses;
// the terms left out (o_j = 0 or W_ij absent) are exact zeros. Per element
// the sum does not depend on the rows computed with it.
func (nt *net) refreshC(s0, s1 int) {
	if nt.rowFwd {
		nt.refreshCRows(s0, s1)
		return
	}
	c := nt.c[s0:s1]
	clear(c)
	ly := nt.lay[1]
	if !ly.tiled {
		kernels.AddRows(c, nt.offVal, nt.offIdx, ly.wT[s0:])
		return
	}
	ts := ly.nIn * tile
	kernels.AddTiles(c, nt.offVal, nt.offIdx, ly.wT[s0/tile*ts:], ts)
}

// InputOffset returns, per input column, the value held by more than half of
// the rows of ds (0 when no value is), found with a Boyer-Moore majority vote
// and a counting pass, and how many entries of ds equal their column's
// offset (counted in the same pass). On standardised MNIST it is the
// background value -mu/sigma, so x - offset has about a quarter of its
// entries non-zero (0.26 on the held-out stream).
func InputOffset(ds *Dataset) (o []float32, matching int) {
	o = make([]float32, ds.D)
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
	zeros := make([]int, ds.D) // where no value is a majority, the offset is 0
	for i := range ds.N {
		for j, v := range ds.Row(i) {
			if v == cand[j] {
				cnt[j]++
			}
			if v == 0 {
				zeros[j]++
			}
		}
	}
	for j := range o {
		if 2*cnt[j] > ds.N {
			o[j] = cand[j]
			matching += cnt[j]
		} else {
			matching += zeros[j]
		}
	}
	return o, matching
}
