package core

import (
	"errors"
	"fmt"

	"repro/internal/kernels"
)

// Network is a snapshot of a trained local learner's forward network:
// everything inference needs, and nothing of the training state (feedback
// twins, optimiser moments, burst baselines, reservoir). Layers are indexed
// as in the learner: weight layer l (1..L) maps layer l-1 to layer l, hidden
// layers are 1..L-1 and layer L is the linear readout.
//
// Inference is z^l = W^l a^{l-1} + b^l and a^l = kWTA_{K[l]}(relu(z^l)) on
// standardised inputs a^0, without suppression (the learner's evaluation).
type Network struct {
	// Sizes is [d, n_1, ..., n_{L-1}, C].
	Sizes []int
	// K[l] is hidden layer l's k-WTA winner count; K[0] = K[L] = 0.
	K []int
	// W[l] (l = 1..L) is W^l, n_l x n_{l-1} row-major, with the absent
	// synapses 0; W[0] is nil.
	W [][]float32
	// B[l] is b^l, n_l values; B[0] is nil.
	B [][]float32
	// Mask[l] is W^l's connectivity, n_l x n_{l-1} row-major (true where the
	// synapse exists), or nil where every synapse exists. A synapse can
	// exist with weight 0 (Dale's projection clamps it), so the mask is
	// kept beside the weights.
	Mask [][]bool
}

// ErrNetwork is wrapped by every error about a malformed Network.
var ErrNetwork = errors.New("malformed network")

// L is the number of weight layers.
func (n *Network) L() int { return len(n.Sizes) - 1 }

// Validate checks that every slice has the shape Sizes implies and that
// every k lies in [1, n_l]. The error wraps ErrNetwork and names the part.
func (n *Network) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: %s", ErrNetwork, fmt.Sprintf(format, args...))
	}
	if len(n.Sizes) < 2 {
		return bad("%d layer sizes, want at least 2", len(n.Sizes))
	}
	for l, s := range n.Sizes {
		if s < 1 {
			return bad("layer %d has size %d", l, s)
		}
	}
	L := n.L()
	if len(n.K) != L+1 || len(n.W) != L+1 || len(n.B) != L+1 || len(n.Mask) != L+1 {
		return bad("%d k, %d weight, %d bias and %d mask entries for %d layers, want %d each",
			len(n.K), len(n.W), len(n.B), len(n.Mask), L, L+1)
	}
	for l := 1; l <= L; l++ {
		nIn, nOut := n.Sizes[l-1], n.Sizes[l]
		if len(n.W[l]) != nIn*nOut {
			return bad("W^%d has %d values, want %d x %d", l, len(n.W[l]), nOut, nIn)
		}
		if len(n.B[l]) != nOut {
			return bad("b^%d has %d values, want %d", l, len(n.B[l]), nOut)
		}
		if n.Mask[l] != nil && len(n.Mask[l]) != nIn*nOut {
			return bad("mask %d has %d values, want %d x %d", l, len(n.Mask[l]), nOut, nIn)
		}
		if l < L && (n.K[l] < 1 || n.K[l] > nOut) {
			return bad("k of layer %d is %d, want 1..%d", l, n.K[l], nOut)
		}
	}
	if n.K[0] != 0 || n.K[L] != 0 || n.Mask[0] != nil || n.W[0] != nil || n.B[0] != nil {
		return bad("entry 0 (the input) and the readout's k must be empty")
	}
	return nil
}

// FanOut returns the mean number of synapses leaving a unit of layer l-1
// into layer l: the mean column sum of Mask[l], or n_l where W^l is dense.
func (n *Network) FanOut(l int) float64 {
	if n.Mask[l] == nil {
		return float64(n.Sizes[l])
	}
	present := 0
	for _, m := range n.Mask[l] {
		if m {
			present++
		}
	}
	return float64(present) / float64(n.Sizes[l-1])
}

// DenseMACs is the multiply-accumulates of one dense rate inference over
// the layer sizes, ignoring connectivity: sum_l n_{l-1} n_l.
func (n *Network) DenseMACs() int {
	s := 0
	for l := 1; l <= n.L(); l++ {
		s += n.Sizes[l-1] * n.Sizes[l]
	}
	return s
}

