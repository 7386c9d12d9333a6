package main

import (
	"fmt"
	"strings"

	"repro/artifacts"
	"repro/pipeline"
)

// A committed number whose train cell the current plan would run is either
// stale (the current config gives the cell another key than the one that
// produced the committed result) or merely not computed here (a fresh
// clone, or a store that never ran this profile): the two call for
// different actions, and only the first makes `repro check` fail.

// notHereReasons are the plan reasons that say nothing about a change: the
// cell was never planned in this store, never finished, or failed.
var notHereReasons = []string{"new", "input pending", "output missing (never finished)", "failed last time", "needed by "}

func onlyNotHere(reasons []string) bool {
	for _, r := range reasons {
		ok := false
		for _, p := range notHereReasons {
			ok = ok || strings.HasPrefix(r, p)
		}
		if !ok {
			return false
		}
	}
	return true
}

// records indexes the train records the store and the remotes hold, by
// cell ID and result digest: the record of a committed result, when one is
// there, says which config produced it.
func (w *workspace) records() map[string]*artifacts.Manifest {
	if w.recordIndex != nil {
		return w.recordIndex
	}
	w.recordIndex = map[string]*artifacts.Manifest{}
	for _, r := range w.recordSources() {
		keys, _ := r.Keys()
		for _, k := range keys {
			m, err := r.Manifest(k)
			if err != nil || m.Stage != "train" {
				continue
			}
			if d, ok := m.Output("result"); ok {
				if id := m.CellID + " " + d.String(); w.recordIndex[id] == nil {
					w.recordIndex[id] = m
				}
			}
		}
	}
	return w.recordIndex
}

// trainVerdict says whether the committed result `result` of the train
// cell pc, which the plan would run, is stale, and why.
func (w *workspace) trainVerdict(pc *pipeline.PlannedCell, result string) (stale bool, why string) {
	id := pc.Cell.ID
	if rec := w.records()[id+" "+result]; rec != nil {
		var diffs []string
		if v := pc.Cell.Stage.CellVersion(pc.Cell.Params); v != rec.StageVersion {
			diffs = append(diffs, fmt.Sprintf("stage version %s %d -> %d", rec.Stage, rec.StageVersion, v))
		}
		if old, err := pipeline.ParseParamsText(rec.Params); err == nil {
			if d := pipeline.DiffParams(old, pc.Params); d != "" {
				diffs = append(diffs, "config changed: "+d)
			}
		}
		if len(diffs) == 0 && pc.KeyKnown && pc.Key != rec.Key {
			diffs = append(diffs, "input changed")
		}
		if len(diffs) > 0 {
			return true, id + " would run: " + strings.Join(diffs, "; ") + " (since the committed result, record " + rec.Key.Short() + ")"
		}
		return false, id + " not computed here (the committed result's record has the current config)"
	}
	if onlyNotHere(pc.Reasons) {
		return false, id + " not computed here"
	}
	return true, id + " would run: " + strings.Join(pc.Reasons, "; ")
}

// recordSources are where cell records are: the store (read through the
// remote interface) and then the remotes.
func (w *workspace) recordSources() []artifacts.Remote {
	srcs := append([]artifacts.Remote{}, w.remotes...)
	if local, err := artifacts.OpenDirRemote("store", w.store.Root()); err == nil {
		srcs = append([]artifacts.Remote{local}, srcs...)
	}
	return srcs
}

// explainNew replaces the plan reason "new" (a cell this store never
// planned, as every cell of a fresh clone) by what changed since the
// remotes' latest record of the same cell ID, so that a fresh clone with the
// ledger tells a changed config from a cell that was never computed.
func (w *workspace) explainNew(p *pipeline.Plan) {
	if len(w.remotes) == 0 {
		return
	}
	latest := map[string]*artifacts.Manifest{}
	for _, r := range w.remotes {
		keys, _ := r.Keys()
		for _, k := range keys {
			m, err := r.Manifest(k)
			if err != nil {
				continue
			}
			if old := latest[m.CellID]; old == nil || m.Provenance.End.After(old.Provenance.End) {
				latest[m.CellID] = m
			}
		}
	}
	for _, pc := range p.Cells {
		rec := latest[pc.Cell.ID]
		if pc.State != pipeline.Stale || rec == nil || len(pc.Reasons) != 1 || pc.Reasons[0] != "new" {
			continue
		}
		var diffs []string
		if v := pc.Cell.Stage.CellVersion(pc.Cell.Params); v != rec.StageVersion {
			diffs = append(diffs, fmt.Sprintf("stage version %s %d -> %d", rec.Stage, rec.StageVersion, v))
		}
		if old, err := pipeline.ParseParamsText(rec.Params); err == nil {
			if d := pipeline.DiffParams(old, pc.Params); d != "" {
				diffs = append(diffs, "config changed: "+d)
			}
		}
		if len(diffs) == 0 {
			diffs = append(diffs, "input changed")
		}
		pc.Reasons = []string{strings.Join(diffs, "; ") + " (since the remote's record " + rec.Key.Short() + ")"}
	}
}
