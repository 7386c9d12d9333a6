package main

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"

	"repro/cellid"
	"repro/experiments"
	"repro/presets"
)

// runShowExperiment prints an experiment's config as a diff from the
// default system (repro show experiment NAME).
func runShowExperiment(e *env, w *workspace, name string) error {
	ec, err := w.matrix.ExperimentConfig(w.profile, name)
	if err != nil {
		return err
	}
	out := e.stdout
	fmt.Fprintf(out, "experiment %s: %s learner on %s, profile %s\n", ec.Name, ec.Learner, ec.Dataset, ec.Profile)
	if ec.Preset == "" {
		fmt.Fprintf(out, "preset: none (the default system)\n")
	} else {
		fmt.Fprintf(out, "preset: %s (%s: %s)\n", ec.Preset, presets.BuiltinPath, strings.Join(ec.Layers, " -> "))
	}
	printConfigDiffs(out, "", ec.Protocols)
	return nil
}

// printConfigDiffs prints per protocol the fields that differ from the
// default system, protocols with the same fields together.
func printConfigDiffs(out io.Writer, indent string, diffs []experiments.ConfigDiff) {
	for i := 0; i < len(diffs); {
		j, protos := i+1, []string{diffs[i].Protocol}
		for j < len(diffs) && slices.Equal(diffs[j].Fields, diffs[i].Fields) {
			protos = append(protos, diffs[j].Protocol)
			j++
		}
		fs := diffs[i].Fields
		if len(fs) == 0 {
			fmt.Fprintf(out, "%s%s: the default system\n", indent, strings.Join(protos, ", "))
			i = j
			continue
		}
		fmt.Fprintf(out, "%s%s: %d field(s) differ from the default system\n", indent, strings.Join(protos, ", "), len(fs))
		tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
		fmt.Fprintf(tw, "%s  field\tvalue\tdefault\n", indent)
		for _, f := range fs {
			fmt.Fprintf(tw, "%s  %s\t%s\t%s\n", indent, f.Field, orUnset(f.Value), orUnset(f.Default))
		}
		tw.Flush()
		i = j
	}
}

func orUnset(v string) string {
	if v == "" {
		return "(unset)"
	}
	return v
}

// printTrainDiff prints, for a train cell, its experiment's config under
// the current pipeline.toml as a diff from the default system (repro why).
func printTrainDiff(out io.Writer, w *workspace, id string) {
	t, ok := cellid.ParseTrain(id)
	if !ok {
		return
	}
	ec, err := w.matrix.ExperimentConfig(w.profile, t.Experiment)
	if err != nil {
		return // an experiment no longer in pipeline.toml: its record above is all there is
	}
	for _, d := range ec.Protocols {
		if d.Protocol == t.Protocol {
			fmt.Fprintf(out, "    against the default system (current pipeline.toml; repro show experiment %s):\n", t.Experiment)
			printConfigDiffs(out, "      ", []experiments.ConfigDiff{d})
		}
	}
}
