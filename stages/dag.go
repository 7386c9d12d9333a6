package stages

import "repro/pipeline"

// Stages returns every stage this binary knows, by name (what exec-cell
// needs to run a spec from the store).
func Stages() map[string]*pipeline.Stage {
	m := map[string]*pipeline.Stage{}
	for _, st := range all() {
		m[st.Name] = st
	}
	return m
}
