package artifacts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// Format strings open every record; a reader rejects any other.
const (
	ManifestFormat = "repro-manifest v1"
	SpecFormat     = "repro-spec v1"
	FailureFormat  = "repro-failure v1"
)

// maxRecord bounds a record read from disk, so a damaged file cannot make a
// reader allocate without limit.
const maxRecord = 64 << 20

// Spec is everything a process needs to run a cell, on any host that shares
// the store: the stage and its version, the canonical params, and for each
// input the key of the upstream cell whose manifest gives its outputs.
type Spec struct {
	Format       string      `json:"format"`
	Key          Key         `json:"key"`
	CellID       string      `json:"cell"`
	Stage        string      `json:"stage"`
	StageVersion int         `json:"stage_version"`
	Params       string      `json:"params"` // canonical "name value" lines
	Inputs       []SpecInput `json:"inputs"`
	// Settings are host-local settings that are not part of the key (e.g. a
	// data mirror). A host may override them.
	Settings map[string]string `json:"settings,omitempty"`
}

// SpecInput binds an input name of a cell to an upstream cell.
type SpecInput struct {
	Name   string `json:"name"`
	CellID string `json:"cell"`
	Key    Key    `json:"key"`
}

// Manifest is a finished cell's record. It is written last, atomically.
type Manifest struct {
	Format       string     `json:"format"`
	Key          Key        `json:"key"`
	CellID       string     `json:"cell"`
	Stage        string     `json:"stage"`
	StageVersion int        `json:"stage_version"`
	Params       string     `json:"params"`
	Inputs       []Input    `json:"inputs"`
	Outputs      []Output   `json:"outputs"`
	Log          Digest     `json:"log"`
	Provenance   Provenance `json:"provenance"`
}

// Input is one input of a finished cell, with the upstream outputs it read.
type Input struct {
	Name    string   `json:"name"`
	CellID  string   `json:"cell"`
	Key     Key      `json:"key"`
	Outputs []Output `json:"outputs"`
}

// Output is one named output of a cell.
type Output struct {
	Name   string `json:"name"`
	Digest Digest `json:"digest"`
	Size   int64  `json:"size"` // uncompressed bytes
}

// Provenance says how, where and when a cell was computed. None of it is
// part of the key.
type Provenance struct {
	Revision  string    `json:"revision"`             // VCS revision of the repro binary
	Dirty     bool      `json:"dirty"`                // the work tree had uncommitted changes
	DirtyDiff string    `json:"dirty_diff,omitempty"` // SHA-256 of those changes (package buildstamp)
	GoVersion string    `json:"go_version"`           //
	Host      string    `json:"host"`                 //
	CPU       string    `json:"cpu,omitempty"`        // the host CPU's model name
	Kernels   string    `json:"kernels,omitempty"`    // kernel path: avx512, avx2, portable (REPRO_KERNELS)
	Executor  string    `json:"executor"`             // local, slurm
	SlurmJob  string    `json:"slurm_job,omitempty"`
	Start     time.Time `json:"start"`         //
	End       time.Time `json:"end"`           //
	WallSecs  float64   `json:"wall_seconds"`  //
	CPUSecs   float64   `json:"cpu_seconds"`   // CPU time of the thread(s) that ran the cell
	Repro     string    `json:"repro_version"` // module version of the binary
	// Earlier names, oldest first, the builds of the records this one
	// replaced: a record of a recompute (Executor ExecutorRecompute) whose
	// outputs matched those records' bit for bit. The first names the
	// build that computed the outputs. Records of recomputes older than
	// this field name none.
	Earlier []Build `json:"earlier,omitempty"`
}

// ExecutorRecompute is the executor of a record written by a recompute
// (repro verify --recompute --push): the cell was re-run and its outputs
// were bit-identical to those of the record it replaced.
const ExecutorRecompute = "verify"

// Recomputed reports whether the record is of a bit-identical recompute.
func (p *Provenance) Recomputed() bool { return p.Executor == ExecutorRecompute }

