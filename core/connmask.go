package core

// ConnMasks draws the distance-dependent connectivity of an MLP with layer
// widths sizes (input, hidden..., readout) exactly as the local learner
// draws its own: for each weight layer but the readout, round(density *
// n_out * n_in) synapses without replacement with propensity
// exp(-d/lambda), the inputs on a height x width sheet (a square sheet when
// height*width != sizes[0]) and each hidden layer on a square one. Entry l
// is layer l+1's mask, n_out x n_in row-major (true = the synapse exists);
// the readout's entry is nil (dense). It panics if fewer than two widths
// are given.
func ConnMasks(sizes []int, height, width int, density, lambda float64, rng *RNG) [][]bool {
	if len(sizes) < 2 {
		panic("core: ConnMasks needs at least two layer widths")
	}
	L := len(sizes) - 1
	out := make([][]bool, L)
	for l := 1; l < L; l++ {
		pre := sheet(sizes[l-1], 0, 0)
		if l == 1 {
			pre = sheet(sizes[0], height, width)
		}
		out[l-1] = connMask(rng, pre, sheet(sizes[l], 0, 0), density, lambda, "dist")
	}
	return out
}
