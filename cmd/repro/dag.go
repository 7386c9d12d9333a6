package main

import (
	"context"
	"fmt"
	"strings"
)

func cmdDag() *command {
	var g globalFlags
	fs := newFlags("dag", &g)
	dot := fs.Bool("dot", false, "print Graphviz dot")
	byStage := fs.Bool("stages", false, "one node per stage")
	return &command{
		name: "dag", usage: "[--dot] [--stages]",
		short: "print the DAG (Graphviz with --dot)",
		long: `Dag prints every cell of the profile with its inputs, one line per cell
("cell <- input=cell, ..."), in the order a run resolves them. With --dot it
prints the graph for Graphviz (repro dag --dot | dot -Tsvg > dag.svg);
--stages collapses it to one node per stage.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			if !*dot {
				for _, c := range w.graph.Cells {
					var ins []string
					for _, in := range c.Inputs {
						ins = append(ins, in.Name+"="+in.Cell.ID)
					}
					fmt.Fprintf(e.stdout, "%s <- %s\n", c.ID, strings.Join(ins, ", "))
				}
				return nil
			}
			fmt.Fprintln(e.stdout, "digraph repro {\n  rankdir=LR;\n  node [shape=box, fontsize=10];")
			edges := map[string]bool{}
			for _, c := range w.graph.Cells {
				from := c.ID
				if *byStage {
					from = c.Stage.Name
				}
				for _, in := range c.Inputs {
					to := in.Cell.ID
					if *byStage {
						to = in.Cell.Stage.Name
					}
					edge := fmt.Sprintf("  %q -> %q;", to, from)
					if !edges[edge] {
						edges[edge] = true
						fmt.Fprintln(e.stdout, edge)
					}
				}
				if len(c.Inputs) == 0 && !*byStage {
					fmt.Fprintf(e.stdout, "  %q;\n", c.ID)
				}
			}
			fmt.Fprintln(e.stdout, "}")
			return nil
		},
	}
}
