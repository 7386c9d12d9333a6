package pipeline

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"repro/artifacts"
)

// State is what a plan expects of a cell.
type State int

const (
	// Cached: the cell's manifest and outputs are in the store.
	Cached State = iota
	// Stale: the cell must be computed (Reasons say why).
	Stale
	// InRemote: the cell's manifest is in a remote (PlannedCell.Remote); a
	// run pulls its outputs if the remote has them, and otherwise leaves
	// them there, as nothing that runs reads them (see MakePlanWith).
	InRemote
)

func (s State) String() string {
	switch s {
	case Cached:
		return "cached"
	case InRemote:
		return "remote"
	}
	return "run"
}

// PlannedCell is one cell of a plan.
type PlannedCell struct {
	Cell   *Cell
	Params []Param
	// Key is the cell key; it is known only once every input is cached.
	Key      artifacts.Key
	KeyKnown bool
	State    State
	Reasons  []Reason
	Manifest *artifacts.Manifest // when cached or in a remote
	Failure  *artifacts.Failure  // the last failure of this key, if any
	// Remote names the remote holding the cell (state InRemote), and
	// RemoteBlobs says whether it holds every output too (else only the
	// manifest).
	Remote      string
	RemoteBlobs bool

	desc *KeyDesc // what Key hashes, when KeyKnown
}

// KeyText returns the exact text the cell's key hashes (KeyDesc.Text), and
// false when the key is not known yet (an input is not computed).
func (pc *PlannedCell) KeyText() (string, bool) {
	if pc.desc == nil {
		return "", false
	}
	return pc.desc.Text(), true
}

// Plan is what a run would do, computed without running anything.
type Plan struct {
	Profile string
	Cells   []*PlannedCell // topological
	byID    map[string]*PlannedCell
}

// Cell returns the planned cell with the given ID, or nil.
func (p *Plan) Cell(id string) *PlannedCell { return p.byID[id] }

// Held is RunOptions.Held: whether the plan finds c in the store or takes
// it from a remote, so that a run counts no work for it.
func (p *Plan) Held(c *Cell) bool {
	pc := p.Cell(c.ID)
	return pc != nil && (pc.State == InRemote || pc.State == Cached)
}

// Counts returns how many cells will run and how many will not (cached,
// or taken from a remote: InRemote counts those).
func (p *Plan) Counts() (run, cached int) {
	for _, pc := range p.Cells {
		if pc.State == Stale {
			run++
		} else {
			cached++
		}
	}
	return
}

// InRemote counts the cells a remote holds and the store does not.
func (p *Plan) InRemote() int {
	n := 0
	for _, pc := range p.Cells {
		if pc.State == InRemote {
			n++
		}
	}
	return n
}

// MakePlan decides for every cell of g whether it is cached or must run,
// and why. It reads the store and writes nothing.
func MakePlan(st *artifacts.Store, g *Graph, profile string) (*Plan, error) {
	return MakePlanWith(st, g, profile, nil)
}

// MakePlanWith plans like MakePlan, and takes a cell the store lacks from
// the first remote that holds its key (see planRemotes).
func MakePlanWith(st *artifacts.Store, g *Graph, profile string, remotes []artifacts.Remote) (*Plan, error) {
	return makePlan(st, g, profile, remotes, nil)
}

func makePlan(st *artifacts.Store, g *Graph, profile string, remotes []artifacts.Remote, need func(*Cell) bool) (*Plan, error) {
	p := &Plan{Profile: profile, byID: make(map[string]*PlannedCell, len(g.Cells))}
	for _, c := range g.Cells {
		pc, err := planCell(st, p, c, remotes)
		if err != nil {
			return nil, err
		}
		p.Cells = append(p.Cells, pc)
		p.byID[c.ID] = pc
	}
	if len(remotes) > 0 {
		p.demandInputs(need)
	}
	return p, nil
}

func planCell(st *artifacts.Store, p *Plan, c *Cell, remotes []artifacts.Remote) (*PlannedCell, error) {
	params, err := EncodeParams(c.Stage.Name, c.Params)
	if err != nil {
		return nil, fmt.Errorf("cell %s: %w", c.ID, err)
	}
	pc := &PlannedCell{Cell: c, Params: params, State: Stale}
	desc, known := cellKeyDesc(c, params, func(up *Cell) *artifacts.Manifest { return p.byID[up.ID].Manifest })
	var lookupErr error
	if known {
		pc.desc = desc
		pc.Key = desc.Key()
		pc.KeyKnown = true
		m, err := st.Lookup(pc.Key)
		if err == nil {
			pc.State, pc.Manifest = Cached, m
			return pc, nil
		}
		lookupErr = err
		if f, err := st.GetFailure(pc.Key); err == nil {
			pc.Failure = f
		}
		var misses []Reason
		if pc.Manifest, pc.Remote, pc.RemoteBlobs, misses = fromRemotes(remotes, c, pc.Key); pc.Manifest != nil {
			pc.State = InRemote
			return pc, nil
		}
		defer func() { pc.Reasons = append(pc.Reasons, misses...) }()
	}
	pc.Reasons = reasons(st, p, pc, lookupErr)
	return pc, nil
}

