// Package dataset turns the release files of MNIST, CIFAR-10 and CIFAR-100
// into the arrays the learners consume. Everything here is a pure function of
// its arguments except the download helpers (download.go), which do network
// and file I/O and take a context.
//
// Nouns:
//
//   - Raw: a decoded split (training or test) of a data set: uint8
//     intensities in the release's layout (MNIST: 784 pixels, row-major
//     28x28; CIFAR: the R, G, B planes of 1,024 bytes each, row-major 32x32)
//     and int32 labels.
//   - Prepared: the standardised float32 inputs of both splits, the
//     standardisation statistics and the raw intensities, as the prepare
//     stage stores them.
//   - held-out tenth: the stratified split of the official training set
//     (StratifiedHoldout) that replaces the test set in the held-out protocol.
//   - V1 features: the frozen random-patch front-end for CIFAR (V1Features).
//
// Randomness comes only from *core.RNG values built by core.NewRNG (see
// core/rng.go for the streams), drawn through this package's own bounded
// integer and shuffle routines (rand.go) so that the draws do not depend on
// the standard library's algorithms for IntN or Shuffle.
package dataset
