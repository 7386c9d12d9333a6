// Package core holds the numerics of the paper: the local learner, its
// consolidation machinery, and the shared pieces (random streams, k-WTA,
// reservoir buffer, metrics) that the backprop baselines in core/backprop
// reuse.
//
// Nothing here does I/O, takes a context, logs or keeps global state: every
// source of randomness is an *RNG passed in, every input a value. Callers
// (stages/) check for cancellation between calls.
package core