// Build names the binary and run of an earlier record of a cell.
type Build struct {
	Revision  string    `json:"revision"`
	Dirty     bool      `json:"dirty"`
	DirtyDiff string    `json:"dirty_diff,omitempty"`
	Executor  string    `json:"executor"`
	Host      string    `json:"host"`
	End       time.Time `json:"end"`
}

// Build returns the build and run the provenance names.
func (p *Provenance) Build() Build {
	return Build{Revision: p.Revision, Dirty: p.Dirty, DirtyDiff: p.DirtyDiff, Executor: p.Executor, Host: p.Host, End: p.End}
}

// History returns every build that produced the record's outputs, oldest
// first: the earlier records' and then this one's.
func (p *Provenance) History() []Build {
	return append(slices.Clone(p.Earlier), p.Build())
}

// NamesCleanSource reports whether the record names the commit it was
// computed by, built with nothing uncommitted: the only records a remote
// accepts. Records of binaries that could not name their source say
// revision "unknown" (or nothing).
func (p *Provenance) NamesCleanSource() bool {
	return p.Revision != "" && p.Revision != "unknown" && !p.Dirty
}

// Output returns the named output's digest.
func (m *Manifest) Output(name string) (Digest, bool) {
	for _, o := range m.Outputs {
		if o.Name == name {
			return o.Digest, true
		}
	}
	return Digest{}, false
}

// Failure records the last failed attempt at a cell. Failures cache nothing:
// the next run tries the cell again.
type Failure struct {
	Format string    `json:"format"`
	Key    Key       `json:"key"`
	CellID string    `json:"cell"`
	Error  string    `json:"error"`
	Log    Digest    `json:"log"`
	Host   string    `json:"host"`
	Time   time.Time `json:"time"`
}

func (s *Store) recordPath(kind string, k Key) string {
	return fanout(filepath.Join(s.root, kind), k.String()) + ".json"
}

// ManifestPath is where the manifest of cell k lives.
func (s *Store) ManifestPath(k Key) string { return s.recordPath("cells", k) }

func (s *Store) putRecord(kind string, k Key, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(s.recordPath(kind, k), append(b, '\n'), 0o644)
}

func (s *Store) getRecord(kind string, k Key, format string, v any) error {
	b, err := readLimited(s.recordPath(kind, k))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s %s: %w", strings.TrimSuffix(kind, "s"), k.Short(), ErrNotFound)
	}
	if err != nil {
		return err
	}
	if err := decodeRecord(b, format, v); err != nil {
		return fmt.Errorf("%s %s: %w: %v", strings.TrimSuffix(kind, "s"), k.Short(), ErrCorrupt, err)
	}
	return nil
}

func readLimited(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(f, maxRecord+1)); err != nil {
		return nil, err
	}
	if buf.Len() > maxRecord {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxRecord)
	}
	return buf.Bytes(), nil
}

// decodeRecord parses a JSON record strictly and checks its format line.
func decodeRecord(b []byte, format string, v any) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	var got string
	switch r := v.(type) {
	case *Manifest:
		got = r.Format
	case *Spec:
		got = r.Format
	case *Failure:
		got = r.Format
	case *RunRecord:
		got = r.Format
	}
	if got != format {
		return fmt.Errorf("format %q, want %q", got, format)
	}
	return nil
}

// DecodeManifest parses a manifest record (as stored under cells/).
func DecodeManifest(b []byte) (*Manifest, error) {
	m := new(Manifest)
	if err := decodeRecord(b, ManifestFormat, m); err != nil {
		return nil, err
	}
	return m, nil
}

// PutSpec stores the spec of cell sp.Key.
func (s *Store) PutSpec(sp *Spec) error {
	sp.Format = SpecFormat
	return s.putRecord("specs", sp.Key, sp)
}

// HasSpec reports whether the spec of cell k is stored.
func (s *Store) HasSpec(k Key) bool {
	_, err := os.Stat(s.recordPath("specs", k))
	return err == nil
}

// GetSpec reads the spec of cell k.
func (s *Store) GetSpec(k Key) (*Spec, error) {
	sp := new(Spec)
	return sp, s.getRecord("specs", k, SpecFormat, sp)
}

