package main

import (
	"context"
	"fmt"

	"repro/artifacts"
	"repro/pipeline"
)

func cmdPush() *command {
	var g globalFlags
	fs := newFlags("push", &g)
	remote := fs.String("remote", "", "remote to push to (default: the only one of settings.remotes)")
	refresh := fs.Bool("refresh", false, "replace the remote's records that have the same outputs by the store's (their CPU times and provenance)")
	return &command{
		name: "push", usage: "[--remote NAME] [--profile P] [--refresh]",
		short: "copy the profile's finished cells to a remote",
		long: `Push copies every cell of the profile that is finished in the store to a
remote: the outputs first (each verified against its digest; a remote with a
stages list keeps the outputs of those stages only), then the manifest. A
manifest the remote already holds is kept (the first push of a key wins).
Several machines may push to one remote at once. With the results ledger
(paper/cells), commit the new files after a push.

--refresh also replaces a record the remote holds by the store's when both
record the same outputs: the store's run of the cell (say, from an empty
store after the kernels got faster) becomes the one the remote shows, with
its CPU time, which orders and estimates later runs. No result changes; a
record with other outputs is still only warned about.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return usageErr("push takes no arguments")
			}
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			r, rs, err := w.remoteFlag(*remote)
			if err != nil {
				return err
			}
			p, err := w.plan()
			if err != nil {
				return err
			}
			var t artifacts.Transfer
			cells, wrote, refreshed, absent := 0, 0, 0, 0
			for _, pc := range p.Cells {
				if err := ctx.Err(); err != nil {
					return err
				}
				if pc.State != pipeline.Cached {
					absent++
					continue
				}
				tr, w, other, err := w.store.PushCell(r, pc.Manifest, rs.KeepsBlobsOf(pc.Cell.Stage.Name))
				if err != nil {
					return err
				}
				if other {
					fmt.Fprintf(e.stderr, "warning: %s: remote %s records other outputs for key %s (a stage that is not deterministic?)\n", pc.Cell.ID, r.Name(), pc.Key.Short())
				}
				if *refresh && !w && !other {
					ok, err := artifacts.RefreshRecord(r, pc.Manifest)
					if err != nil {
						return err
					}
					if ok {
						refreshed++
					}
				}
				cells++
				t.Blobs += tr.Blobs
				t.Bytes += tr.Bytes
				if w {
					wrote++
				}
			}
			fmt.Fprintf(e.stdout, "pushed %s of profile %s: %d new record(s), %s (%.2f MB)\n", plural(cells, "cell"), w.profile, wrote, plural(t.Blobs, "new blob"), float64(t.Bytes)/1e6)
			if *refresh {
				fmt.Fprintf(e.stdout, "refreshed %d record(s) with the same outputs\n", refreshed)
			}
			if absent > 0 {
				fmt.Fprintf(e.stdout, "%s not finished in this store (see repro plan)\n", plural(absent, "cell"))
			}
			fmt.Fprintln(e.stdout, remoteBanner(r))
			return nil
		},
	}
}
