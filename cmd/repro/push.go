package main

import (
	"context"
	"fmt"
	"strings"

	"repro/artifacts"
	"repro/pipeline"
)

func cmdPush() *command {
	var g globalFlags
	fs := newFlags("push", &g)
	remote := nonEmpty(fs, "remote", "", "`remote` to push to (default: the only one of settings.remotes)")
	refresh := fs.Bool("refresh", false, "replace the remote's records that have the same outputs by the store's (their CPU times and provenance)")
	allowDirty := fs.Bool("allow-dirty", false, "also push records of builds with uncommitted changes (they name the commit and the changes' digest): for a scratch remote, never the results ledger")
	return &command{
		name: "push", usage: "[--remote NAME] [--profile P] [--refresh] [--allow-dirty]",
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
record with other outputs is still only warned about.

A remote takes only records that name the commit that computed them, built
with nothing uncommitted ('make build' on a clean tree): push refuses,
before pushing anything, a store whose records the remote lacks and that
say "revision unknown" or "dirty" (--refresh leaves such records out).
--allow-dirty lets the dirty ones through, for a scratch remote shared while
developing; a record saying "revision unknown" never goes.`,
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
			if err := refuseUnnamed(r, p.Cells, *allowDirty); err != nil {
				return err // before anything is pushed
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
				if *refresh && !w && !other && pushable(&pc.Manifest.Provenance, *allowDirty) {
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

// refuseUnnamed returns an error listing the cached cells whose records
// push would add to r but that cannot name a clean source (revision
// unknown, or a dirty work tree), with how to make records that can.
func refuseUnnamed(r artifacts.Remote, cells []*pipeline.PlannedCell, allowDirty bool) error {
	var bad []string
	for _, pc := range cells {
		if pc.State != pipeline.Cached || pc.Manifest == nil {
			continue // not finished here: push skips it
		}
		pv := &pc.Manifest.Provenance
		if pushable(pv, allowDirty) {
			continue
		}
		if _, err := r.Manifest(pc.Key); err == nil {
			continue // the remote has it: nothing is written
		}
		why := "revision unknown"
		if pv.Dirty {
			why = fmt.Sprintf("built from revision %.12s with uncommitted changes", pv.Revision)
		}
		bad = append(bad, fmt.Sprintf("  %s: %s", pc.Cell.ID, why))
	}
	n := len(bad)
	if n == 0 {
		return nil
	}
	const most = 10
	if len(bad) > most {
		bad = append(bad[:most], fmt.Sprintf("  and %d more", len(bad)-most))
	}
	return fmt.Errorf(`%s cannot name the clean source that computed them; remote %s takes no such record (nothing pushed):
%s
A record names its source when a binary built by 'make build' from a clean
git tree (everything committed) computed it. Build so, then recompute them:
repro verify --recompute GLOB --push %s re-runs each, checks its outputs
against the store's and pushes the record naming the build (docs/audit.md)`,
		plural(n, "record"), r.Name(), strings.Join(bad, "\n"), r.Name())
}

// pushable reports whether push may write a record with provenance pv.
func pushable(pv *artifacts.Provenance, allowDirty bool) bool {
	return pv.NamesCleanSource() || allowDirty && pv.Dirty && pv.Revision != "" && pv.Revision != "unknown"
}
