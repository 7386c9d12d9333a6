package main

import (
	"fmt"
	"os"

	"repro/artifacts"
	"repro/experiments"
	"repro/pipeline"
)

// workspace is a loaded pipeline: config, profile, store and graph.
type workspace struct {
	cfg      *pipeline.Config
	profile  string
	matrix   *experiments.Matrix
	store    *artifacts.Store
	graph    *pipeline.Graph
	settings map[string]string
	// remotes are the remotes of settings.remotes, by name (none with
	// --no-remote).
	remotes []artifacts.Remote
	// memory is what cells may use (machineMemory; 0 = unknown).
	memory int64
	// recordIndex caches records() (verdict.go).
	recordIndex map[string]*artifacts.Manifest
}

func openWorkspace(e *env, g *globalFlags) (*workspace, error) {
	cfg, err := pipeline.LoadConfig(g.config)
	if err != nil {
		return nil, err
	}
	m, err := experiments.Load(cfg)
	if err != nil {
		return nil, err
	}
	name, _, err := m.Profile(g.profile)
	if err != nil {
		if g.profile != "" {
			return nil, &exitError{code: 2, err: err} // a bad --profile is a bad argument
		}
		return nil, err
	}
	graph, err := m.Build(name)
	if err != nil {
		return nil, err
	}
	mem, err := machineMemory(e.getenv)
	if err != nil {
		return nil, err
	}
	if err := m.CheckMemory(name, mem); err != nil {
		return nil, err // before the store is opened: nothing is written
	}
	dir := g.store
	if dir == "" {
		dir = cfg.StoreDir(e.getenv)
	}
	st, err := artifacts.Open(dir, artifacts.Options{})
	if err != nil {
		return nil, err
	}
	w := &workspace{cfg: cfg, profile: name, matrix: m, store: st, graph: graph, settings: cfg.HostSettings(e.getenv), memory: mem}
	if !g.noRemote {
		if w.remotes, err = openRemotes(cfg); err != nil {
			return nil, err
		}
	}
	return w, nil
}

// openPlan opens the workspace and plans it.
func openPlan(e *env, g *globalFlags) (*workspace, *pipeline.Plan, error) {
	w, err := openWorkspace(e, g)
	if err != nil {
		return nil, nil, err
	}
	p, err := w.planHere()
	return w, p, err
}

func (w *workspace) plan() (*pipeline.Plan, error) {
	return pipeline.MakePlanWith(w.store, w.graph, w.profile, w.remotes)
}

// planHere plans the graph a run here renders: where cells cannot run
// because a cell they need failed (a data set absent from this machine),
// the graph whose tables show them as not run (experiments.BlockedGraph),
// which then becomes w.graph. So plan, status, show, why and check judge
// the paper as the last run rendered it, not as a run with that data would.
func (w *workspace) planHere() (*pipeline.Plan, error) {
	p, err := w.plan()
	if err != nil {
		return nil, err
	}
	g, err := experiments.BlockedGraph(w.graph, p)
	if err != nil || g == nil {
		return p, err
	}
	w.graph = g
	return w.plan()
}

func plural(n int, word string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, word)
	}
	return fmt.Sprintf("%d %ss", n, word)
}

// openStoreOnly opens the store named by --store, REPRO_STORE or the
// config, without building the graph.
func openStoreOnly(e *env, g *globalFlags) (*artifacts.Store, error) {
	dir, err := storeDir(e, g)
	if err != nil {
		return nil, err
	}
	if _, err := os.Stat(dir); err != nil {
		return nil, fmt.Errorf("store %s: %w", dir, err)
	}
	return artifacts.Open(dir, artifacts.Options{})
}
