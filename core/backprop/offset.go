package backprop

import (
	"math/bits"

	"repro/core"
	"repro/internal/kernels"
)

// The input layer's offset path. Standardised MNIST is dense but almost
// constant: about three quarters of a row's pixels hold their column's
// background value o_j = -mu_j/sigma_j (0.26 of the entries of the
// held-out stream differ from it). Writing x = o + (x - o), the input
// layer's two products become
//
//	z_r  = (b + W^T o) + W^T (x_r - o)             (forward, row r)
//	gW_j = o_j * sum_r d_r + sum_r (x_rj - o_j) d_r  (weight gradient, row j)
//
// where b + W^T o and sum_r d_r are computed once per batch and x_r - o is
// sparse. Both go through the dense path's fused kernel (accRows4), four
// rows (four columns of the gradient) at a time, over the columns (rows)
// where any of the four differs from the offset: 38% (34%) of the dense
// terms on MNIST. The mathematics is the same; the rounding is not (the
// terms are summed in another order), so a network takes this path or the
// dense one for a whole run, by a rule on its training data alone
// (UseInputOffset), never by CPU or state.

// offsetMaxDensity is the largest fraction of training entries differing
// from their column's offset for which UseInputOffset takes the offset
// path. Four rows of density d leave at most 1-(1-d)^4 of the columns in
// their union (independent rows; MNIST's correlate: 0.38 at d = 0.26), so
// at d = 1/3 the path still skips about a fifth of the dense terms to pay
// for its bookkeeping; above it, not reliably. CIFAR's raw luminance and
// V1 features have no majority value (density 1) and stay dense.
const offsetMaxDensity = 1.0 / 3

// UseInputOffset decides a run's input path from its training set: the
// offset path with the training set's per-pixel majority value
// (core.InputOffset) when at most offsetMaxDensity of the entries differ
// from it, else the dense path (nil). It reports the density it measured.
func UseInputOffset(train *core.Dataset) (off []float32, density float64) {
	if train.N == 0 || train.D == 0 {
		return nil, 1
	}
	o, matching := core.InputOffset(train)
	density = float64(train.N*train.D-matching) / float64(train.N*train.D)
	if density > offsetMaxDensity {
		return nil, density
	}
	return o, density
}

// SetInputOffset makes the input layer take the offset path with per-column
// offset off (len Sizes[0]), or the dense path for nil. Call it before
// NewPass: a Pass sizes its buffers for the path. It panics if off has the
// wrong length.
func (n *Net) SetInputOffset(off []float32) {
	if off == nil {
		n.off, n.offV, n.offO = nil, nil, nil
		return
	}
	if len(off) != n.Sizes[0] {
		panic("backprop: SetInputOffset with the wrong length")
	}
	n.off = append([]float32(nil), off...)
	n.offV, n.offO = n.offV[:0], n.offO[:0]
	for j, o := range off {
		if o != 0 {
			n.offV = append(n.offV, o)
			n.offO = append(n.offO, int32(j*n.Sizes[1]))
		}
	}
}

// offsetBuffers is what a Pass needs for the offset path: the
// bias-plus-offset drive u = b + W^T o, per row a bit set of the columns
// where it differs from the offset (words uint64s a row), the interleaved
// coefficients and offsets of one group's terms for accRows4, and a
// zero-padded group of four output rows.
type offsetBuffers struct {
	u     []float32
	nz    []uint64
	words int
	v4    []float32
	offs  []int32
	pad4  []float32
}

func newOffsetBuffers(in, out, maxRows int) *offsetBuffers {
	n, words := max(in, maxRows+1), (in+63)/64
	return &offsetBuffers{
		u: make([]float32, out), nz: make([]uint64, maxRows*words), words: words,
		v4: make([]float32, 4*n), offs: make([]int32, n), pad4: make([]float32, 4*out),
	}
}

