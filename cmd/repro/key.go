package main

import (
	"context"
	"fmt"
	"strings"

	"repro/pipeline"
)

func cmdKey() *command {
	var g globalFlags
	fs := newFlags("key", &g)
	return &command{
		name: "key", usage: "<cell ID>",
		short: "print the exact text a cell's key hashes",
		long: `Key prints the canonical text whose SHA-256 is the cell's key (as Go's
GODEBUG=gocachehash=1 does for build actions): the key format, the stage and
its version for this cell, one "param <name> <value>" line per resolved
param, and one "input <input>/<output> <digest>" line per output of every
input cell. Nothing else enters a key: no path, time, host or worker count.
So 'repro key CELL | sha256sum' is the cell's key, and diffing the text of
two cells (or of one cell before and after a change) shows why their keys
differ. A cell's key is known once every input is computed; before that key
names the input that is missing.`,
		flags: fs, maxArgs: 1,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) != 1 {
				return usageErr("key takes one cell ID")
			}
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			if w.graph.Cell(args[0]) == nil {
				return usageErr("%q is not a cell ID of profile %s (repro dag lists the cell IDs)", args[0], w.profile)
			}
			p, err := w.plan()
			if err != nil {
				return err
			}
			text, ok := p.Cell(args[0]).KeyText()
			if !ok {
				return fmt.Errorf("cell %s: key not known yet: %s", args[0], missingInputs(p, args[0]))
			}
			_, err = fmt.Fprint(e.stdout, text)
			return err
		},
	}
}

// missingInputs names the inputs of cell id that are not computed.
func missingInputs(p *pipeline.Plan, id string) string {
	var ids []string
	for _, in := range p.Cell(id).Cell.Inputs {
		if up := p.Cell(in.Cell.ID); up.Manifest == nil {
			ids = append(ids, in.Cell.ID)
		}
	}
	return "input " + strings.Join(ids, ", ") + " not computed (repro run --only " + id + ")"
}
