package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"repro/artifacts"
	"repro/pipeline"
	"repro/stages"
)

// openRemotes opens every remote of settings.remotes, in name order (the
// order runs ask them in), after checking that the stages each keeps the
// outputs of exist.
func openRemotes(cfg *pipeline.Config) ([]artifacts.Remote, error) {
	known := stages.Stages()
	var out []artifacts.Remote
	for _, name := range cfg.RemoteNames() {
		r, rs, err := cfg.OpenRemote(name)
		if err != nil {
			return nil, err
		}
		for _, s := range rs.Stages {
			if known[s] == nil {
				key := "settings.remotes." + name + ".stages"
				return nil, &pipeline.ConfigError{Path: cfg.Path, Line: cfg.KeyLine(key), Key: key, Msg: fmt.Sprintf("no stage %q", s)}
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// remoteFlag picks the remote a push or pull names: --remote NAME, or the
// only one configured.
func (w *workspace) remoteFlag(name string) (*artifacts.DirRemote, *pipeline.RemoteSettings, error) {
	names := w.cfg.RemoteNames()
	switch {
	case len(names) == 0:
		return nil, nil, fmt.Errorf("%s: no remote configured (add a [settings.remotes.NAME] table with a path)", w.cfg.Path)
	case name == "" && len(names) > 1:
		return nil, nil, usageErr("several remotes (%s): name one with --remote", strings.Join(names, ", "))
	case name == "":
		name = names[0]
	}
	if !slices.Contains(names, name) {
		return nil, nil, usageErr("--remote %q: no such remote in %s (have %s)", name, w.cfg.Path, strings.Join(names, ", "))
	}
	return w.cfg.OpenRemote(name)
}

// readOutput returns an output blob of a planned cell that is cached or in
// a remote, verified against its digest.
func (w *workspace) readOutput(pc *pipeline.PlannedCell, d artifacts.Digest) ([]byte, error) {
	b, err := w.store.Get(d)
	if err == nil || pc.Remote == "" {
		return b, err
	}
	for _, r := range w.remotes {
		if r.Name() == pc.Remote {
			return w.store.GetRemote(r, d)
		}
	}
	return nil, err
}

// remoteBanner describes a remote for push and pull output.
func remoteBanner(r *artifacts.DirRemote) string {
	files, bytes, err := artifacts.DirSize(r.Root())
	if err != nil {
		return fmt.Sprintf("remote %s (%s: %v)", r.Name(), r.Root(), err)
	}
	keys, _ := r.Keys()
	return fmt.Sprintf("remote %s (%s) holds %s in %s, %.2f MB", r.Name(), r.Root(), plural(len(keys), "cell"), plural(files, "file"), float64(bytes)/1e6)
}

func cmdPush() *command {
	var g globalFlags
	fs := newFlags("push", &g)
	remote := fs.String("remote", "", "remote to push to (default: the only one of settings.remotes)")
	return &command{
		name: "push", usage: "[--remote NAME] [--profile P]",
		short: "copy the profile's finished cells to a remote",
		long: `Push copies every cell of the profile that is finished in the store to a
remote: the outputs first (each verified against its digest; a remote with a
stages list keeps the outputs of those stages only), then the manifest. A
manifest the remote already holds is kept (the first push of a key wins).
Several machines may push to one remote at once. With the results ledger
(paper/cells), commit the new files after a push.`,
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
			cells, wrote, absent := 0, 0, 0
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
				cells++
				t.Blobs += tr.Blobs
				t.Bytes += tr.Bytes
				if w {
					wrote++
				}
			}
			fmt.Fprintf(e.stdout, "pushed %s of profile %s: %d new record(s), %s (%.2f MB)\n", plural(cells, "cell"), w.profile, wrote, plural(t.Blobs, "new blob"), float64(t.Bytes)/1e6)
			if absent > 0 {
				fmt.Fprintf(e.stdout, "%s not finished in this store (see repro plan)\n", plural(absent, "cell"))
			}
			fmt.Fprintln(e.stdout, remoteBanner(r))
			return nil
		},
	}
}

func cmdPull() *command {
	var g globalFlags
	fs := newFlags("pull", &g)
	remote := fs.String("remote", "", "remote to pull from (default: the only one of settings.remotes)")
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
			rr, err := pipeline.PrepareRemotes(ctx, w.store, w.graph, w.profile, []artifacts.Remote{r}, nil, nil)
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

// recordOnly marks a cell whose remote holds its record but not its outputs.
func recordOnly(pc *pipeline.PlannedCell) string {
	if pc.RemoteBlobs {
		return ""
	}
	return " (record only)"
}

// remoteCount is the plan summary's ", N in remote R" part.
func remoteCount(p *pipeline.Plan, n int) string {
	if n == 0 {
		return ""
	}
	names := map[string]bool{}
	for _, pc := range p.Cells {
		if pc.State == pipeline.InRemote {
			names[pc.Remote] = true
		}
	}
	var ns []string
	for name := range names {
		ns = append(ns, name)
	}
	sort.Strings(ns)
	return fmt.Sprintf(", %d in remote %s", n, strings.Join(ns, ", "))
}

// useRemotes pulls, before a run, what the remotes hold of it (verified;
// a damaged object is reported and its cell computed instead) and returns
// what the run takes from them; nil without remotes.
func (w *workspace) useRemotes(ctx context.Context, e *env, g *pipeline.Graph, only func(*pipeline.Cell) bool) (*pipeline.RemoteRun, error) {
	if len(w.remotes) == 0 {
		return nil, nil
	}
	rr, err := pipeline.PrepareRemotes(ctx, w.store, g, w.profile, w.remotes, only, nil)
	if err != nil {
		return nil, err
	}
	for _, m := range rr.Misses {
		fmt.Fprintf(e.stderr, "remote miss (the cell is computed instead): %s\n", m)
	}
	return rr, nil
}

// remoteSummary is the run summary's account of the cells taken from
// remotes: pulled (before the run, or during it once their keys were
// known) or left there as records only.
func remoteSummary(rr *pipeline.RemoteRun, rep *pipeline.RunReport) string {
	if rr == nil || rr.Prefetched+rep.Remote == 0 {
		return ""
	}
	recordsOnly := rep.Remote - (rr.Pulled - rr.Prefetched)
	return fmt.Sprintf(", %d from remotes (%d pulled, %.2f MB; %d records only)", rr.Prefetched+rep.Remote, rr.Pulled, float64(rr.Bytes)/1e6, recordsOnly)
}

// manifestGetter reads a cell's record by key, and names the remote it came
// from ("" for the store).
type manifestGetter func(artifacts.Key) (*artifacts.Manifest, string, error)

// manifest reads cell k's record from the store, or else from the first
// remote that holds it.
func (w *workspace) manifest(k artifacts.Key) (*artifacts.Manifest, string, error) {
	m, err := w.store.GetManifest(k)
	if err == nil || !errors.Is(err, artifacts.ErrNotFound) {
		return m, "", err
	}
	for _, r := range w.remotes {
		if rm, rerr := r.Manifest(k); rerr == nil {
			return rm, r.Name(), nil
		}
	}
	return nil, "", err
}
