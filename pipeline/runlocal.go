package pipeline

import (
	"context"
	"fmt"
	"io"
)

// RunStage runs one stage in memory, without a store: inputs maps an input
// name to that upstream cell's outputs. Stage tests use it to pin a stage's
// output digests on tiny inputs; the engine itself runs stages through
// ExecuteCell, which binds inputs from the store. params must be the pointer
// type st.NewParams returns.
func RunStage(ctx context.Context, st *Stage, cellID string, params any, inputs map[string]map[string][]byte, settings map[string]string, log io.Writer) (map[string][]byte, []string, error) {
	if log == nil {
		log = io.Discard
	}
	rc := &RunContext{
		CellID: cellID, Params: params, Log: log, Settings: settings,
		inputs:  make(map[string]*InputRef, len(inputs)),
		outputs: make(map[string][]byte),
	}
	for name, outs := range inputs {
		ref := &InputRef{CellID: name, outputs: make(map[string]blobGetter, len(outs))}
		for o, data := range outs {
			data := data
			ref.outputs[o] = func(context.Context) ([]byte, error) { return data, nil }
		}
		rc.inputs[name] = ref
	}
	if err := st.Run(ctx, rc); err != nil {
		return nil, nil, fmt.Errorf("stage %s: %w", st.Name, err)
	}
	return rc.outputs, rc.order, nil
}
