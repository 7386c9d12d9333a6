package main

import (
	"context"
	"fmt"
	"os"

	"repro/artifacts"
	"repro/pipeline"
)

func cmdPull() *command {
	var g globalFlags
	fs := newFlags("pull", &g)
	remote := nonEmpty(fs, "remote", "", "`remote` to pull from (default: the only one of settings.remotes)")
	return &command{
		name: "pull", usage: "[--remote NAME] [--profile P]",
		short: "copy the profile's cells a remote holds into the store",
		long: `Pull copies into the store every cell of the profile that the remote holds
with its outputs, verifying each blob against its digest. A damaged or
missing remote object is reported and skipped (a run computes that cell).
Cells whose outputs the remote does not keep (a ledger's data cells) stay
there: their records give the keys downstream, and a run rebuilds their
outputs only when a cell that runs reads them.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return usageErr("pull takes no arguments")
			}
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			r, _, err := w.remoteFlag(*remote)
			if err != nil {
				return err
			}
			// A remote that is not there is a mistyped path, not an
			// empty remote: "pulled 0 cells" would hide it.
			if _, err := os.Stat(r.Root()); err != nil {
				return fmt.Errorf("remote %s: %w: nothing to pull (settings.remotes.%s.path in %s names it; push creates it)", r.Name(), err, r.Name(), w.cfg.Path)
			}
			rr, err := pipeline.PrepareRemotes(ctx, w.store, w.graph, w.profile, vetted(ctx, []artifacts.Remote{r}), nil, nil)
			if err != nil {
				return err
			}
			for _, m := range rr.Misses {
				fmt.Fprintf(e.stderr, "remote miss: %s\n", m)
			}
			_, cached := rr.Plan.Counts()
			inRemote := rr.Plan.InRemote()
			cached -= inRemote
			fmt.Fprintf(e.stdout, "pulled %s (%.2f MB) from remote %s; %d cell(s) of profile %s in the store, %d with only their record in the remote\n",
				plural(rr.Pulled, "cell"), float64(rr.Bytes)/1e6, r.Name(), cached, w.profile, inRemote)
			if len(rr.Misses) > 0 {
				return &exitError{code: 1, err: fmt.Errorf("%d remote object(s) rejected", len(rr.Misses))}
			}
			return nil
		},
	}
}