// forwardInputOffset sets z (rows x out) to the input layer's pre-activation
// of the rows of x (rows x in) on the offset path: u = b + W^T o, then, four
// rows at a time, the terms of the columns where any of the four rows
// differs from the offset (fused, as the dense path; a row's zero
// coefficient in another row's column adds exactly nothing, so a row's
// result does not depend on its neighbours). It records each row's columns
// for the weight gradient.
func (n *Net) forwardInputOffset(p *Pass, x, z []float32) {
	in, out := n.Sizes[0], n.Sizes[1]
	w, ob, off, words := n.W[0], p.off, n.off, p.off.words
	u := ob.u[:out]
	copy(u, n.B[0])
	kernels.AddRows(u, n.offV, n.offO, w)
	for r := range p.Rows {
		kernels.DiffBits(ob.nz[r*words:(r+1)*words], x[r*in:(r+1)*in], off)
	}
	for r := 0; r < p.Rows; r += 4 {
		nr := min(4, p.Rows-r)
		cnt := 0
		for k := range words {
			var m uint64
			for q := range nr {
				m |= ob.nz[(r+q)*words+k]
			}
			for ; m != 0; m &= m - 1 {
				j := k<<6 + bits.TrailingZeros64(m)
				v := ob.v4[4*cnt : 4*cnt+4 : 4*cnt+4]
				v[0], v[1], v[2], v[3] = 0, 0, 0, 0
				for q := range nr {
					// x - o is 0 exactly where x == o.
					v[q] = x[(r+q)*in+j] - off[j]
				}
				ob.offs[cnt] = int32(j * out)
				cnt++
			}
		}
		c := z[r*out : (r+nr)*out]
		if nr < 4 {
			c = ob.pad4[:4*out]
		}
		for q := range nr {
			copy(c[q*out:(q+1)*out], u)
		}
		kernels.AccRows4(c, out, ob.v4[:4*cnt], ob.offs[:cnt], w, out)
		if nr < 4 {
			copy(z[r*out:(r+nr)*out], c[:nr*out])
		}
	}
}

// inputWeightGradOffset adds the input layer's weight gradient on the offset
// path to gw (in x out): rows j..j+3 of it at a time get o_j times the sum
// of d's rows, then (x_rj - o_j) d_r for the rows r (ascending) where any of
// the four columns differs from its offset (as the last forwardInputOffset
// recorded). a is the input (rows x in); d holds p.Rows rows of out and
// must have room for one more, where the sum is written.
func (n *Net) inputWeightGradOffset(p *Pass, gw, a, d []float32) {
	in, out, rows := n.Sizes[0], n.Sizes[1], p.Rows
	ob, off, words := p.off, n.off, p.off.words
	dd := d[:(rows+1)*out]
	sum := dd[rows*out:]
	clear(sum)
	ones, roff := ob.v4[:rows], ob.offs[:rows]
	for r := range rows {
		ones[r], roff[r] = 1, int32(r*out)
	}
	kernels.AddRows(sum, ones, roff, dd)
	for j := 0; j < in; j += 4 {
		nj := min(4, in-j)
		k, sh := j>>6, uint(j&63)
		v := ob.v4[0:4:4]
		v[0], v[1], v[2], v[3] = 0, 0, 0, 0
		copy(v, off[j:j+nj])
		ob.offs[0] = int32(rows * out)
		cnt := 1
		if nj == 4 {
			// Every row's terms go into the next slot, which only a row
			// where one of the four columns differs keeps (cnt moves on):
			// no branch per row on an unpredictable condition. The
			// buffers hold rows+1 slots.
			o4 := off[j : j+4 : j+4]
			for r := range rows {
				v := ob.v4[4*cnt : 4*cnt+4 : 4*cnt+4]
				ar := a[r*in+j : r*in+j+4 : r*in+j+4]
				v[0], v[1], v[2], v[3] = ar[0]-o4[0], ar[1]-o4[1], ar[2]-o4[2], ar[3]-o4[3]
				ob.offs[cnt] = int32(r * out)
				cnt += int(b2u((ob.nz[r*words+k]>>sh)&0xF != 0))
			}
		} else {
			for r := range rows {
				if (ob.nz[r*words+k]>>sh)&0xF == 0 {
					continue
				}
				v := ob.v4[4*cnt : 4*cnt+4 : 4*cnt+4]
				v[0], v[1], v[2], v[3] = 0, 0, 0, 0
				for q := range nj {
					v[q] = a[r*in+j+q] - off[j+q]
				}
				ob.offs[cnt] = int32(r * out)
				cnt++
			}
		}
		g := gw[j*out : (j+nj)*out]
		if nj < 4 {
			c := ob.pad4[:4*out]
			clear(c)
			copy(c, g)
			kernels.AccRows4(c, out, ob.v4[:4*cnt], ob.offs[:cnt], dd, out)
			copy(g, c[:nj*out])
			continue
		}
		kernels.AccRows4(g, out, ob.v4[:4*cnt], ob.offs[:cnt], dd, out)
	}
}

// b2u is 1 for true, 0 for false (compiled to a flag move, not a branch).
func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}
