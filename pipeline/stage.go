package pipeline

import (
	"context"
	"io"
)

// Stage is one kind of computation of the DAG: download, split, train, ...
// A stage is pure with respect to the engine: given the same params and the
// same input artifacts it must write byte-identical outputs, whatever the
// number of workers, host or time. That is what makes caching by key sound.
type Stage struct {
	// Name is the stage's short name ("train"); it prefixes every cell ID.
	Name string
	// Version is bumped whenever the stage's outputs change for unchanged
	// params and inputs (a code change that alters numbers). It is part of
	// every cell key, so a bump reruns the stage and all that depends on it.
	Version int
	// History lists the changes that touched some cells only: a fix that
	// changes the outputs of some configurations adds a Bump whose Applies
	// accepts their params, so only those cells (and what depends on them)
	// rerun. A cell's version is computed from it by CellVersion; entries
	// are never removed or narrowed, so no cell's version ever goes down.
	History []Bump
	// NewParams returns a pointer to the stage's params struct, filled with
	// its defaults. Exported fields carry `toml:"name"` tags; supported field
	// kinds are bool, int, int64, float64, string, slices of those, and
	// nested structs. The resolved struct is encoded canonically into the key.
	NewParams func() any
	// Cost, if set, estimates a cell's CPU seconds from its resolved params,
	// for the scheduler's order when the store holds no earlier run of the
	// same experiment (see schedule.go). Only ratios between cells matter.
	Cost func(params any) float64
	// Run computes one cell. It reads inputs and writes outputs only through
	// rc, and checks ctx between long steps.
	Run func(ctx context.Context, rc *RunContext) error
}

// RunContext is what a running cell sees of the engine.
type RunContext struct {
	// CellID is the cell's human name, e.g. "train/full/sequential/split1/seed3".
	CellID string
	// Params is the resolved params struct (the pointer type NewParams returns).
	Params any
	// Log receives the cell's log; it is stored with the cell's record.
	Log io.Writer
	// Settings are host-local settings that are not part of the cell key
	// because they cannot change outputs, e.g. "data.mirror", a local copy of
	// checksum-verified release files. Missing settings read as "".
	Settings map[string]string

	inputs   map[string]*InputRef
	outputs  map[string][]byte
	order    []string
	progress func(done, total int64)
}

// InputRef is an upstream cell's stored outputs, as seen by a running cell.
type InputRef struct {
	CellID  string
	outputs map[string]blobGetter
}

// blobGetter reads one stored output.
type blobGetter func(ctx context.Context) ([]byte, error)

// Input returns the upstream cell bound to name in the cell's inputs. It
// panics if the cell has no such input: that is a wiring bug in the DAG.
func (rc *RunContext) Input(name string) *InputRef {
	in, ok := rc.inputs[name]
	if !ok {
		panic("pipeline: cell " + rc.CellID + " has no input " + name)
	}
	return in
}

// HasInput reports whether the cell has an input bound to name.
func (rc *RunContext) HasInput(name string) bool { _, ok := rc.inputs[name]; return ok }

// InputNames lists the names the cell's inputs are bound to, sorted.
func (rc *RunContext) InputNames() []string { return sortedKeys(rc.inputs) }

// Outputs lists the upstream cell's output names, sorted.
func (in *InputRef) Outputs() []string { return sortedKeys(in.outputs) }

// Read returns the upstream output's bytes, verified against its digest.
func (in *InputRef) Read(ctx context.Context, output string) ([]byte, error) {
	get, ok := in.outputs[output]
	if !ok {
		return nil, &MissingOutputError{Cell: in.CellID, Output: output}
	}
	return get(ctx)
}

// Put stores an output of the running cell under name. Outputs are written
// to the store when Run returns nil; a failed cell stores nothing.
func (rc *RunContext) Put(name string, data []byte) {
	if _, dup := rc.outputs[name]; !dup {
		rc.order = append(rc.order, name)
	}
	rc.outputs[name] = data
}

// Progress reports how far the cell is (in units the stage chooses). It is
// safe to call often; the engine rate-limits what it shows.
func (rc *RunContext) Progress(done, total int64) {
	if rc.progress != nil {
		rc.progress(done, total)
	}
}

// MissingOutputError is returned when a cell asks an input for an output
// the upstream cell did not write.
type MissingOutputError struct{ Cell, Output string }

func (e *MissingOutputError) Error() string {
	return "input " + e.Cell + " has no output " + e.Output
}

// Bump is one entry of a stage's version history: from Version on, the
// outputs of the cells whose params Applies accepts differ from what
// earlier versions wrote, for the reason Why.
type Bump struct {
	Version int
	// Applies reports whether the change touched a cell with these
	// resolved params (the pointer type NewParams returns). It must not
	// panic on any params the stage accepts.
	Applies func(params any) bool
	Why     string
}

// CellVersion returns the version of the stage's cell with the resolved
// params: the largest of Version and the Version of every entry of History
// that applies to params. A maximum does not depend on the entries' order,
// and a cell touched by several changes takes the newest; bumping Version
// above every entry reruns every cell of the stage.
func (s *Stage) CellVersion(params any) int {
	v := s.Version
	for _, b := range s.History {
		if b.Version > v && b.Applies(params) {
			v = b.Version
		}
	}
	return v
}
