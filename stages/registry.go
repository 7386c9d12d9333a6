package stages

import "repro/pipeline"

// all lists every stage, in DAG order.
func all() []*pipeline.Stage {
	return []*pipeline.Stage{Download, Prepare, V1, Split, Streams, Train, Spike, Energy, Synth, Aggregate, Render, Reproduction, Figure}
}

// Stages returns every stage this binary knows, by name (what exec-cell
// needs to run a spec from the store).
func Stages() map[string]*pipeline.Stage {
	m := map[string]*pipeline.Stage{}
	for _, st := range all() {
		m[st.Name] = st
	}
	return m
}
