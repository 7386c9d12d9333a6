package stages

import "repro/pipeline"

// all lists every stage, in DAG order.
func all() []*pipeline.Stage {
	return []*pipeline.Stage{Download, Prepare, V1, Split, Streams, Train, Spike, Energy, Synth, Aggregate, Render, Reproduction, Figure}
}
