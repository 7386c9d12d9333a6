package stages

import (
	"context"
	"fmt"
	"slices"
	"strconv"

	"repro/artifacts"
	"repro/core"
	"repro/pipeline"
)

// A train cell with keep_network writes its trained network (core.Network)
// beside its result, one tensor per part, so that any later stage reads it
// by digest:
//
//	network_sizes  int32   [L+1]            d, n_1, ..., n_{L-1}, C
//	network_k      int32   [L+1]            k-WTA winners of hidden layer l (0 at 0 and L)
//	network_w<l>   float32 [n_l, n_{l-1}]   W^l, l = 1..L, absent synapses 0
//	network_b<l>   float32 [n_l]            b^l
//	network_mask<l> uint8  [n_l, n_{l-1}]   1 where W^l's synapse exists; only for
//	                                        layers with absent synapses
//
// Standardisation statistics are not repeated: they are the data cell's
// mean and std.

// putNetwork writes nw's outputs.
func putNetwork(rc *pipeline.RunContext, nw *core.Network) {
	L := nw.L()
	rc.Put("network_sizes", artifacts.EncodeInt32(toInt32(nw.Sizes), L+1))
	rc.Put("network_k", artifacts.EncodeInt32(toInt32(nw.K), L+1))
	for l := 1; l <= L; l++ {
		nIn, nOut := nw.Sizes[l-1], nw.Sizes[l]
		rc.Put("network_w"+strconv.Itoa(l), artifacts.EncodeFloat32(nw.W[l], nOut, nIn))
		rc.Put("network_b"+strconv.Itoa(l), artifacts.EncodeFloat32(nw.B[l], nOut))
		if m := nw.Mask[l]; m != nil {
			b := make([]uint8, len(m))
			for i, v := range m {
				if v {
					b[i] = 1
				}
			}
			rc.Put("network_mask"+strconv.Itoa(l), artifacts.EncodeUint8(b, nOut, nIn))
		}
	}
}

// readNetwork decodes and validates the network written by putNetwork. The
// errors name the input cell and the output.
func readNetwork(ctx context.Context, in *pipeline.InputRef) (*core.Network, error) {
	ints := func(name string) ([]int, error) {
		v, shape, err := readTensor(ctx, in, name, artifacts.Int32s)
		if err != nil {
			return nil, err
		}
		if len(shape) != 1 {
			return nil, inputErr(in, name, fmt.Errorf("shape %v, want one dimension", shape))
		}
		out := make([]int, len(v))
		for i, x := range v {
			out[i] = int(x)
		}
		return out, nil
	}
	sizes, err := ints("network_sizes")
	if err != nil {
		return nil, err
	}
	if len(sizes) < 2 {
		return nil, inputErr(in, "network_sizes", fmt.Errorf("%d sizes, want at least 2", len(sizes)))
	}
	for l, s := range sizes {
		if s < 1 || s > 1<<20 {
			return nil, inputErr(in, "network_sizes", fmt.Errorf("layer %d has size %d", l, s))
		}
	}
	L := len(sizes) - 1
	nw := &core.Network{Sizes: sizes, W: make([][]float32, L+1), B: make([][]float32, L+1), Mask: make([][]bool, L+1)}
	if nw.K, err = ints("network_k"); err != nil {
		return nil, err
	}
	hasOutput := map[string]bool{}
	for _, o := range in.Outputs() {
		hasOutput[o] = true
	}
	for l := 1; l <= L; l++ {
		nIn, nOut := sizes[l-1], sizes[l]
		var shape []int
		suffix := strconv.Itoa(l)
		if nw.W[l], shape, err = readTensor(ctx, in, "network_w"+suffix, artifacts.Float32s); err != nil {
			return nil, err
		}
		if err := checkShape(in, "network_w"+suffix, shape, []int{nOut, nIn}); err != nil {
			return nil, err
		}
		if nw.B[l], shape, err = readTensor(ctx, in, "network_b"+suffix, artifacts.Float32s); err != nil {
			return nil, err
		}
		if err := checkShape(in, "network_b"+suffix, shape, []int{nOut}); err != nil {
			return nil, err
		}
		if name := "network_mask" + suffix; hasOutput[name] {
			if nw.Mask[l], err = readMask(ctx, in, name, nOut, nIn); err != nil {
				return nil, err
			}
		}
	}
	if err := nw.Validate(); err != nil {
		return nil, fmt.Errorf("input %s: %w", in.CellID, err)
	}
	return nw, nil
}

// readMask decodes a layer's 0/1 mask output of shape [nOut, nIn].
func readMask(ctx context.Context, in *pipeline.InputRef, name string, nOut, nIn int) ([]bool, error) {
	raw, shape, err := readTensor(ctx, in, name, artifacts.Uint8s)
	if err != nil {
		return nil, err
	}
	if err := checkShape(in, name, shape, []int{nOut, nIn}); err != nil {
		return nil, err
	}
	m := make([]bool, len(raw))
	for i, v := range raw {
		if v > 1 {
			return nil, inputErr(in, name, fmt.Errorf("value %d at %d, want 0 or 1", v, i))
		}
		m[i] = v == 1
	}
	return m, nil
}

// inputErr names the input cell and its output in err.
func inputErr(in *pipeline.InputRef, name string, err error) error {
	return fmt.Errorf("input %s: %s: %w", in.CellID, name, err)
}

// checkShape fails, naming the input cell and output, unless shape is want.
func checkShape(in *pipeline.InputRef, name string, shape, want []int) error {
	if !slices.Equal(shape, want) {
		return inputErr(in, name, fmt.Errorf("shape %v, want %v", shape, want))
	}
	return nil
}
