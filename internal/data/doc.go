// Package data holds the data types every layer shares, below the learners
// and the data loaders alike: a labelled Dataset, a class-incremental Task,
// and the seeded random streams (Stream, RNG, NewRNG) that are the
// project's one definition of randomness. Package core re-exports them
// under their old names.
package data