// reasons explains why pc must run, comparing it with the key its cell ID
// had when last planned under this profile.
func reasons(st *artifacts.Store, p *Plan, pc *PlannedCell, lookupErr error) []Reason {
	c := pc.Cell
	var rs []Reason
	manifestThere := false
	if pc.KeyKnown {
		_, err := st.GetManifest(pc.Key)
		manifestThere = err == nil
	}
	if manifestThere && lookupErr != nil {
		// The record exists but an output blob is gone or damaged.
		if errors.Is(lookupErr, artifacts.ErrCorrupt) {
			return []Reason{{Kind: ReasonOutputCorrupt, Detail: lookupErr.Error()}}
		}
		return []Reason{{Kind: ReasonOutputMissing, Detail: lookupErr.Error()}}
	}
	if lookupErr != nil && errors.Is(lookupErr, artifacts.ErrCorrupt) {
		return []Reason{{Kind: ReasonOutputCorrupt, Detail: lookupErr.Error()}}
	}
	ref, err := st.GetRef(p.Profile, c.ID)
	if err != nil {
		return []Reason{{Kind: ReasonNew}}
	}
	if pc.KeyKnown && ref == pc.Key {
		if pc.Failure != nil {
			return []Reason{{Kind: ReasonFailed, Detail: firstLine(pc.Failure.Error)}}
		}
		return []Reason{{Kind: ReasonNeverFinished}}
	}
	prev, err := st.GetSpec(ref)
	if err != nil {
		return []Reason{{Kind: ReasonPreviousGone, Detail: ref.Short()}}
	}
	rs = append(rs, RecordChanges(c, pc.Params, c.Stage.Name, prev.StageVersion, prev.Params)...)
	prevInputs := map[string]artifacts.Key{}
	for _, in := range prev.Inputs {
		prevInputs[in.Name] = in.Key
	}
	for _, in := range c.Inputs {
		up := p.byID[in.Cell.ID]
		switch {
		case up.State == Stale, up.Key != prevInputs[in.Name]:
			rs = append(rs, Reason{Kind: ReasonInputChanged, Detail: in.Cell.ID})
		}
	}
	if len(rs) == 0 {
		if !pc.KeyKnown {
			return []Reason{{Kind: ReasonInputPending}}
		}
		rs = append(rs, Reason{Kind: ReasonInputChanged})
	}
	return rs
}

// RecordChanges says what differs between a record of cell c (its stage
// name and version and its params text, as a spec or manifest holds them)
// and c planned with params: its stage version and its params; nil when
// neither changed.
func RecordChanges(c *Cell, params []Param, stage string, version int, paramsText string) []Reason {
	var rs []Reason
	if v := c.Stage.CellVersion(c.Params); version != v {
		rs = append(rs, Reason{Kind: ReasonStageVersion, Detail: fmt.Sprintf("%s %d -> %d", stage, version, v)})
	}
	if old, err := ParseParamsText(paramsText); err == nil {
		if d := DiffParams(old, params); d != "" {
			rs = append(rs, Reason{Kind: ReasonConfigChanged, Detail: d})
		}
	}
	return rs
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// Rebound returns pc's record with each input's key replaced by the key
// the plan gives that input now, when that input's record names the same
// outputs. A cell's key can change while its outputs do not (a stage's
// config gained a field with its old default, say); the cells downstream
// keep their keys, which cover their inputs' outputs, not their keys, and
// their records keep naming the old input keys, which a store need not hold.
// A recompute of such a record reads the inputs the plan names. pc's own
// record is not changed; without a record, Rebound returns nil.
func (p *Plan) Rebound(pc *PlannedCell) *artifacts.Manifest {
	if pc.Manifest == nil {
		return nil
	}
	m := *pc.Manifest
	m.Inputs = slices.Clone(pc.Manifest.Inputs)
	for i, in := range m.Inputs {
		up := p.byID[in.CellID]
		if up == nil || !up.KeyKnown || up.Key == in.Key || up.Manifest == nil || !sameOutputs(in.Outputs, up.Manifest.Outputs) {
			continue
		}
		m.Inputs[i].Key = up.Key
	}
	return &m
}

// sameOutputs says whether every output read names an output of the
// record with the same digest.
func sameOutputs(read, rec []artifacts.Output) bool {
	for _, o := range read {
		if !slices.ContainsFunc(rec, func(r artifacts.Output) bool { return r.Name == o.Name && r.Digest == o.Digest }) {
			return false
		}
	}
	return true
}
