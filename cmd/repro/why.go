package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"

	"repro/artifacts"
	"repro/pipeline"
)

func cmdWhy() *command {
	var g globalFlags
	fs := newFlags("why", &g)
	depth := fs.Int("depth", 64, "how many levels of inputs to follow")
	return &command{
		name: "why", usage: "<cell ID | key | digest | prefix | table:row:column | number ID>",
		short: "print the provenance of a cell, an artifact or a rendered number",
		long: `Why prints where something came from: the stage and its version, the
resolved config, the seed, the outputs, the code revision (and whether the
work tree was dirty), Go version, host, start and end time, wall and CPU
seconds; then every input, recursively, down to the raw data files and their
SHA-256 checksums. The argument may be a cell ID from 'repro plan --all', a
cell key or blob digest (or a unique prefix of at least 6 hex digits), or a
rendered number: paper/tables/<table>.tex:<row>:<column> or its ID.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) != 1 {
				return usageErr("why takes one argument")
			}
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			if handled, err := whyNumber(ctx, e, w, args[0]); handled {
				return err
			}
			// why prints digests as sha256:<hex>; take them back that way.
			keys, err := resolveWhy(w, strings.TrimPrefix(args[0], "sha256:"))
			if err != nil {
				return err
			}
			seen := map[artifacts.Key]bool{}
			for _, k := range keys {
				if err := printProvenance(e.stdout, w.manifest, k, "", *depth, seen); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

var hexRe = regexp.MustCompile(`^[0-9a-f]{6,64}$`)

// resolveWhy finds the cell keys an argument names.
func resolveWhy(w *workspace, arg string) ([]artifacts.Key, error) {
	if c := w.graph.Cell(arg); c != nil {
		p, err := w.plan()
		if err != nil {
			return nil, err
		}
		pc := p.Cell(arg)
		if pc.State == pipeline.Stale {
			return nil, fmt.Errorf("cell %s is not computed (would run: %s)", arg, strings.Join(pc.Reasons, "; "))
		}
		return []artifacts.Key{pc.Key}, nil
	}
	if !hexRe.MatchString(arg) {
		return nil, fmt.Errorf("%q is neither a cell ID of profile %s nor a hex key or digest", arg, w.profile)
	}
	// A cell key (prefix), in the store or a remote?
	srcs := w.recordSources()
	seen := map[artifacts.Key]bool{}
	var all, keys []artifacts.Key
	for _, r := range srcs {
		ks, err := r.Keys()
		if err != nil {
			return nil, err
		}
		for _, k := range ks {
			if !seen[k] {
				seen[k] = true
				all = append(all, k)
				if strings.HasPrefix(k.String(), arg) {
					keys = append(keys, k)
				}
			}
		}
	}
	if len(keys) > 1 {
		return nil, fmt.Errorf("prefix %s names %d cells; give more digits", arg, len(keys))
	}
	if len(keys) == 1 {
		return keys, nil
	}
	// An output digest (prefix): the cells that produced it.
	for _, k := range all {
		m, _, err := w.manifest(k)
		if err != nil {
			continue
		}
		for _, o := range m.Outputs {
			if strings.HasPrefix(o.Digest.String(), arg) {
				keys = append(keys, k)
				break
			}
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("no cell or artifact %s in store %s", arg, w.store.Root())
	}
	return keys, nil
}

// printProvenance prints cell k's record and, indented, its inputs'.
func printProvenance(out io.Writer, get manifestGetter, k artifacts.Key, indent string, depth int, seen map[artifacts.Key]bool) error {
	m, from, err := get(k)
	if err != nil {
		if errors.Is(err, artifacts.ErrNotFound) {
			fmt.Fprintf(out, "%scell %s: no record in the store\n", indent, k.Short())
			return nil
		}
		return err
	}
	fmt.Fprintf(out, "%scell %s\n", indent, m.CellID)
	in := indent + "  "
	if seen[k] {
		fmt.Fprintf(out, "%skey %s (shown above)\n", in, k)
		return nil
	}
	seen[k] = true
	pv := m.Provenance
	fmt.Fprintf(out, "%skey      %s\n", in, k)
	fmt.Fprintf(out, "%sstage    %s v%d\n", in, m.Stage, m.StageVersion)
	ps, _ := pipeline.ParseParamsText(m.Params)
	for i, p := range ps {
		label := "config  "
		if i > 0 {
			label = "        "
		}
		fmt.Fprintf(out, "%s%s %s = %s\n", in, label, p.Name, p.Value)
	}
	for _, o := range m.Outputs {
		fmt.Fprintf(out, "%soutput   %s sha256:%s (%d bytes)\n", in, o.Name, o.Digest, o.Size)
	}
	dirty := ""
	if pv.Dirty {
		dirty = " (dirty work tree)"
	}
	fmt.Fprintf(out, "%scode     revision %s%s, %s\n", in, pv.Revision, dirty, pv.GoVersion)
	fmt.Fprintf(out, "%shost     %s (%s executor%s)\n", in, pv.Host, pv.Executor, slurmSuffix(pv.SlurmJob))
	fmt.Fprintf(out, "%stime     %s -> %s (%.2f s wall, %.2f s cpu)\n", in, pv.Start.Format("2006-01-02 15:04:05Z"), pv.End.Format("15:04:05Z"), pv.WallSecs, pv.CPUSecs)
	fmt.Fprintf(out, "%slog      sha256:%s\n", in, m.Log)
	if from != "" {
		fmt.Fprintf(out, "%srecord   from remote %s (not in this store)\n", in, from)
	}
	if depth <= 0 {
		return nil
	}
	for _, inp := range m.Inputs {
		fmt.Fprintf(out, "%sinput %s:\n", in, inp.Name)
		if err := printProvenance(out, get, inp.Key, in+"  ", depth-1, seen); err != nil {
			return err
		}
	}
	return nil
}

func slurmSuffix(id string) string {
	if id == "" {
		return ""
	}
	return ", slurm job " + id
}
