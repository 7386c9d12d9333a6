package core

import (
	"math"

	"repro/internal/kernels"
)

// pass holds one batch's forward activities and top-down errors.
type pass struct {
	n   int
	cap int
	x   []float32 // n x d input rows (standardised)
	y   []int32
	// Sparse x - offset per sample: entries rPtr[b]:rPtr[b+1] of rIdx/rVal.
	rPtr []int32
	rIdx []int32
	rVal []float32
	a    [][]float32 // a[l], hidden l: n x n_l post-suppression post-k-WTA rates
	// Active (non-zero) units of hidden layer l on sample b:
	// act[l][actPtr[l][b]:actPtr[l][b+1]], ascending.
	act    [][]int32
	actPtr [][]int32
	z      []float32   // n x C readout pre-activation (the network output)
	eps    [][]float32 // eps[l], l = 1..L: n x n_l sweep errors (0 off the active set)
	th     [][]float32 // kappa tanh(eps/kappa), same layout as eps
	zbuf   []float32
	z1     []float32 // n x n_1 layer-1 drives of the batch
	rOff   []int32   // wT offsets of the sparse input entries
	cur    []int32   // drive1's scratch: per sample, the next entry to add
	// drive1Rows' scratch: a block's x - o by column and its drives by
	// row, 16 lanes each.
	xT, accT []float32
	// driveBatch's drives of the batch (n x n_l) and activeEntries' lists.
	zl     []float32
	lOff   []int32
	lVal   []float32
	kbuf   []float32
	offBuf []int32
	valBuf []float32
	tmp    []float32
	gain   []float32 // 1 - s of the layer being run
	ones   []float32 // the gain without suppression
	// train marks a training pass (spike-count noise applies); v holds the
	// hidden value nodes of the relaxation (nil until it runs).
	train bool
	v     [][]float32
}

func newPass(nt *net, capacity int) *pass {
	L := nt.L
	p := &pass{cap: capacity,
		x: make([]float32, capacity*nt.sizes[0]), y: make([]int32, capacity),
		z1:   make([]float32, capacity*nt.sizes[1]),
		rPtr: make([]int32, capacity+1),
		cur:  make([]int32, capacity),
		a:    make([][]float32, L), act: make([][]int32, L), actPtr: make([][]int32, L),
		z:   make([]float32, capacity*nt.sizes[L]),
		eps: make([][]float32, L+1), th: make([][]float32, L+1),
	}
	maxW := 0
	for l := 1; l <= L; l++ {
		n := nt.sizes[l]
		maxW = max(maxW, n)
		p.eps[l] = make([]float32, capacity*n)
		p.th[l] = make([]float32, capacity*n)
		if l < L {
			p.a[l] = make([]float32, capacity*n)
			p.act[l] = make([]int32, 0, capacity*n)
			p.actPtr[l] = make([]int32, capacity+1)
		}
	}
	maxIn := 0
	for _, n := range nt.sizes {
		maxIn = max(maxIn, n)
	}
	p.offBuf = make([]int32, maxIn)
	p.valBuf = make([]float32, maxIn)
	p.zbuf = make([]float32, maxW)
	p.zl = make([]float32, capacity*maxW)
	p.kbuf = make([]float32, 3*maxW) // KthLargest's vector selection
	p.tmp = make([]float32, maxW)
	p.gain = make([]float32, maxW)
	p.ones = make([]float32, maxW)
	for i := range p.ones {
		p.ones[i] = 1
	}
	return p
}

// load copies rows idx of ds into the pass.
func (p *pass) load(ds *Dataset, idx []int) {
	p.n = len(idx)
	d := ds.D
	for b, i := range idx {
		copy(p.x[b*d:(b+1)*d], ds.Row(i))
		p.y[b] = ds.Y[i]
	}
}

// activeOf returns the active units of hidden layer l on sample b.
func (p *pass) activeOf(l, b int) []int32 {
	return p.act[l][p.actPtr[l][b]:p.actPtr[l][b+1]]
}

