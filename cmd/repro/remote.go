package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"repro/artifacts"
	"repro/internal/ledgertrust"
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

// historyRemotes are the remotes whose records order a run's cells and
// give plan --estimate its costs: the open ones, or with --no-remote
// (which runs and plans as if they held nothing) the configured ones
// opened anew, since reading a recorded CPU time takes no result from
// them. "The whole profile from an empty store" is then ordered and
// estimated from the ledger's recorded times.
func (w *workspace) historyRemotes(noRemote bool) ([]artifacts.Remote, error) {
	if !noRemote {
		return w.remotes, nil
	}
	return openRemotes(w.cfg)
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
	rr, err := pipeline.PrepareRemotes(ctx, w.store, g, w.profile, vetted(ctx, w.remotes), only, nil)
	if err != nil {
		return nil, err
	}
	for _, m := range rr.Misses {
		fmt.Fprintf(e.stderr, "remote miss (the cell is computed instead): %s\n", m)
	}
	return rr, nil
}

// vetted wraps each directory remote in a git work tree (the results
// ledger) so that its records are checked against the ledger's git history
// before a run or a pull takes them (package ledgertrust): a record edited
// in this clone, not yet committed, or whose committed history changes its
// outputs reads as damaged, and the cell is computed instead.
func vetted(ctx context.Context, rs []artifacts.Remote) []artifacts.Remote {
	out := make([]artifacts.Remote, len(rs))
	for i, r := range rs {
		out[i] = r
		if d, ok := r.(*artifacts.DirRemote); ok {
			out[i] = ledgertrust.NewRemote(ctx, d)
		}
	}
	return out
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
