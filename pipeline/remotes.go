package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"

	"repro/artifacts"
)

// RemoteSettings is one [settings.remotes.NAME] table: a directory with the
// store's layout that runs take finished cells from and `repro push` copies
// them to. Like every setting it is host-local and part of no key.
type RemoteSettings struct {
	// Path is the remote's directory, relative to pipeline.toml.
	Path string `toml:"path"`
	// Stages, if set, limits the blobs the remote keeps to the outputs of
	// these stages: a results ledger holds every cell's manifest (which is
	// what a fresh clone needs to compute the keys downstream) but only the
	// small outputs, not data, streams or features, which are cheap to
	// rebuild. Empty: every output.
	Stages []string `toml:"stages"`
}

var remoteName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]*$`)

func (c *Config) validateRemotes() error {
	for _, name := range sortedKeys(c.Settings.Remotes) {
		r := c.Settings.Remotes[name]
		key := "settings.remotes." + name
		if !remoteName.MatchString(name) {
			return c.ErrAt(c.KeyLine(key), key, "a remote's name must be lower-case letters, digits, _ and -")
		}
		if r == nil || r.Path == "" {
			return c.ErrAt(c.KeyLine(key), key+".path", "missing")
		}
		for _, s := range r.Stages {
			if s == "" {
				return c.ErrAt(c.KeyLine(key+".stages"), key+".stages", "empty stage name")
			}
		}
	}
	return nil
}

// RemoteNames lists the configured remotes, sorted.
func (c *Config) RemoteNames() []string { return sortedKeys(c.Settings.Remotes) }

// OpenRemote opens the named remote, its path taken relative to the
// config file.
func (c *Config) OpenRemote(name string) (*artifacts.DirRemote, *RemoteSettings, error) {
	r := c.Settings.Remotes[name]
	dir := r.Path
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(c.Dir, dir)
	}
	d, err := artifacts.OpenDirRemote(name, dir)
	if errors.Is(err, artifacts.ErrNotRemote) {
		key := "settings.remotes." + name + ".path"
		return nil, nil, c.ErrAt(c.KeyLine(key), key, "%v", err)
	}
	return d, r, err
}

// KeepsBlobsOf reports whether the remote keeps the outputs of stage.
func (r *RemoteSettings) KeepsBlobsOf(stage string) bool {
	if len(r.Stages) == 0 {
		return true
	}
	for _, s := range r.Stages {
		if s == stage {
			return true
		}
	}
	return false
}

// fromRemotes returns the manifest of cell c under key k from the first
// remote that holds a sound one, the remote's name, and whether it holds
// every output. misses say why a remote's record was not used.
func fromRemotes(remotes []artifacts.Remote, c *Cell, k artifacts.Key) (m *artifacts.Manifest, name string, blobs bool, misses []Reason) {
	for _, r := range remotes {
		m, err := remoteManifest(r, c, k)
		if err != nil {
			if !errors.Is(err, artifacts.ErrNotFound) {
				misses = append(misses, Reason{Kind: ReasonRemoteMiss, Detail: fmt.Sprintf("%s: %v", r.Name(), err)})
			}
			continue
		}
		blobs := true
		for _, o := range m.Outputs {
			if ok, _ := r.HasBlob(o.Digest); !ok {
				blobs = false
				break
			}
		}
		return m, r.Name(), blobs, misses
	}
	return nil, "", false, misses
}

// remoteManifest reads cell c's manifest under key k from r and checks that
// it describes exactly that cell: its stage, its version, and the key its
// own params and input digests hash to. A remote record under an older
// stage version has another key and is never found; one stored under a key
// it does not hash to is rejected (ErrCorrupt).
func remoteManifest(r artifacts.Remote, c *Cell, k artifacts.Key) (*artifacts.Manifest, error) {
	m, err := r.Manifest(k)
	if err != nil {
		return nil, err
	}
	if m.Stage != c.Stage.Name || m.StageVersion != c.Stage.CellVersion(c.Params) {
		return nil, fmt.Errorf("cell %s: %w: record is of %s v%d", c.ID, artifacts.ErrCorrupt, m.Stage, m.StageVersion)
	}
	params, err := ParseParamsText(m.Params)
	if err != nil {
		return nil, fmt.Errorf("cell %s: %w: %v", c.ID, artifacts.ErrCorrupt, err)
	}
	if recordKeyDesc(m.Stage, m.StageVersion, params, m.Inputs).Key() != k {
		return nil, fmt.Errorf("cell %s: %w: its record does not hash to its key %s", c.ID, artifacts.ErrCorrupt, k.Short())
	}
	return m, nil
}

// demandInputs makes every cell whose outputs a cell that runs reads
// available: a cell in a remote that holds its outputs is pulled; one whose
// remote holds only its manifest must be computed (same key, so its
// consumers' keys stand), and then so must be whatever it reads in turn.
// Cells are visited consumers first (reverse topological order).
func (p *Plan) demandInputs(need func(*Cell) bool) {
	neededBy := map[*PlannedCell]string{}
	for i := len(p.Cells) - 1; i >= 0; i-- {
		pc := p.Cells[i]
		if by, ok := neededBy[pc]; ok && pc.State == InRemote && !pc.RemoteBlobs {
			pc.State = Stale
			pc.Reasons = []Reason{{Kind: ReasonNeededBy, Detail: fmt.Sprintf("%s (remote %s holds its record, not its outputs)", by, pc.Remote)}}
		}
		if pc.State != Stale && (need == nil || !need(pc.Cell)) {
			continue
		}
		for _, in := range pc.Cell.Inputs {
			up := p.byID[in.Cell.ID]
			if _, ok := neededBy[up]; !ok && up.State == InRemote {
				neededBy[up] = pc.Cell.ID
			}
		}
	}
}

// RemoteRun is what a run takes from remotes: cells pulled into the store
// before it starts, and cells left in a remote because nothing that runs
// reads their outputs.
type RemoteRun struct {
	// Plan is the plan the run follows.
	Plan *Plan
	// Pulled counts cells (and compressed bytes) copied into the store;
	// Misses are the remote objects rejected, with the reason (each such
	// cell is computed instead).
	Pulled int
	Bytes  int64
	Misses []string
	// Prefetched cells were pulled before the run (a run counts them
	// cached); the run's Remote count holds the others.
	Prefetched int

	st           *artifacts.Store
	remotes      []artifacts.Remote
	manifestOnly map[artifacts.Key]*artifacts.Manifest
}

// PrepareRemotes plans g with remotes and pulls every cell of the run
// (those only accepts, and what they need) that a remote holds with its
// outputs, verifying each blob. need, if set, names cells whose inputs must
// be in the store after the run as if they ran (verify --recompute). A damaged or missing remote object is a
// miss, never an error: the plan is made again without that cell's record,
// so the cell is computed and whatever it reads is made available first.
func PrepareRemotes(ctx context.Context, st *artifacts.Store, g *Graph, profile string, remotes []artifacts.Remote, only, need func(*Cell) bool) (*RemoteRun, error) {
	bad := map[artifacts.Key]string{}
	masked := make([]artifacts.Remote, len(remotes))
	for i, r := range remotes {
		masked[i] = maskedRemote{r, bad}
	}
	rr := &RemoteRun{st: st, remotes: masked, manifestOnly: map[artifacts.Key]*artifacts.Manifest{}}
	want := selectCells(g, only)
	for {
		p, err := makePlan(st, g, profile, masked, need)
		if err != nil {
			return nil, err
		}
		failed, pulled := false, rr.Pulled
		for _, pc := range p.Cells {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			if !want[pc.Cell] || pc.State != InRemote || !pc.RemoteBlobs {
				continue
			}
			t, err := st.PullCell(remoteNamed(masked, pc.Remote), pc.Manifest)
			if err != nil {
				rr.Misses = append(rr.Misses, err.Error())
				bad[pc.Key] = err.Error()
				failed = true
				continue
			}
			rr.Pulled++
			rr.Bytes += t.Bytes
		}
		if failed {
			continue
		}
		if rr.Pulled > pulled { // the plan of what the store now holds
			if p, err = makePlan(st, g, profile, masked, need); err != nil {
				return nil, err
			}
		}
		rr.Plan, rr.Prefetched = p, rr.Pulled
		for _, pc := range p.Cells {
			if pc.State == InRemote && !pc.RemoteBlobs {
				rr.manifestOnly[pc.Key] = pc.Manifest
			}
			// A damaged or tampered record the run computes over: say so
			// (a failed pull is in Misses already).
			if want[pc.Cell] && pc.State == Stale && bad[pc.Key] == "" {
				for _, reason := range pc.Reasons {
					if reason.Kind != ReasonRemoteMiss {
						continue
					}
					r := reason.String()
					if !strings.Contains(r, pc.Cell.ID) {
						r = pc.Cell.ID + ": " + r
					}
					rr.Misses = append(rr.Misses, r)
				}
			}
		}
		return rr, nil
	}
}

// Take is RunOptions.Remote: a cell the plan leaves in its remote is
// satisfied by the remote's manifest; a cell whose key only the run learns
// (its inputs were recomputed) is pulled if a remote holds it whole.
func (rr *RemoteRun) Take(c *Cell, k artifacts.Key) (*artifacts.Manifest, bool) {
	if m, ok := rr.manifestOnly[k]; ok {
		return m, true
	}
	m, name, blobs, _ := fromRemotes(rr.remotes, c, k)
	if m == nil || !blobs {
		return nil, false
	}
	t, err := rr.st.PullCell(remoteNamed(rr.remotes, name), m)
	if err != nil {
		rr.Misses = append(rr.Misses, err.Error())
		return nil, false
	}
	rr.Pulled++
	rr.Bytes += t.Bytes
	lm, err := rr.st.Lookup(k)
	return lm, err == nil
}

// Held is RunOptions.Held: whether the plan finds c in the store (pulled
// or cached before) or leaves it in a remote.
func (rr *RemoteRun) Held(c *Cell) bool {
	return rr.Plan != nil && rr.Plan.Held(c)
}

// Use makes o take cells from the remotes (Remote, Held).
func (rr *RemoteRun) Use(o *RunOptions) { o.Remote, o.Held = rr.Take, rr.Held }

func remoteNamed(rs []artifacts.Remote, name string) artifacts.Remote {
	for _, r := range rs {
		if r.Name() == name {
			return r
		}
	}
	return nil
}

// maskedRemote hides the cells whose pull failed, so that a plan made
// again computes them (and makes available what they read).
type maskedRemote struct {
	artifacts.Remote
	bad map[artifacts.Key]string
}

func (r maskedRemote) Manifest(k artifacts.Key) (*artifacts.Manifest, error) {
	if why, ok := r.bad[k]; ok {
		return nil, fmt.Errorf("%w: %s", artifacts.ErrCorrupt, why)
	}
	return r.Remote.Manifest(k)
}
