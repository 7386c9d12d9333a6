package backprop

// SetConn gives the network fixed sparse wiring: masks[l], when non-nil,
// is weight layer l's connectivity, Sizes[l+1] x Sizes[l] row-major (true
// = the synapse exists, core.ConnMasks' layout); a nil entry (the readout)
// stays dense. The absent synapses are zeroed now and by every Rewire. It
// panics if a mask's length does not match its layer.
func (n *Net) SetConn(masks [][]bool) {
	n.conn = make([][]bool, len(n.W))
	for l, m := range masks {
		if m == nil {
			continue
		}
		in, out := n.Sizes[l], n.Sizes[l+1]
		if len(m) != in*out {
			panic("backprop: SetConn mask does not match its layer")
		}
		c := make([]bool, in*out)
		for i := range out {
			for j := range in {
				c[j*out+i] = m[i*in+j]
			}
		}
		n.conn[l] = c
	}
	n.Rewire()
}

// Rewire zeroes the weights of absent synapses (no-op on a dense network).
// The learners call it after every optimiser step: Adam's moments and the
// coupled L2 would otherwise move a zeroed synapse again.
func (n *Net) Rewire() {
	for l, c := range n.conn {
		if c == nil {
			continue
		}
		w := n.W[l]
		for s, keep := range c {
			if !keep {
				w[s] = 0
			}
		}
	}
}
