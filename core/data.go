package core

import "repro/internal/data"

// The data types and random streams live in internal/data, below both the
// learners and the data loaders (internal/dataset); core names them as
// before.
type (
	// Dataset is data.Dataset: a labelled set of samples, row-major.
	Dataset = data.Dataset
	// Task is data.Task: the classes of one phase of a stream.
	Task = data.Task
	// RNG is data.RNG: the random source every stochastic function takes.
	RNG = data.RNG
	// Stream is data.Stream: one independent random stream of a seed.
	Stream = data.Stream
)

// The random streams (data.Stream's documentation says which feeds what).
const (
	StreamInit      = data.StreamInit
	StreamRun       = data.StreamRun
	StreamV1        = data.StreamV1
	StreamBootstrap = data.StreamBootstrap
	StreamSpike     = data.StreamSpike
	StreamConvert   = data.StreamConvert
	StreamConn      = data.StreamConn
)

// NewRNG returns the generator for (seed, stream) (data.NewRNG).
func NewRNG(seed int64, stream Stream) *RNG { return data.NewRNG(seed, stream) }
