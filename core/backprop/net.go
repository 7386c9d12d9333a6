package backprop

import (
	"math"

	"repro/core"
	"repro/internal/kernels"
)

// Net is a fully connected network: ReLU hidden layers (k-WTA when KFrac >
// 0), a linear readout. All weights and biases live in Params; W and B are
// views into it. W[l] is Sizes[l] x Sizes[l+1], row-major and pre-major:
// W[l][j*Sizes[l+1]+i] is the synapse from unit j of layer l to unit i of
// layer l+1 (PyTorch's weight[i, j]). B[l] has Sizes[l+1] entries.
//
// A Net is not safe for concurrent use while it is being trained.
type Net struct {
	Sizes  []int   // input, hidden..., output widths
	KFrac  float64 // k-WTA active fraction of the hidden layers; 0: plain ReLU
	Params []float32
	W, B   [][]float32
	k      []int // winners per hidden layer (0 when KFrac = 0)
	// conn[l], when non-nil, is W[l]'s wiring in W's layout (true = the
	// synapse exists); see SetConn.
	conn [][]bool
	// off, when non-nil, is the input offset of the offset path (offset.go),
	// offV and offO its non-zero entries and their rows' offsets in W[0].
	off  []float32
	offV []float32
	offO []int32
}

// NewNet returns a network of the given widths (at least input and output)
// with PyTorch's default nn.Linear initialisation: every weight and bias of
// layer l drawn from U(-1/sqrt(fan_in), 1/sqrt(fan_in)), layer by layer,
// weights in PyTorch's (out, in) order, then biases. It panics if a width is
// not positive or fewer than two are given.
func NewNet(sizes []int, kfrac float64, rng *core.RNG) *Net {
	if len(sizes) < 2 {
		panic("backprop: NewNet needs at least two layer widths")
	}
	n := 0
	for l, s := range sizes {
		if s <= 0 {
			panic("backprop: NewNet with a non-positive width")
		}
		if l > 0 {
			n += sizes[l-1]*s + s
		}
	}
	net := &Net{Sizes: append([]int(nil), sizes...), KFrac: kfrac, Params: make([]float32, n)}
	net.W, net.B = net.views(net.Params)
	net.k = make([]int, len(sizes))
	if kfrac > 0 {
		for l := 1; l < len(sizes)-1; l++ {
			net.k[l] = core.KWTAK(kfrac, sizes[l])
		}
	}
	for l := range net.W {
		in, out := sizes[l], sizes[l+1]
		bound := 1 / math.Sqrt(float64(in))
		for i := range out {
			for j := range in {
				net.W[l][j*out+i] = float32((2*rng.Float64() - 1) * bound)
			}
		}
		for i := range out {
			net.B[l][i] = float32((2*rng.Float64() - 1) * bound)
		}
	}
	return net
}

// views cuts a flat vector laid out like Params into per-layer weight and
// bias slices.
func (n *Net) views(flat []float32) (w, b [][]float32) {
	L := len(n.Sizes) - 1
	w, b = make([][]float32, L), make([][]float32, L)
	o := 0
	for l := range L {
		in, out := n.Sizes[l], n.Sizes[l+1]
		w[l] = flat[o : o+in*out : o+in*out]
		o += in * out
		b[l] = flat[o : o+out : o+out]
		o += out
	}
	return w, b
}

// Layers is the number of weight layers (hidden layers + readout).
func (n *Net) Layers() int { return len(n.Sizes) - 1 }

// Classes is the readout width.
func (n *Net) Classes() int { return n.Sizes[len(n.Sizes)-1] }

// Pass holds one batch's activations and gradients. A[0] is the input
// (rows x Sizes[0]), A[l] for 0 < l < L the hidden activities after ReLU,
// suppression and k-WTA, A[L] the readout's linear output (logits). D[l]
// is the loss gradient with respect to layer l's pre-activation (D[L]: the
// logits), filled by the caller for D[L] and by Backward for the rest.
type Pass struct {
	Rows int
	A, D [][]float32
	// Suppress, when non-nil, gives per hidden layer l (index l, 0 < l < L)
	// the units benched on this forward pass (true = activity forced to 0
	// before the k-WTA competition); nil entries mean none.
	Suppress [][]bool

	maxRows int
	vals    []float32
	offs    []int32
	act     []int32   // a row's active units (kwtaInputGrad)
	v4      []float32 // four interleaved coefficient lists for accRows4
	panel   []float32 // every group of four rows' v4, for accRows4Groups
	at      []float32 // a hidden layer's activities, transposed
	pad     []float32 // four zero-padded input rows
	pad4    []float32 // four zero-padded output rows
	scratch []float32
	wt      [][]float32    // transposed weights for the input gradients
	off     *offsetBuffers // the offset path's buffers (nil on the dense path)
}