// forward runs the batch through the network under suppression sup (sup[l]
// per hidden unit in [0, 1], nil for none): z = W a + b, a = kWTA(relu(z) *
// (1 - s)); the readout is the linear z^L.
func (nt *net) forward(p *pass, sup [][]float32) {
	d := nt.sizes[0]
	// Sparse input relative to the offset.
	if need := p.n * d; cap(p.rIdx) < need {
		p.rIdx = make([]int32, need)
		p.rVal = make([]float32, need)
	}
	p.rIdx, p.rVal = p.rIdx[:cap(p.rIdx)], p.rVal[:cap(p.rVal)]
	nz := 0
	for b := range p.n {
		p.rPtr[b] = int32(nz)
		nz += kernels.SparseDiff(p.x[b*d:(b+1)*d], nt.off, p.rVal[nz:], p.rIdx[nz:])
	}
	p.rPtr[p.n] = int32(nz)
	p.rIdx, p.rVal = p.rIdx[:nz], p.rVal[:nz]
	nt.drive1(p)

	for l := 1; l <= nt.L; l++ {
		ly := nt.lay[l]
		nOut := ly.nOut
		z := p.zbuf[:nOut]
		// The suppression as a gain 1 - s per unit (1 without suppression).
		var gain []float32
		if l < nt.L {
			p.act[l] = p.act[l][:0]
			gain = p.ones[:nOut]
			if sup != nil {
				gain = p.gain[:nOut]
				for i, s := range sup[l] {
					gain[i] = 1 - s
				}
			}
		}
		// A tiled hidden layer's drives from the layer below, for the whole
		// batch a strip at a time (as drive1): the same sums as scatter's.
		batch := l > 1 && l < nt.L && ly.tiled && nOut%64 == 0
		if batch {
			nt.driveBatch(p, l)
		}
		for b := range p.n {
			switch {
			case l == 1:
				copy(z, p.z1[b*nOut:(b+1)*nOut])
			case batch:
				copy(z, p.zl[b*nOut:(b+1)*nOut])
			default:
				copy(z, ly.bias)
				ly.scatter(z, p.activeOf(l-1, b), nil, p.a[l-1][b*ly.nIn:(b+1)*ly.nIn], p.offBuf, p.valBuf)
			}
			if sk := nt.skip[l]; sk != nil && !(batch && sk.tiled) {
				sk.scatter(z, p.activeOf(l-2, b), nil, p.a[l-2][b*sk.nIn:(b+1)*sk.nIn], p.offBuf, p.valBuf)
			}
			if l == nt.L {
				copy(p.z[b*nOut:(b+1)*nOut], z)
				continue
			}
			nt.activate(p, l, b, z, gain)
		}
	}
}

// activate sets sample b's rates of hidden layer l from its drive z under
// the suppression gain, a = kWTA(relu(z) * gain) (with spike-count noise on
// the rate in a training pass under spike_train), and appends its active
// units to p.act[l].
func (nt *net) activate(p *pass, l, b int, z, gain []float32) {
	nOut := nt.sizes[l]
	a := p.a[l][b*nOut : (b+1)*nOut]
	if nt.sub.spikeTrain > 0 && p.train {
		nt.spikeRate(a, z, gain)
	} else {
		kernels.ReluGain(a, z, gain)
	}
	thr := kwtaThreshold(a, nt.k[l], p.kbuf)
	start := len(p.act[l])
	p.actPtr[l][b] = int32(start)
	cnt := kernels.ThresholdList(a, thr, p.act[l][start:start+nOut])
	p.act[l] = p.act[l][:start+cnt]
	p.actPtr[l][b+1] = int32(start + cnt)
}