// PutManifest publishes the manifest of cell m.Key. Every output and the log
// must already be in the store: the manifest is the commit point.
func (s *Store) PutManifest(m *Manifest) error {
	m.Format = ManifestFormat
	for _, o := range m.Outputs {
		if _, err := s.Stat(o.Digest); err != nil {
			return fmt.Errorf("manifest %s: output %s: %w", m.Key.Short(), o.Name, err)
		}
	}
	if err := s.putRecord("cells", m.Key, m); err != nil {
		return fmt.Errorf("manifest %s: %w", m.Key.Short(), err)
	}
	return nil
}

// GetManifest reads the manifest of cell k without checking its blobs.
// A manifest read before is not read and decoded again while its file's
// size and modification time are those it had (one stat instead): a no-op
// run plans the same few thousand manifests several times (before the
// run, in it, and to write paper/), and decoding them was most of its time.
// The caller gets its own copy of the struct; its slices are shared and
// must not be modified.
func (s *Store) GetManifest(k Key) (*Manifest, error) {
	f, err := os.Open(s.recordPath("cells", k))
	if err != nil {
		s.manifests.Delete(k)
		if errors.Is(err, fs.ErrNotExist) {
			return new(Manifest), fmt.Errorf("cell %s: %w", k.Short(), ErrNotFound)
		}
		return new(Manifest), err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return new(Manifest), err
	}
	if v, ok := s.manifests.Load(k); ok {
		if e := v.(memoManifest); e.size == fi.Size() && e.mod.Equal(fi.ModTime()) {
			cp := *e.m
			return &cp, nil
		}
	}
	m := new(Manifest)
	var buf bytes.Buffer
	_, err = buf.ReadFrom(io.LimitReader(f, maxRecord+1))
	switch {
	case err != nil:
	case buf.Len() > maxRecord:
		err = fmt.Errorf("%s: larger than %d bytes", f.Name(), maxRecord)
	default:
		if derr := decodeRecord(buf.Bytes(), ManifestFormat, m); derr != nil {
			err = fmt.Errorf("cell %s: %w: %v", k.Short(), ErrCorrupt, derr)
		}
	}
	if err != nil {
		s.manifests.Delete(k)
		return m, err
	}
	s.manifests.Store(k, memoManifest{m: m, size: fi.Size(), mod: fi.ModTime()})
	cp := *m
	return &cp, nil
}

// memoManifest is a decoded manifest and the size and modification time of
// the file it was read from (Store.manifests).
type memoManifest struct {
	m    *Manifest
	size int64
	mod  time.Time
}

// Lookup returns the manifest of cell k if the cell is complete: the record
// parses and every output blob is present. Blob content is checked only by
// Get and Verify (re-hashing every output on every plan would make a no-op
// run read gigabytes). A damaged record or a missing output is a miss with
// the reason wrapped (ErrNotFound or ErrCorrupt).
func (s *Store) Lookup(k Key) (*Manifest, error) {
	m, err := s.GetManifest(k)
	if err != nil {
		return nil, err
	}
	if m.Key != k {
		return nil, fmt.Errorf("manifest %s: %w: records key %s", k.Short(), ErrCorrupt, m.Key.Short())
	}
	for _, o := range m.Outputs {
		if _, err := s.Stat(o.Digest); err != nil {
			return nil, fmt.Errorf("cell %s: output %s: %w", k.Short(), o.Name, err)
		}
	}
	return m, nil
}

// PutFailure records a failed attempt at a cell.
func (s *Store) PutFailure(f *Failure) error {
	f.Format = FailureFormat
	return s.putRecord("failed", f.Key, f)
}

// GetFailure reads the last failure of cell k (ErrNotFound if none).
func (s *Store) GetFailure(k Key) (*Failure, error) {
	f := new(Failure)
	return f, s.getRecord("failed", k, FailureFormat, f)
}

// ClearFailure forgets the failure record of cell k.
func (s *Store) ClearFailure(k Key) {
	os.Remove(s.recordPath("failed", k))
}

// LogPath is where a running cell's log is written.
func (s *Store) LogPath(k Key) string { return filepath.Join(s.root, "logs", k.String()+".log") }
