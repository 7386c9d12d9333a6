package pipeline

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"

	"repro/artifacts"
)

// keyFormat opens every key text; change it only to invalidate every cell.
const keyFormat = "repro cell v1"

// KeyDesc is everything a cell key depends on: the stage, its version for
// this cell, the canonical params and, per input name, the outputs of the
// upstream cell (names and digests). Nothing else enters: no paths, times,
// hosts or worker counts. Plan, Run, ExecuteCell and the remote check all
// build one and hash it with Key, so there is one definition of a key.
type KeyDesc struct {
	Stage   string
	Version int
	Params  []Param
	Inputs  map[string][]artifacts.Output
}

// Text is the canonical text the key hashes: one "name value" line per
// influence, inputs as "input <name>/<output> <digest>" sorted by name (Go's
// build cache builds action IDs the same way). `repro key CELL` prints it.
func (d *KeyDesc) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nstage %s\nversion %d\n", keyFormat, d.Stage, d.Version)
	for _, p := range d.Params {
		fmt.Fprintf(&b, "param %s %s\n", p.Name, p.Value)
	}
	for _, name := range sortedKeys(d.Inputs) {
		outs := append([]artifacts.Output(nil), d.Inputs[name]...)
		sort.Slice(outs, func(i, j int) bool { return outs[i].Name < outs[j].Name })
		for _, o := range outs {
			fmt.Fprintf(&b, "input %s/%s %s\n", name, o.Name, o.Digest)
		}
	}
	return b.String()
}

// Key is the cell key: the SHA-256 of Text.
func (d *KeyDesc) Key() artifacts.Key { return sha256.Sum256([]byte(d.Text())) }

// cellKeyDesc describes cell c, whose canonical params are params, given its
// inputs' manifests (manifestOf returns nil for an input not known yet, and
// then ok is false: the key cannot be computed before every input is).
func cellKeyDesc(c *Cell, params []Param, manifestOf func(*Cell) *artifacts.Manifest) (d *KeyDesc, ok bool) {
	d = &KeyDesc{Stage: c.Stage.Name, Version: c.Stage.CellVersion(c.Params), Params: params,
		Inputs: make(map[string][]artifacts.Output, len(c.Inputs))}
	for _, in := range c.Inputs {
		m := manifestOf(in.Cell)
		if m == nil {
			return nil, false
		}
		d.Inputs[in.Name] = m.Outputs
	}
	return d, true
}

// recordKeyDesc describes the cell a stored record (spec or manifest) names,
// from its stage, version, canonical params and its inputs' outputs.
func recordKeyDesc(stage string, version int, params []Param, inputs []artifacts.Input) *KeyDesc {
	d := &KeyDesc{Stage: stage, Version: version, Params: params,
		Inputs: make(map[string][]artifacts.Output, len(inputs))}
	for _, in := range inputs {
		d.Inputs[in.Name] = in.Outputs
	}
	return d
}