// Inference holds the scratch of Forward for one network; it is not safe
// for concurrent use.
type Inference struct {
	n *Network
	// wT[l] is W^l column by column (n_{l-1} x n_l), for AddRows.
	wT   [][]float32
	off  [][]int32
	ones []float32
	kbuf []float32
	// A[l] (hidden l) holds the last sample's post-k-WTA rates; Z the readout.
	A [][]float32
	Z []float32
}

// NewInference prepares n for rate inference. It panics if n is invalid
// (callers Validate first).
func NewInference(n *Network) *Inference {
	if err := n.Validate(); err != nil {
		panic("core: NewInference: " + err.Error())
	}
	L := n.L()
	f := &Inference{n: n, wT: make([][]float32, L+1), off: make([][]int32, L+1), A: make([][]float32, L), Z: make([]float32, n.Sizes[L])}
	maxW := 0
	for l := 1; l <= L; l++ {
		f.wT[l] = Transpose(n.W[l], n.Sizes[l], n.Sizes[l-1])
		f.off[l] = make([]int32, 0, n.Sizes[l-1])
		maxW = max(maxW, n.Sizes[l-1], n.Sizes[l])
		if l < L {
			f.A[l] = make([]float32, n.Sizes[l])
		}
	}
	f.ones = make([]float32, maxW)
	f.kbuf = make([]float32, 3*maxW)
	return f
}

// Transpose returns the cols x rows transpose of a rows x cols row-major
// matrix.
func Transpose(w []float32, rows, cols int) []float32 {
	t := make([]float32, len(w))
	kernels.TransposeInto(t, w, rows, cols)
	return t
}

// Forward runs one standardised sample x (len d) through the network
// without suppression, leaving the hidden rates in f.A and the readout in
// f.Z, and returns the predicted class (the first largest output). Each
// drive sums its terms in ascending presynaptic order in float32, over the
// non-zero presynaptic values only.
func (f *Inference) Forward(x []float32) int {
	n := f.n
	L := n.L()
	prev := x
	for l := 1; l <= L; l++ {
		z := f.Z
		if l < L {
			z = f.A[l]
		}
		copy(z, n.B[l])
		nOut := n.Sizes[l]
		off, val := f.off[l][:0], f.ones[:0]
		for j, v := range prev {
			if v != 0 {
				off = append(off, int32(j*nOut))
				val = append(val, v)
			}
		}
		f.off[l] = off
		kernels.AddRows(z, val, off, f.wT[l])
		if l < L {
			for i, v := range z {
				z[i] = max(v, 0)
			}
			kwtaKeep(z, n.K[l], f.kbuf)
		}
		prev = z
	}
	return Argmax(f.Z)
}

// kwtaKeep is KWTA with scratch: entries below the k-th largest become 0.
func kwtaKeep(a []float32, k int, scratch []float32) {
	if k < len(a) {
		KWTAScratch(a, k, scratch)
	}
}

// Argmax returns the index of the first largest value of v, as the
// learner's evaluation picks it (a NaN is never larger).
func Argmax(v []float32) int {
	best := 0
	for i, x := range v {
		if x > v[best] {
			best = i
		}
	}
	return best
}

// network copies the learner's forward network into a Network. Skip
// synapses (deep nets) have no place in it: snapshot returns an error
// wrapping ErrConfig for them.
func (nt *net) network() (*Network, error) {
	L := nt.L
	for l := range nt.skip {
		if nt.skip[l] != nil {
			return nil, fmt.Errorf("%w: a network with skip synapses cannot be kept", ErrConfig)
		}
	}
	n := &Network{Sizes: append([]int(nil), nt.sizes...), K: make([]int, L+1),
		W: make([][]float32, L+1), B: make([][]float32, L+1), Mask: make([][]bool, L+1)}
	for l := 1; l <= L; l++ {
		ly := nt.lay[l]
		if l < L {
			n.K[l] = nt.k[l]
		}
		w := make([]float32, ly.nOut*ly.nIn)
		mask := make([]bool, ly.nOut*ly.nIn)
		all := true
		for i := range ly.nOut {
			for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
				at := i*ly.nIn + int(ly.col[s])
				w[at] = ly.w[s]
				mask[at] = ly.absent == nil || !ly.absent[s]
			}
		}
		for _, m := range mask {
			all = all && m
		}
		n.W[l] = w
		n.B[l] = append([]float32(nil), ly.bias...)
		if !all {
			n.Mask[l] = mask
		}
	}
	return n, nil
}