// drive1 computes layer 1's drives of the batch into p.z1: per sample, z =
// b + c + W^1 (x - o) over the sparse entries of x - o. It runs strip by
// strip of 64 of W^1's rows across the batch, so that a strip (200 KB on
// MNIST) is read from cache by every sample, and by c's recomputation
// first when an update made c stale; per element the terms are added in
// the same order as one sample at a time. On a tiled W^1 the whole batch
// goes through a strip's columns a block at a time (kernels.AddTilesBatch), so the
// samples read the block from L1 rather than the strip from L2.
func (nt *net) drive1(p *pass) {
	if nt.rowFwd {
		nt.drive1Rows(p)
		return
	}
	ly := nt.lay[1]
	n1 := ly.nOut
	_, stride := ly.colBase(0)
	z1 := p.z1[:p.n*n1]
	p.rOff = p.rOff[:0]
	for _, j := range p.rIdx {
		p.rOff = append(p.rOff, j*int32(stride))
	}
	const strip = 64
	ts := ly.nIn * tile
	for s0 := 0; s0 < n1; s0 += strip {
		s1 := min(s0+strip, n1)
		if nt.staleC {
			nt.refreshC(s0, s1)
		}
		c := nt.c[s0:s1]
		for b := range p.n {
			z := z1[b*n1+s0 : b*n1+s1]
			copy(z, ly.bias[s0:s1])
			for i := range z {
				z[i] += c[i]
			}
		}
		if ly.tiled && s1-s0 == strip {
			kernels.AddTilesBatch(z1[s0:], n1, p.rVal, p.rOff, p.rPtr[:p.n+1], p.cur[:p.n], ly.wT[s0/tile*ts:], ts)
			continue
		}
		for b := range p.n {
			z := z1[b*n1+s0 : b*n1+s1]
			lo, hi := p.rPtr[b], p.rPtr[b+1]
			if ly.tiled {
				kernels.AddTiles(z, p.rVal[lo:hi], p.rOff[lo:hi], ly.wT[s0/tile*ts:], ts)
			} else {
				kernels.AddRows(z, p.rVal[lo:hi], p.rOff[lo:hi], ly.wT[s0:])
			}
		}
	}
	nt.staleC = false
}

// driveBatch computes hidden layer l's drives from layer l-1 (l >= 2, W^l
// tiled, n_l a multiple of 64) for the whole batch into p.zl: per sample,
// z = b + W^l a^{l-1} over the active units of l-1, then (when tiled) the
// skip synapses' S^l a^{l-2}, which is what scatter computes for one sample
// and its caller adds, term for term in the same order; the batch goes
// through each strip of 64 rows with kernels.AddTilesBatch.
func (nt *net) driveBatch(p *pass, l int) {
	ly := nt.lay[l]
	nOut := ly.nOut
	zl := p.zl[:p.n*nOut]
	for b := range p.n {
		copy(zl[b*nOut:(b+1)*nOut], ly.bias)
	}
	add := func(w *layer, from int) {
		off, val, ptr := p.activeEntries(from, w.nIn)
		ts := w.nIn * tile
		for s0 := 0; s0 < nOut; s0 += 64 {
			kernels.AddTilesBatch(zl[s0:], nOut, val, off, ptr, p.cur[:p.n], w.wT[s0/tile*ts:], ts)
		}
	}
	add(ly, l-1)
	if sk := nt.skip[l]; sk != nil && sk.tiled {
		add(sk, l-2)
	}
}

// activeEntries lists hidden layer l's active units (n_l = n of them) of
// every sample as kernels.AddTilesBatch's entries: their column offsets in a tiled
// matrix and their rates, sample b's at ptr[b]:ptr[b+1], ascending.
func (p *pass) activeEntries(l, n int) (off []int32, val []float32, ptr []int32) {
	act := p.act[l]
	ptr = p.actPtr[l][:p.n+1]
	if cap(p.lOff) < len(act) {
		p.lOff = make([]int32, len(act), cap(act))
		p.lVal = make([]float32, len(act), cap(act))
	}
	off, val = p.lOff[:len(act)], p.lVal[:len(act)]
	for b := range p.n {
		a := p.a[l][b*n : (b+1)*n]
		for t := ptr[b]; t < ptr[b+1]; t++ {
			j := act[t]
			off[t] = j * tile
			val[t] = a[j]
		}
	}
	return off, val, ptr
}

