package main

import (
	"repro/artifacts"
	"repro/experiments"
	"repro/pipeline"
)

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
// cell pc, which the plan would run, is stale, and why
// (experiments.TrainVerdict), given the record of that result if the store
// or a remote holds it.
func (w *workspace) trainVerdict(pc *pipeline.PlannedCell, result string) (stale bool, why string) {
	return experiments.TrainVerdict(pc, w.records()[pc.Cell.ID+" "+result])
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
		if pc.State != pipeline.Stale || rec == nil || len(pc.Reasons) != 1 || pc.Reasons[0].Kind != pipeline.ReasonNew {
			continue
		}
		diffs := experiments.RecordChanges(pc, rec)
		if len(diffs) == 0 {
			diffs = append(diffs, pipeline.Reason{Kind: pipeline.ReasonInputChanged})
		}
		diffs[len(diffs)-1].Since = "the remote's record " + rec.Key.Short()
		pc.Reasons = diffs
	}
}