// NewPass returns a Pass for up to maxRows rows of net.
func NewPass(net *Net, maxRows int) *Pass {
	L := net.Layers()
	p := &Pass{maxRows: maxRows, A: make([][]float32, L+1), D: make([][]float32, L+1), wt: make([][]float32, L)}
	widest := 0
	for l, s := range net.Sizes {
		p.A[l] = make([]float32, maxRows*s)
		p.D[l] = make([]float32, maxRows*s)
		widest = max(widest, s)
		if l > 0 {
			p.wt[l-1] = make([]float32, net.Sizes[l-1]*s)
		}
	}
	p.vals = make([]float32, max(widest, maxRows))
	p.offs = make([]int32, max(widest, maxRows))
	p.act = make([]int32, widest)
	p.v4 = make([]float32, 4*max(widest, maxRows))
	// The dense input layer's coefficient panels: the input rows four at a
	// time (forward) or the input columns four at a time (weight gradient),
	// at most maxRows x Sizes[0] coefficients either way. The offset path
	// has its own buffers.
	if net.off == nil {
		p.panel = make([]float32, maxRows*net.Sizes[0])
	}
	p.at = make([]float32, widest*maxRows)
	p.pad = make([]float32, 4*net.Sizes[0])
	p.pad4 = make([]float32, 4*widest)
	p.scratch = make([]float32, 3*widest) // KthLargest partitions by vector with 3x
	if net.off != nil {
		p.off = newOffsetBuffers(net.Sizes[0], net.Sizes[1], maxRows)
		// The input layer's weight gradient writes the sum of its rows of
		// D[1] in one more row.
		p.D[1] = make([]float32, (maxRows+1)*net.Sizes[1])
	}
	return p
}

// SetRows sets the batch size of the next Forward. It panics if rows
// exceeds the Pass's capacity.
func (p *Pass) SetRows(rows int) {
	if rows < 0 || rows > p.maxRows {
		panic("backprop: Pass.SetRows beyond capacity")
	}
	p.Rows = rows
}

// Input returns row r of the input matrix, to be filled by the caller.
func (p *Pass) Input(r, d int) []float32 { return p.A[0][r*d : (r+1)*d] }

// Forward computes every layer for the p.Rows input rows in p.A[0].
//
// The input layer is treated as dense (standardised inputs are almost never
// zero: four rows at a time share the weight loads), or, after
// SetInputOffset, as an offset plus a sparse deviation (offset.go). Hidden
// layers are sparse after ReLU and k-WTA, so each row lists only its
// non-zero units. The choice depends on the layer and the network's input
// path, never on the batch or the CPU, so the arithmetic is the same on
// every run.
func (n *Net) Forward(p *Pass) {
	L := n.Layers()
	for l := range L {
		in, out := n.Sizes[l], n.Sizes[l+1]
		w, b := n.W[l], n.B[l]
		x, z := p.A[l], p.A[l+1]
		switch {
		case l == 0 && n.off != nil:
			n.forwardInputOffset(p, x, z)
		case l == 0:
			n.forwardInputDense(p, x, z)
		default:
			for r := range p.Rows {
				zr := z[r*out : (r+1)*out]
				copy(zr, b)
				v, o := kernels.NonZeros(p.vals, p.offs, x[r*in:(r+1)*in], out)
				kernels.AddRows(zr, v, o, w)
			}
		}
		if l == L-1 {
			continue // linear readout
		}
		var sup []bool
		if p.Suppress != nil {
			sup = p.Suppress[l+1]
		}
		for r := range p.Rows {
			zr := z[r*out : (r+1)*out]
			kernels.Relu(zr)
			if sup != nil {
				for i, s := range sup[:len(zr)] {
					if s {
						zr[i] = 0
					}
				}
			}
			if k := n.k[l+1]; k > 0 {
				core.KWTAScratch(zr, k, p.scratch)
			}
		}
	}
}