// scatter adds the contribution of the listed pre units to z: for each pre
// j = idx[t] with value val[t] (or dense[j] when val is nil), z += value *
// column j of W^l. Per element of z the terms are added in ascending t.
func (ly *layer) scatter(z []float32, idx []int32, val []float32, dense []float32, offBuf []int32, valBuf []float32) {
	off := offBuf[:len(idx)]
	v := valBuf[:len(idx)]
	_, stride := ly.colBase(0)
	for t, j := range idx {
		off[t] = j * int32(stride)
		if val != nil {
			v[t] = val[t]
		} else {
			v[t] = dense[j]
		}
	}
	if ly.tiled {
		kernels.AddTiles(z, v, off, ly.wT, ly.nIn*tile)
		return
	}
	kernels.AddRows(z, v, off, ly.wT)
}

// sweep computes the top-down errors: eps^L = y - z^L,
// eps^l = 1[a^l > 0] (kappa tanh(eps^{l+1}/kappa) [gated by 1[a^{l+1} > 0]
// for hidden l+1]) B^l. th holds kappa tanh(eps/kappa) for every layer.
func (nt *net) sweep(p *pass, tgtScale float32) {
	L := nt.L
	C := nt.sizes[L]
	kappa := nt.kappa
	bound := func(e float32) float32 {
		return kappa * float32(math.Tanh(float64(e/kappa)))
	}
	if kappa == 1 {
		// The paper's kappa: e/1 and 1*t are exact, so skip them.
		bound = func(e float32) float32 { return float32(math.Tanh(float64(e))) }
	}
	for b := range p.n {
		eps := p.eps[L][b*C : (b+1)*C]
		th := p.th[L][b*C : (b+1)*C]
		z := p.z[b*C : (b+1)*C]
		for i := range eps {
			var t float32
			if int32(i) == p.y[b] {
				t = tgtScale
			}
			eps[i] = t - z[i]
			th[i] = bound(eps[i])
		}
		for l := L - 1; l >= 1; l-- {
			nt.sweepLayer(p, b, l, bound)
		}
	}
}

// sweepLayer computes eps^l and th^l of sample b of p from the layers
// above: the bounded errors of layer l+1 through its twin (and of layer
// l+2 through the skip twin), kept at the active units of l.
func (nt *net) sweepLayer(p *pass, b, l int, bound func(float32) float32) {
	L := nt.L
	n := nt.sizes[l]
	up := nt.lay[l+1]
	upTh := p.th[l+1][b*up.nOut : (b+1)*up.nOut]
	tmp := p.tmp[:n]
	clear(tmp)
	accum := func(i int) {
		u := upTh[i]
		if u == 0 {
			return
		}
		lo, hi := up.rowPtr[i], up.rowPtr[i+1]
		fb, col := up.fb[lo:hi], up.col[lo:hi]
		for s, j := range col {
			tmp[j] += u * fb[s]
		}
	}
	if l+1 == L && len(up.col) == up.nOut*up.nIn {
		// Dense readout twin: row i starts at rowPtr[i]; the vector
		// kernel adds the rows in ascending i, as accum does.
		kernels.AddRows(tmp, upTh, up.rowPtr[:up.nOut], up.fb)
	} else if l+1 == L {
		for i := range upTh {
			accum(i)
		}
	} else if up.fbPos != nil && (l+2 >= L || nt.skip[l+2] == nil) {
		nt.sweepGather(p, b, l, bound)
		return
	} else if up.dense() {
		// th^{l+1} is zero off the active set: the burst gate.
		// Dense rows (the controller's layers): the vector kernel
		// adds them in ascending i, as accum does.
		us, offs := p.valBuf[:0], p.offBuf[:0]
		for _, i := range p.activeOf(l+1, b) {
			if u := upTh[i]; u != 0 {
				us = append(us, u)
				offs = append(offs, up.rowPtr[i])
			}
		}
		kernels.AddRows(tmp, us, offs, up.fb)
	} else {
		for _, i := range p.activeOf(l+1, b) {
			accum(int(i))
		}
	}
	// Skip path: the gated burst of layer l+2 through Bs^{l+2}
	// (stored densely), in ascending i.
	if l+2 < L && nt.skip[l+2] != nil {
		sk := nt.skip[l+2]
		th2 := p.th[l+2][b*sk.nOut : (b+1)*sk.nOut]
		us, offs := p.valBuf[:0], p.offBuf[:0]
		for _, i := range p.activeOf(l+2, b) {
			us = append(us, th2[i])
			offs = append(offs, sk.rowPtr[i])
		}
		kernels.AddRows(tmp, us, offs, sk.fb)
	}
	e := p.eps[l][b*n : (b+1)*n]
	t := p.th[l][b*n : (b+1)*n]
	clear(e)
	clear(t)
	for _, j := range p.activeOf(l, b) {
		e[j] = tmp[j]
		t[j] = bound(tmp[j])
	}
}

