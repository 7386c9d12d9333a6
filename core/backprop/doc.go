// Package backprop holds the paper's backpropagation references: BP+ER,
// DER++, ER-ACE, A-GEM and a backprop MLP with k-WTA hidden layers run under
// the local learner's schedule (the paper's "The mechanism on a backprop
// learner"). It follows the authors' versions, not the common Mammoth ones:
// Adam with coupled L2 1e-3, buffer
// draws with replacement, the per-sample sum of squared errors, DER++'s alpha
// on a per-sample sum, ER-ACE masking every absent class from the first
// batch, A-GEM on the stream-long reservoir.
//
// Nouns:
//
//   - Net: a fully connected ReLU network (optionally k-WTA hidden layers)
//     with a linear readout, float32, its weights and biases in one flat
//     parameter vector. Weights are stored pre-major (W[l] is
//     Sizes[l] x Sizes[l+1], row j = the outgoing synapses of unit j), the
//     transpose of PyTorch's layout, so that the forward pass and the weight
//     gradient are both row accumulations.
//   - Pass: the activations and gradients of one forward/backward pass over
//     a batch of rows; sized once, reused every step.
//   - Adam: the optimiser state (moments, one step counter); Step updates
//     every parameter, StepMasked only those inside a synapse mask.
//   - Config: one learner's settings, read directly from a pipeline.toml
//     cell's params; Train runs it.
//
// Like the rest of core, nothing here does I/O, logs or keeps global state;
// all randomness comes from *core.RNG values (init stream for the weights,
// run stream for everything else). Arithmetic is float32 in a fixed order,
// single-threaded, so a run is bit-for-bit reproducible. The vector kernels
// (package internal/kernels: AVX2, FMA, AVX-512, chosen by the CPU) give the
// bits of the portable Go code: the sparse row kernel and Adam use separate
// multiplies and adds, the dense four-row kernel one fused multiply-add per
// term, which the portable code reproduces with a correctly rounded fma32.
// The tests check both paths against each other.
package backprop