// forwardInputDense sets z (rows x out) to the input layer's
// pre-activation of the rows of x on the dense path: b, then the product
// four rows at a time (accRows4Groups: column strip by column strip, so
// that a strip of W stays in cache across the batch).
func (n *Net) forwardInputDense(p *Pass, x, z []float32) {
	in, out := n.Sizes[0], n.Sizes[1]
	w, b := n.W[0], n.B[0]
	for r := range p.Rows {
		copy(z[r*out:(r+1)*out], b)
	}
	o := p.offs[:in]
	for j := range o {
		o[j] = int32(j * out)
	}
	full := p.Rows / 4
	panel := p.panel[:4*in*full]
	for g := range full {
		r := 4 * g
		interleave4(panel[4*in*g:4*in*(g+1)], x[r*in:(r+1)*in], x[(r+1)*in:(r+2)*in], x[(r+2)*in:(r+3)*in], x[(r+3)*in:(r+4)*in])
	}
	kernels.AccRows4Groups(z, out, full, panel, o, w, out)
	if r := 4 * full; r < p.Rows {
		// The last 1-3 rows go through the same kernel, padded with zero
		// rows, so a row's result does not depend on its position in the
		// batch.
		nr := p.Rows - r
		v4 := p.v4[:4*in]
		xs := p.pad[:4*in]
		clear(xs)
		copy(xs, x[r*in:p.Rows*in])
		interleave4(v4, xs[:in], xs[in:2*in], xs[2*in:3*in], xs[3*in:])
		cs := p.pad4[:4*out]
		copy(cs, z[r*out:p.Rows*out])
		kernels.AccRows4(cs, out, v4, o, w, out)
		copy(z[r*out:p.Rows*out], cs[:nr*out])
	}
}

// Backward accumulates into grad (laid out like Params; the caller zeroes
// it) the gradient of the loss whose gradient with respect to the logits
// the caller has put in p.D[L]. It overwrites p.D[l] for 0 < l < L. The
// rectifier, suppression and k-WTA pass gradient exactly where the unit's
// final activity is positive (PyTorch's relu backward times the constant
// k-WTA and suppression masks).
func (n *Net) Backward(p *Pass, grad []float32) {
	L := n.Layers()
	gw, gb := n.views(grad)
	for l := L - 1; l >= 0; l-- {
		in, out := n.Sizes[l], n.Sizes[l+1]
		a := p.A[l][:p.Rows*in]
		d := p.D[l+1][:p.Rows*out]
		// Weight gradient, row j: sum_r a[r,j] * d[r,:]; on the input
		// layer dense (four rows j at a time) or through the offset,
		// sparse on hidden layers.
		switch {
		case l == 0 && n.off != nil:
			n.inputWeightGradOffset(p, gw[l], a, p.D[1])
		case l == 0:
			p.inputWeightGrad(gw[l], a, d, in, out)
		default:
			at := p.at[:in*p.Rows]
			kernels.TransposeInto(at, a, p.Rows, in)
			for j := range in {
				v, o := kernels.NonZeros(p.vals, p.offs, at[j*p.Rows:(j+1)*p.Rows], out)
				kernels.AddRows(gw[l][j*out:(j+1)*out], v, o, d)
			}
		}
		// Bias gradient: sum_r d[r,:].
		v, o := p.vals[:p.Rows], p.offs[:p.Rows]
		for r := range p.Rows {
			v[r], o[r] = 1, int32(r*out)
		}
		kernels.AddRows(gb[l], v, o, d)
		if l == 0 {
			break
		}
		dPrev := p.D[l][:p.Rows*in]
		if n.k[l] > 0 {
			p.kwtaInputGrad(dPrev, n.W[l], a, d, in, out)
			continue
		}
		// Input gradient through the transposed weights, then the
		// activation's gate.
		wt := p.wt[l]
		kernels.TransposeInto(wt, n.W[l], in, out)
		for r := range p.Rows {
			v, o := kernels.NonZeros(p.vals, p.offs, d[r*out:(r+1)*out], in)
			c := dPrev[r*in : (r+1)*in]
			clear(c)
			kernels.AddRows(c, v, o, wt)
			kernels.Gate(c, a[r*in:(r+1)*in])
		}
	}
}