// twinAtActive sets acc[k], for each active unit act[k] of the layer below
// up, to sum_r us[r] * fb[offs[r] + act[k]]: rows offs of up's twin (row i
// at i*nIn) weighted by us, read at the active columns, r ascending. A
// sparse twin reads them through its index map (kernels.GatherRows: two dependent
// gathers per 8 entries). A dense twin with a thirty-second or more of its
// columns active takes every column with the vector product over whole
// rows into scratch and picks the active ones: more entries, none
// gathered, 1.7-17x faster from 5% to 50% active at widths 256 and 512
// (BenchmarkTwinAtActive), even at 2%, 2-3x slower at 1%. Both add the
// same terms in the same order from +0, so the bits are the same.
func twinAtActive(acc, us []float32, offs []int32, up *layer, act []int32, scratch []float32) {
	if up.dense() && len(act)*32 >= up.nIn {
		full := scratch[:up.nIn]
		clear(full)
		kernels.AddRows(full, us, offs, up.fb)
		for k, j := range act {
			acc[k] = full[j]
		}
		return
	}
	clear(acc)
	kernels.GatherRows(acc, us, offs, up.fbPos, up.fb[:len(up.fb)+1], act)
}

// sweepGather is sweepLayer between hidden layers without a skip path:
// only the active units of layer l need their sum, so each gathers its
// column of the twin over the active units of l+1, ascending as accum
// adds them (an absent synapse reads an exact zero).
func (nt *net) sweepGather(p *pass, b, l int, bound func(float32) float32) {
	n := nt.sizes[l]
	up := nt.lay[l+1]
	upTh := p.th[l+1][b*up.nOut : (b+1)*up.nOut]
	act := p.activeOf(l, b)
	acc := p.tmp[:len(act)]
	us, offs := p.valBuf[:0], p.offBuf[:0]
	for _, i := range p.activeOf(l+1, b) {
		if u := upTh[i]; u != 0 {
			us = append(us, u)
			offs = append(offs, i*int32(up.nIn))
		}
	}
	twinAtActive(acc, us, offs, up, act, p.zbuf)
	e := p.eps[l][b*n : (b+1)*n]
	t := p.th[l][b*n : (b+1)*n]
	clear(e)
	clear(t)
	for jj, j := range act {
		e[j] = acc[jj]
		t[j] = bound(acc[jj])
	}
}

// predict writes the argmax of each row of p.z (first maximum) to dst.
func (nt *net) predict(p *pass, dst []int32) {
	C := nt.sizes[nt.L]
	for b := range p.n {
		z := p.z[b*C : (b+1)*C]
		best := 0
		for i, v := range z {
			if v > z[best] {
				best = i
			}
		}
		dst[b] = int32(best)
	}
}
