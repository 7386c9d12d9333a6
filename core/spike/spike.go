// Package spike converts a trained rate network (core.Network) to spiking
// inference and counts its synaptic events, as the authors' conversion
// does (Diehl et al. 2015, Rueckauer et al. 2017): per-layer thresholds from
// a high percentile of the rate activations, Bernoulli input spikes from
// the raw intensities with the standardisation folded into the first
// layer, non-leaky integrate-and-fire hidden layers that keep k-WTA as a
// per-step spike budget, and a readout that integrates its current.
//
// Like core, it does no I/O and keeps no global state: randomness is a
// *core.RNG passed in, and a run is deterministic and single-threaded.
package spike

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"repro/core"
	"repro/internal/kernels"
)

// ErrInput is wrapped by every error about inputs that do not fit the
// network (shapes, statistics, thresholds, budgets).
var ErrInput = errors.New("spike conversion")

// Quantile returns the q-quantile of v with linear interpolation between
// order statistics (torch.quantile's default): with s the sorted values
// and h = q (n-1), s[floor h] + (h - floor h) (s[floor h + 1] - s[floor
// h]). It panics if v is empty or q is outside [0, 1].
func Quantile(v []float32, q float64) float64 {
	if len(v) == 0 || !(q >= 0 && q <= 1) {
		panic("spike: Quantile of no values or q outside [0, 1]")
	}
	s := make([]float64, len(v))
	for i, x := range v {
		s[i] = float64(x)
	}
	slices.Sort(s)
	h := q * float64(len(s)-1)
	lo := int(math.Floor(h))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	return s[lo] + (h-float64(lo))*(s[lo+1]-s[lo])
}

// Thresholds returns the firing threshold of every hidden layer l
// (thr[l], l = 1..L-1; thr[0] and thr[L] are 0): the q-quantile of the
// strictly positive post-k-WTA rates of one rate forward pass (no
// suppression) over the n standardised samples in x (row-major, n x d),
// or 1 where no rate is positive. One percentile per layer, not per unit
// and not the maximum, as the reference calibrates.
func Thresholds(nw *core.Network, x []float32, n int, q float64) ([]float32, error) {
	d := nw.Sizes[0]
	if n < 1 || len(x) != n*d {
		return nil, fmt.Errorf("%w: %d calibration values for %d samples of %d inputs", ErrInput, len(x), n, d)
	}
	if !(q >= 0 && q <= 1) {
		return nil, fmt.Errorf("%w: percentile %g outside [0, 1]", ErrInput, q)
	}
	L := nw.L()
	pos := make([][]float32, L)
	f := core.NewInference(nw)
	for i := range n {
		f.Forward(x[i*d : (i+1)*d])
		for l := 1; l < L; l++ {
			for _, a := range f.A[l] {
				if a > 0 {
					pos[l] = append(pos[l], a)
				}
			}
		}
	}
	thr := make([]float32, L+1)
	for l := 1; l < L; l++ {
		thr[l] = 1
		if len(pos[l]) > 0 {
			thr[l] = float32(Quantile(pos[l], q))
		}
	}
	return thr, nil
}

// Converted is a network prepared for spiking inference. It is not safe
// for concurrent use (Run keeps its scratch in it).
type Converted struct {
	nw  *core.Network
	thr []float32
	// w1 is W^1 / sd column by column (d x n_1), b1 = b^1 - (W^1 / sd) mu:
	// an input spike of pixel j adds column j, and the expected current of
	// a step is the rate network's layer-1 drive on (p - mu) / sd.
	w1, b1 []float32
	wT     [][]float32 // wT[l], l >= 2: W^l column by column
	// fanOut[l] is the mean number of synapses a spike of layer l reaches
	// in layer l+1 (l = 0 the input).
	fanOut []float64
	// inputTape, when non-nil, decides the input spikes in place of the
	// generator: pixel j spikes at step t iff inputTape(t, j). The
	// differential check against the authors' code (refcheck_test.go) sets
	// it to their taped uniforms; nothing else does.
	inputTape func(t, j int) bool

	// Scratch.
	v       [][]float32
	cur     []float32
	nextCur []float32
	out     []float32
	off     []int32
	amp     []float32
	cand    []int32
	vals    []float32
	kbuf    []float32
}

