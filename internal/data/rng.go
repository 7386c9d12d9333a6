package data

import "math/rand/v2"

// Stream names one independent random stream derived from a seed. Two RNGs
// with the same seed and different streams are statistically independent;
// the same (seed, stream) always yields the same sequence on every platform.
//
// This is the one place where the project's randomness is defined:
//
//   - the generator is PCG-DXSM (math/rand/v2.PCG), state (seed, stream);
//   - a training run with seed s uses NewRNG(s, StreamInit) for the network's
//     initialisation (weights, cell types, connectivity) and NewRNG(s,
//     StreamRun) for everything during the run (epoch permutations, reservoir
//     writes, replay draws, random rotation), mirroring the reference's one
//     init generator and one run generator both seeded by the run seed;
//   - the held-out split is drawn exactly as the reference draws it, with
//     numpy's RandomState(splitSeed) (MT19937, internal/dataset/mt19937.go),
//     split seed 1234 (split 1) or 4321 (split 2), independent of any run
//     seed, so the held-out tenth is the paper's own;
//   - the V1 front-end draws its patches from NewRNG(7, StreamV1);
//   - the bootstrap of the statistics uses NewRNG(seed, StreamBootstrap);
//   - spike-count training (spike_train) draws its Poisson counts from
//     NewRNG(seed, StreamSpike), as the reference draws them from torch's
//     global generator rather than the run generator;
//   - spike conversion (core/spike) draws its Bernoulli input spikes from
//     NewRNG(s, StreamConvert), s the converted network's training seed,
//     the same sequence for every time budget (the reference reseeds its
//     generator for each budget);
//   - the backprop learner's distance-dependent connectivity (ConnMasks)
//     draws from NewRNG(s, StreamConn), apart from its weights' StreamInit
//     (the reference draws it from a separate CortexNet seeded alike; one
//     shared stream would tie which synapses survive to their initial
//     values).
//
// The V1 front-end (internal/dataset) draws bounded integers and shuffles
// with its own Lemire multiply-shift and Fisher-Yates over these
// generators, so its draws do not depend on the standard library's
// helpers; the learners use math/rand/v2's IntN and Perm on them, which a
// Go release could in principle change (every cell key includes the stage
// version, and the golden tests catch such a change).
//
// Apart from the split, the draws differ from the reference's (torch's
// generators are not reproduced); the structure (which stream feeds which
// decision, and in which order) is kept.
type Stream uint64

const (
	StreamInit      Stream = 0x696e6974 // "init"
	StreamRun       Stream = 0x72756e   // "run"
	StreamV1        Stream = 0x7631     // "v1"
	StreamBootstrap Stream = 0x626f6f74 // "boot"
	StreamSpike     Stream = 0x7370696b // "spik"
	StreamConvert   Stream = 0x636f6e76 // "conv"
	StreamConn      Stream = 0x636f6e6e // "conn"
)

// RNG is the random source every stochastic function of the project takes.
type RNG = rand.Rand

// NewRNG returns the generator for (seed, stream).
func NewRNG(seed int64, stream Stream) *RNG {
	return rand.New(rand.NewPCG(uint64(seed), uint64(stream)))
}
