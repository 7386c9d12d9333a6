package backprop

import (
	"math"

	"repro/core"
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
	scratch []float32
	wt      [][]float32 // transposed weights for the input gradients
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
	p.scratch = make([]float32, widest)
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
func (n *Net) Forward(p *Pass) {
	L := n.Layers()
	for l := range L {
		in, out := n.Sizes[l], n.Sizes[l+1]
		w, b := n.W[l], n.B[l]
		for r := range p.Rows {
			x := p.A[l][r*in : (r+1)*in]
			z := p.A[l+1][r*out : (r+1)*out]
			copy(z, b)
			v, o := p.vals[:0], p.offs[:0]
			for j, a := range x {
				if a != 0 {
					v = append(v, a)
					o = append(o, int32(j*out))
				}
			}
			accRows(z, v, o, w)
			if l == L-1 {
				continue // linear readout
			}
			var sup []bool
			if p.Suppress != nil {
				sup = p.Suppress[l+1]
			}
			for i, zi := range z {
				if zi < 0 || (sup != nil && sup[i]) {
					z[i] = 0
				}
			}
			if k := n.k[l+1]; k > 0 {
				core.KWTAScratch(z, k, p.scratch)
			}
		}
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
		// Weight gradient, row j: sum_r a[r,j] * d[r,:].
		for j := range in {
			v, o := p.vals[:0], p.offs[:0]
			for r := range p.Rows {
				if x := a[r*in+j]; x != 0 {
					v = append(v, x)
					o = append(o, int32(r*out))
				}
			}
			accRows(gw[l][j*out:(j+1)*out], v, o, d)
		}
		// Bias gradient: sum_r d[r,:].
		v, o := p.vals[:p.Rows], p.offs[:p.Rows]
		for r := range p.Rows {
			v[r], o[r] = 1, int32(r*out)
		}
		accRows(gb[l], v, o, d)
		if l == 0 {
			break
		}
		// Input gradient through the transposed weights, then the
		// activation's gate.
		wt := p.wt[l]
		w := n.W[l]
		for j := range in {
			for i := range out {
				wt[i*in+j] = w[j*out+i]
			}
		}
		dPrev := p.D[l][:p.Rows*in]
		for r := range p.Rows {
			dr := d[r*out : (r+1)*out]
			v, o := p.vals[:0], p.offs[:0]
			for i, x := range dr {
				if x != 0 {
					v = append(v, x)
					o = append(o, int32(i*in))
				}
			}
			c := dPrev[r*in : (r+1)*in]
			clear(c)
			accRows(c, v, o, wt)
			for j, x := range a[r*in : (r+1)*in] {
				if !(x > 0) {
					c[j] = 0
				}
			}
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