// Convert folds the standardisation (per-input mean and s.d. of the
// training images) into layer 1 and prepares nw for spiking inference with
// thresholds thr (from Thresholds). Shapes that do not fit, a non-positive
// or non-finite s.d. or threshold are errors wrapping ErrInput.
func Convert(nw *core.Network, mean, sd, thr []float32) (*Converted, error) {
	if err := nw.Validate(); err != nil {
		return nil, err
	}
	L := nw.L()
	d, n1 := nw.Sizes[0], nw.Sizes[1]
	if L < 2 {
		return nil, fmt.Errorf("%w: a network without hidden layers has nothing to spike", ErrInput)
	}
	if len(mean) != d || len(sd) != d {
		return nil, fmt.Errorf("%w: %d means and %d s.d. for %d inputs", ErrInput, len(mean), len(sd), d)
	}
	if len(thr) != L+1 {
		return nil, fmt.Errorf("%w: %d thresholds for %d layers, want %d", ErrInput, len(thr), L, L+1)
	}
	for j, s := range sd {
		if !(s > 0) || math.IsInf(float64(s), 0) || math.IsNaN(float64(mean[j])) || math.IsInf(float64(mean[j]), 0) {
			return nil, fmt.Errorf("%w: input %d has mean %g and s.d. %g", ErrInput, j, mean[j], s)
		}
	}
	for l := 1; l < L; l++ {
		if t := thr[l]; !(t > 0) || math.IsInf(float64(t), 0) {
			return nil, fmt.Errorf("%w: threshold of layer %d is %g", ErrInput, l, t)
		}
	}
	c := &Converted{nw: nw, thr: thr, w1: make([]float32, d*n1), b1: make([]float32, n1),
		wT: make([][]float32, L+1), fanOut: make([]float64, L), v: make([][]float32, L)}
	// [CODE≠PAPER] The reference folds a homeostatic gain into W^1 as well;
	// the paper's configurations keep it fixed at 1, and the learner here
	// has none, so there is nothing to fold.
	for i := range n1 {
		acc := float64(nw.B[1][i])
		for j := range d {
			w := nw.W[1][i*d+j] / sd[j]
			c.w1[j*n1+i] = w
			acc -= float64(w) * float64(mean[j])
		}
		c.b1[i] = float32(acc)
	}
	maxW := 0
	for l := 1; l <= L; l++ {
		maxW = max(maxW, nw.Sizes[l-1], nw.Sizes[l])
		if l >= 2 {
			c.wT[l] = core.Transpose(nw.W[l], nw.Sizes[l], nw.Sizes[l-1])
		}
		c.fanOut[l-1] = nw.FanOut(l)
		if l < L {
			c.v[l] = make([]float32, nw.Sizes[l])
		}
	}
	c.cur = make([]float32, maxW)
	c.nextCur = make([]float32, maxW)
	c.out = make([]float32, nw.Sizes[L])
	c.off = make([]int32, 0, maxW)
	c.amp = make([]float32, maxW)
	c.cand = make([]int32, 0, maxW)
	c.vals = make([]float32, maxW)
	c.kbuf = make([]float32, 3*maxW)
	return c, nil
}

// FanOut returns the mean fan-out charged per spike of layer l (0 = the
// input): the mean column sum of the next layer's connectivity, or its
// width where it is dense (the readout: the number of classes).
func (c *Converted) FanOut(l int) float64 { return c.fanOut[l] }

// Counts are the totals of one spiking evaluation.
type Counts struct {
	N, Correct  int
	InputSpikes int64
	Spikes      []int64 // per hidden layer, index l-1
	Pred        []int32 // per sample, the predicted class
}

// Events returns the synaptic events per sample: every input spike costs
// the mean fan-out into layer 1, every spike of hidden layer l the mean
// fan-out into layer l+1. Membrane updates, comparisons and bias additions
// are not counted, as in the reference's proxy.
func (c *Converted) Events(k *Counts) float64 {
	e := float64(k.InputSpikes) * c.fanOut[0]
	for l, s := range k.Spikes {
		e += float64(s) * c.fanOut[l+1]
	}
	return e / float64(max(1, k.N))
}

// bitSource hands out 32-bit uniforms, two per draw of the generator.
type bitSource struct {
	rng  *core.RNG
	buf  uint64
	have bool
}

func (b *bitSource) next() uint32 {
	if b.have {
		b.have = false
		return uint32(b.buf >> 32)
	}
	b.buf, b.have = b.rng.Uint64(), true
	return uint32(b.buf)
}