// inputWeightGrad adds the input layer's weight gradient, row j:
// sum_r a[r,j] * d[r,:], densely, four rows j at a time (accRows4Groups
// over the columns' coefficient panels; a last partial group goes through
// a zero-padded copy).
func (p *Pass) inputWeightGrad(gw, a, d []float32, in, out int) {
	T := p.Rows
	o := p.offs[:T]
	for r := range o {
		o[r] = int32(r * out)
	}
	// Panel g holds a[r, 4g..4g+3] at 4r..4r+3: row by row, four entries
	// at a time as one 16-byte move. (Sixteen rows at a time, for 256
	// contiguous bytes per panel, measured slower: 1.2 against 0.7 s of a
	// CIFAR DER++ run.)
	full := in / 4
	panel := p.panel[:4*T*full]
	for r := range T {
		ar := a[r*in : r*in+4*full]
		for g := range full {
			*(*[4]float32)(panel[4*T*g+4*r:]) = *(*[4]float32)(ar[4*g:])
		}
	}
	kernels.AccRows4Groups(gw, out, full, panel, o, d, out)
	if j := 4 * full; j < in {
		nj := in - j
		v4 := p.v4[:4*T]
		for r := range T {
			w := v4[4*r : 4*r+4]
			clear(w)
			copy(w, a[r*in+j:r*in+in])
		}
		cs := p.pad4[:4*out]
		clear(cs)
		copy(cs, gw[j*out:(j+nj)*out])
		kernels.AccRows4(cs, out, v4, o, d, out)
		copy(gw[j*out:(j+nj)*out], cs[:nj*out])
	}
}

// kwtaInputGrad writes the input gradient dPrev of a k-WTA layer: only the
// few units active on a row pass gradient, so it computes just those
// entries as dot products of the row's non-zero output gradients with the
// unit's weight row w. Terms are added in ascending i without fusing,
// exactly as the transposed product in Backward would add them.
//
// Each dot product is a chain of dependent additions, so the active units
// go four at a time, four independent chains in one loop: the same sums in
// the same order, four times the additions in flight.
func (p *Pass) kwtaInputGrad(dPrev, w, a, d []float32, in, out int) {
	for r := range p.Rows {
		v, o := kernels.NonZeros(p.vals, p.offs, d[r*out:(r+1)*out], 1)
		c := dPrev[r*in : (r+1)*in]
		clear(c)
		js := kernels.Positives(p.act[:in], a[r*in:(r+1)*in])
		t := 0
		for ; t+4 <= len(js); t += 4 {
			j0, j1, j2, j3 := int(js[t]), int(js[t+1]), int(js[t+2]), int(js[t+3])
			w0, w1 := w[j0*out:(j0+1)*out], w[j1*out:(j1+1)*out]
			w2, w3 := w[j2*out:(j2+1)*out], w[j3*out:(j3+1)*out]
			var s0, s1, s2, s3 float32
			for q, i := range o {
				x := v[q]
				s0 += float32(x * w0[i])
				s1 += float32(x * w1[i])
				s2 += float32(x * w2[i])
				s3 += float32(x * w3[i])
			}
			c[j0], c[j1], c[j2], c[j3] = s0, s1, s2, s3
		}
		for _, j := range js[t:] {
			row := w[int(j)*out : (int(j)+1)*out]
			var s float32
			for q, i := range o {
				s += float32(v[q] * row[i])
			}
			c[j] = s
		}
	}
}

// Predict writes the argmax class (first maximum) of each row of the last
// Forward to dst.
func (n *Net) Predict(p *Pass, dst []int32) {
	C := n.Classes()
	z := p.A[n.Layers()]
	for r := range p.Rows {
		row := z[r*C : (r+1)*C]
		best := 0
		for c := 1; c < C; c++ {
			if row[c] > row[best] {
				best = c
			}
		}
		dst[r] = int32(best)
	}
}

// interleave4 writes v4[4j+q] = xq[j] for the four rows.
func interleave4(v4, x0, x1, x2, x3 []float32) {
	n := len(x0)
	v4 = v4[:4*n]
	x1, x2, x3 = x1[:n], x2[:n], x3[:n]
	for j := range n {
		w := v4[4*j : 4*j+4 : 4*j+4]
		w[0], w[1], w[2], w[3] = x0[j], x1[j], x2[j], x3[j]
	}
}
