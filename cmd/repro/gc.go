package main

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"

	"repro/artifacts"
	"repro/pipeline"
)

func cmdGC() *command {
	var g globalFlags
	fs := newFlags("gc", &g)
	apply := fs.Bool("apply", false, "delete (default: dry run)")
	only := fs.Bool("profile-only", false, "keep only what --profile (or the default profile) reaches, not every profile's cells")
	return &command{
		name: "gc", usage: "[--apply] [--profile-only [--profile P]]",
		short: "remove what no profile's plan reaches (dry run unless --apply)",
		long: `Gc keeps every cell that the current plan of any profile of the config
reaches (and their outputs and logs) and removes the rest: cells of old
configurations and old stage versions, and files in blobs/ that are not
blobs. With --profile-only it keeps only what the --profile (or default)
profile reaches, so other profiles' cells go too. Entries younger than an
hour are kept, so a concurrent run is safe. Without --apply it only lists
what it would remove.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			profiles := []string{w.profile}
			if !*only {
				for _, name := range slices.Sorted(maps.Keys(w.matrix.Profiles)) {
					if name != w.profile {
						profiles = append(profiles, name)
					}
				}
			}
			keep := map[artifacts.Key]bool{}
			for _, name := range profiles {
				graph := w.graph
				if name != w.profile {
					if graph, err = w.matrix.Build(name); err != nil {
						return err
					}
				}
				p, err := pipeline.MakePlan(w.store, graph, name)
				if err != nil {
					return err
				}
				for _, pc := range p.Cells {
					if pc.KeyKnown {
						keep[pc.Key] = true
					}
				}
			}
			r, err := w.store.GC(ctx, keep, *apply)
			if err != nil {
				return err
			}
			verb := "would remove"
			if *apply {
				verb = "removed"
			}
			of := "profile"
			if len(profiles) > 1 {
				of = "profiles"
			}
			fmt.Fprintf(e.stdout, "%s %s, %s, %s, %s (%.1f MB); kept %d cells of %s %s\n",
				verb, plural(r.Manifests, "cell record"), plural(r.Specs, "spec"), plural(r.Blobs, "blob"), plural(r.Logs, "log"),
				float64(r.Bytes)/1e6, len(keep), of, strings.Join(profiles, ", "))
			if n := len(r.Strays); n > 0 {
				fmt.Fprintf(e.stdout, "left %s in the blob tree alone (not named as repro names blobs; not deleted): %s\n", plural(n, "other file"), strings.Join(r.Strays[:min(n, 3)], ", "))
			}
			if !*apply && len(r.Paths) > 0 {
				fmt.Fprintln(e.stdout, "run 'repro gc --apply' to delete them")
			}
			return nil
		},
	}
}