// Run simulates steps time steps on every sample of raw (row-major n x d
// intensities in 0..255, intensity v/255) and counts spikes and correct
// predictions against y (n labels). Per step:
//
//   - every input pixel spikes independently with probability v/255
//     (exactly ceil(v 2^32 / 255) / 2^32: a 32-bit uniform u spikes when
//     255 u < v 2^32; pixels at 0 and 255 draw nothing, they never and
//     always spike); the draws come from rng in sample, step and pixel
//     order;
//   - each hidden layer l adds its input current, bias included, to its
//     potential V (no leak, no clamp); a unit fires if V >= thr[l] and it
//     is among the layer's k highest potentials of the sample (ties at the
//     k-th broken towards the lower index: the reference's topk leaves the
//     order of ties unspecified), and a spike subtracts thr[l]
//     from V; layer l+1's current is b^{l+1} + W^{l+1} (spikes * thr[l]);
//   - the readout does not spike: its current is summed over the steps and
//     the first largest sum is the prediction.
//
// Each current is accumulated from the spiking columns only. Run panics if
// steps < 1 or the shapes do not fit (callers check them first).
func (c *Converted) Run(raw []uint8, y []int32, steps int, rng *core.RNG) *Counts {
	nw := c.nw
	L, d := nw.L(), nw.Sizes[0]
	n := len(y)
	if steps < 1 || len(raw) != n*d {
		panic("spike: Run with steps < 1 or raw of the wrong size")
	}
	k := &Counts{N: n, Spikes: make([]int64, L-1), Pred: make([]int32, n)}
	src := &bitSource{rng: rng}
	for s := range n {
		px := raw[s*d : (s+1)*d]
		for l := 1; l < L; l++ {
			clear(c.v[l])
		}
		clear(c.out)
		for t := range steps {
			cur := c.inputCurrent(px, t, src)
			k.InputSpikes += int64(len(c.off))
			for l := 1; l < L; l++ {
				fired := c.fire(l, cur)
				k.Spikes[l-1] += int64(len(fired))
				nOut := nw.Sizes[l+1]
				next := c.nextCur[:nOut]
				copy(next, nw.B[l+1])
				off := c.off[:0]
				for _, i := range fired {
					off = append(off, i*int32(nOut))
				}
				c.off = off
				amp := c.amp[:len(off)]
				for t := range amp {
					amp[t] = c.thr[l]
				}
				kernels.AddRows(next, amp, off, c.wT[l+1])
				c.cur, c.nextCur = c.nextCur, c.cur
				cur = next
			}
			for i, v := range cur {
				c.out[i] += v
			}
		}
		pred := core.Argmax(c.out)
		k.Pred[s] = int32(pred)
		if int32(pred) == y[s] {
			k.Correct++
		}
	}
	return k
}

// inputCurrent draws step t's input spikes of the pixels px (their
// column offsets into w1 are left in c.off, ascending) and returns layer
// 1's current b1 + w1 s.
func (c *Converted) inputCurrent(px []uint8, t int, src *bitSource) []float32 {
	n1 := c.nw.Sizes[1]
	off := c.off[:0]
	for j, v := range px {
		if c.inputTape != nil {
			if !c.inputTape(t, j) {
				continue
			}
		} else if v == 0 || (v < 255 && uint64(src.next())*255 >= uint64(v)<<32) {
			continue
		}
		off = append(off, int32(j*n1))
	}
	c.off = off
	cur := c.cur[:n1]
	copy(cur, c.b1)
	kernels.AddRows(cur, ones(c.amp, len(off)), off, c.w1)
	return cur
}

// fire integrates cur into layer l's potentials and returns the units that
// spike this step (ascending), after subtracting the threshold from each.
func (c *Converted) fire(l int, cur []float32) []int32 {
	v, thr, kk := c.v[l], c.thr[l], c.nw.K[l]
	cand := c.cand[:0]
	for i := range v {
		v[i] += cur[i]
		if v[i] >= thr {
			cand = append(cand, int32(i))
		}
	}
	// The units above threshold are exactly the top of the layer, so the
	// k highest potentials that fire are the k highest candidates: those
	// above the candidates' k-th largest potential, then the ties at it in
	// ascending order.
	if len(cand) > kk {
		vals := c.vals[:len(cand)]
		for t, i := range cand {
			vals[t] = v[i]
		}
		kth := core.KthLargest(vals, kk, c.kbuf)
		above := 0
		for _, x := range vals {
			if x > kth {
				above++
			}
		}
		ties := kk - above
		out := cand[:0]
		for t, i := range cand {
			if x := vals[t]; x > kth || (x == kth && ties > 0) {
				if x == kth {
					ties--
				}
				out = append(out, i)
			}
		}
		cand = out
	}
	for _, i := range cand {
		v[i] -= thr
	}
	c.cand = cand
	return cand
}

// ones returns buf[:n] set to 1.
func ones(buf []float32, n int) []float32 {
	b := buf[:n]
	for i := range b {
		b[i] = 1
	}
	return b
}
