package artifacts

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"time"
)

// Remote is another store that holds finished cells under the same names as
// a Store: manifests by cell key, blobs (zstd-compressed, as stored) by
// digest. It need not hold every blob of its manifests: a results ledger
// keeps the manifests of every cell but the outputs of small ones only.
// Nothing read from a remote is trusted: the local side verifies every blob
// against its digest (and every manifest against its key) before use, so a
// remote only moves bytes. The interface is small so that an object-store
// remote can sit beside the directory one.
type Remote interface {
	// Name is the remote's name in pipeline.toml.
	Name() string
	// Manifest reads the manifest stored under k; a missing or unreadable
	// one wraps ErrNotFound or ErrCorrupt.
	Manifest(k Key) (*Manifest, error)
	// Keys lists the keys of every manifest.
	Keys() ([]Key, error)
	// HasBlob reports whether blob d is there, without reading it.
	HasBlob(d Digest) (bool, error)
	// Blob returns blob d as stored (zstd-compressed); ErrNotFound if absent.
	Blob(d Digest) ([]byte, error)
	// PutBlob stores the compressed blob z under d.
	PutBlob(d Digest, z []byte) error
	// PutManifest stores m under m.Key, replacing any record there.
	PutManifest(m *Manifest) error
	// CreateManifest stores m under m.Key unless a record is there, and
	// reports whether it did. It is atomic: of several pushers creating
	// one record at once exactly one creates it ("first push wins").
	CreateManifest(m *Manifest) (bool, error)
}

// remoteREADMEHead opens a directory remote's README: Open refuses such a
// directory as a store.
const remoteREADMEHead = "This directory is a repro remote"

// remoteREADME is written at the root of a directory remote.
const remoteREADME = remoteREADMEHead + `: finished cells shared between stores.

blobs/XX/<sha256>.zst   outputs, zstd-compressed, named by the SHA-256 of the
                        uncompressed bytes (a ledger keeps small outputs only)
cells/XX/<key>.json     a finished cell: outputs and provenance

'repro push' adds cells, 'repro pull' and 'repro run' take them; every blob
is verified against its name before use. Files are written through a
temporary file and an atomic rename, so several pushers may share it.
`

// RemoteMarker is the file at a directory remote's root that makes it one:
// part of the format, so that a remote stays a remote (refused as a store,
// never gc'd as one) when its README is deleted or edited. Remotes made
// before the marker are recognised by their README; the next push adds the
// marker.
const RemoteMarker = "repro-remote"

// remoteMarkerText is the marker's whole content.
const remoteMarkerText = "repro remote format v1\n"

// ErrNotRemote: a directory named as a remote holds other files.
var ErrNotRemote = errors.New("not a repro remote")

// DirRemote is a remote in a directory (a shared filesystem, a disk, or a
// folder of the repository), with the store's layout.
type DirRemote struct {
	name string
	s    *Store // the layout; never Opened, so reading creates nothing
}

// OpenDirRemote returns the remote named name in dir. The directory is
// created by the first push; a missing or empty one is an empty remote. A
// remote or a store (same layout) is read; a directory holding anything
// else is refused (ErrNotRemote): a mistyped path must not become a remote.
func OpenDirRemote(name, dir string) (*DirRemote, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("remote %s: %w", name, err)
	}
	k, other, err := dirKindOf(abs)
	if err != nil {
		return nil, fmt.Errorf("remote %s (%s): %w", name, abs, err)
	}
	if k == kindForeign {
		return nil, fmt.Errorf("remote %s (%s): %w: the directory holds other files (%s) and no %s marker; name an empty or new directory", name, abs, ErrNotRemote, other, RemoteMarker)
	}
	return &DirRemote{name: name, s: &Store{root: abs, now: time.Now}}, nil
}

// Name implements Remote.
func (r *DirRemote) Name() string { return r.name }

// ManifestPath is the file that holds the record of cell k in the remote.
func (r *DirRemote) ManifestPath(k Key) string { return r.s.ManifestPath(k) }

// Root is the remote's absolute directory.
func (r *DirRemote) Root() string { return r.s.root }

// Manifest implements Remote.
func (r *DirRemote) Manifest(k Key) (*Manifest, error) {
	m, err := r.s.GetManifest(k)
	if err != nil {
		return nil, err
	}
	if m.Key != k {
		return nil, fmt.Errorf("manifest %s: %w: records key %s", k.Short(), ErrCorrupt, m.Key.Short())
	}
	return m, nil
}

// Keys implements Remote.
func (r *DirRemote) Keys() ([]Key, error) {
	var keys []Key
	err := walkFiles(filepath.Join(r.s.root, "cells"), ".json", func(path, name string) error {
		if k, err := ParseKey(name); err == nil {
			keys = append(keys, k)
		}
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return keys, err
}

// HasBlob implements Remote.
func (r *DirRemote) HasBlob(d Digest) (bool, error) {
	_, err := r.s.Stat(d)
	if errors.Is(err, ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Blob implements Remote.
func (r *DirRemote) Blob(d Digest) ([]byte, error) {
	return readBlobFile(r.s, d)
}

// PutBlob implements Remote.
func (r *DirRemote) PutBlob(d Digest, z []byte) error {
	if err := r.init(); err != nil {
		return err
	}
	return WriteFile(r.s.BlobPath(d), z, 0o444)
}

// PutManifest implements Remote.
func (r *DirRemote) PutManifest(m *Manifest) error {
	if err := r.init(); err != nil {
		return err
	}
	m.Format = ManifestFormat
	return r.s.putRecord("cells", m.Key, m)
}

// CreateManifest implements Remote (WriteFileExclusive).
func (r *DirRemote) CreateManifest(m *Manifest) (bool, error) {
	if err := r.init(); err != nil {
		return false, err
	}
	m.Format = ManifestFormat
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return false, err
	}
	return WriteFileExclusive(r.s.recordPath("cells", m.Key), append(b, '\n'), 0o644)
}

// init makes the directory a remote before the first write: the marker
// and README in a new (or empty) directory, the marker in a remote made
// before it. A store, or a directory that became foreign since
// OpenDirRemote, is refused: push writes only into remotes.
func (r *DirRemote) init() error {
	k, other, err := dirKindOf(r.s.root)
	if err != nil {
		return fmt.Errorf("remote %s: %w", r.name, err)
	}
	switch k {
	case kindRemote:
		return nil
	case kindStore:
		return fmt.Errorf("remote %s (%s): %w: it is a repro store; a remote is another directory", r.name, r.s.root, ErrNotRemote)
	case kindForeign:
		return fmt.Errorf("remote %s (%s): %w: the directory holds other files (%s) and no %s marker; name an empty or new directory", r.name, r.s.root, ErrNotRemote, other, RemoteMarker)
	}
	readme := filepath.Join(r.s.root, "README")
	if _, err := os.Stat(readme); errors.Is(err, fs.ErrNotExist) {
		if err := WriteFile(readme, []byte(remoteREADME), 0o644); err != nil {
			return err
		}
	}
	return WriteFile(filepath.Join(r.s.root, RemoteMarker), []byte(remoteMarkerText), 0o644)
}

// checkCompressed checks that z decompresses to the content of blob d.
func (s *Store) checkCompressed(d Digest, z []byte) error {
	_, err := s.decodeBlob(d, z)
	return err
}

// Transfer counts what a push or pull copied.
type Transfer struct {
	Blobs int   // blobs written
	Bytes int64 // their compressed bytes
}

// PullCell copies the finished cell m (a manifest read from r) into s: each
// output blob that s lacks is read from r, verified against its digest and
// written, and then the manifest is published. A blob r lacks or holds
// damaged is an error wrapping ErrNotFound or ErrCorrupt, and s then holds
// no manifest for the cell (blobs already verified stay: they are valid
// content either way).
func (s *Store) PullCell(r Remote, m *Manifest) (Transfer, error) {
	var t Transfer
	for _, o := range m.Outputs {
		if _, err := s.Stat(o.Digest); err == nil {
			continue
		}
		z, err := r.Blob(o.Digest)
		if err != nil {
			return t, fmt.Errorf("remote %s: cell %s: output %s: %w", r.Name(), m.CellID, o.Name, err)
		}
		if err := s.checkCompressed(o.Digest, z); err != nil {
			return t, fmt.Errorf("remote %s: cell %s: output %s: %w", r.Name(), m.CellID, o.Name, err)
		}
		if err := WriteFile(s.BlobPath(o.Digest), z, 0o444); err != nil {
			return t, err
		}
		s.checked.Store(o.Digest, struct{}{})
		t.Blobs++
		t.Bytes += int64(len(z))
	}
	cp := *m
	return t, s.PutManifest(&cp)
}

// PushCell copies the finished cell m of s to r: with blobs, first every
// output blob r lacks (read from s and verified, so a damaged local copy is
// never published), then the manifest unless r already holds a readable
// one for the key (first writer wins: a ledger in version control does not
// churn when another host recomputes a cell). other is true when r's
// manifest records other outputs than m's: the stage is not deterministic.
func (s *Store) PushCell(r Remote, m *Manifest, blobs bool) (t Transfer, wrote, other bool, err error) {
	if blobs {
		for _, o := range m.Outputs {
			if ok, err := r.HasBlob(o.Digest); err != nil || ok {
				if err != nil {
					return t, false, false, fmt.Errorf("remote %s: %w", r.Name(), err)
				}
				continue
			}
			z, err := readBlobFile(s, o.Digest)
			if err != nil {
				return t, false, false, fmt.Errorf("cell %s: output %s: %w", m.CellID, o.Name, err)
			}
			if err := s.checkCompressed(o.Digest, z); err != nil {
				return t, false, false, fmt.Errorf("cell %s: output %s: %w", m.CellID, o.Name, err)
			}
			if err := r.PutBlob(o.Digest, z); err != nil {
				return t, false, false, fmt.Errorf("remote %s: %w", r.Name(), err)
			}
			t.Blobs++
			t.Bytes += int64(len(z))
		}
	}
	// Create, then compare: of two pushers of one key exactly one writes,
	// and the other compares against the record that won.
	cp := *m
	created, err := r.CreateManifest(&cp)
	if err != nil {
		return t, false, false, fmt.Errorf("remote %s: %w", r.Name(), err)
	}
	if created {
		return t, true, false, nil
	}
	old, err := r.Manifest(m.Key)
	switch {
	case err == nil:
		return t, false, !sameOutputs(old.Outputs, m.Outputs), nil
	case errors.Is(err, ErrCorrupt):
		// A damaged record is replaced (a reader treats it as missing).
		cp := *m
		if err := r.PutManifest(&cp); err != nil {
			return t, false, false, fmt.Errorf("remote %s: %w", r.Name(), err)
		}
		return t, true, false, nil
	}
	return t, false, false, fmt.Errorf("remote %s: %w", r.Name(), err)
}

// RefreshRecord replaces the record r holds for m's key by m when both
// record the same outputs and differ otherwise (a later run of the cell:
// its provenance, CPU time and code revision), and reports whether it did.
// A record with other outputs is left alone, and a missing one is not
// added (PushCell adds it). The ledger's recorded CPU times order and
// estimate later runs; refreshing them after a stage got faster keeps
// those estimates true without changing any result.
func RefreshRecord(r Remote, m *Manifest) (bool, error) {
	old, err := r.Manifest(m.Key)
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return false, nil
		}
		return false, fmt.Errorf("remote %s: %w", r.Name(), err)
	}
	if !sameOutputs(old.Outputs, m.Outputs) {
		return false, nil
	}
	x, _ := json.Marshal(old)
	y, _ := json.Marshal(m)
	if string(x) == string(y) {
		return false, nil
	}
	cp := *m
	if err := r.PutManifest(&cp); err != nil {
		return false, fmt.Errorf("remote %s: %w", r.Name(), err)
	}
	return true, nil
}

// readBlobFile reads blob d of s as stored (compressed), naming a missing
// one ErrNotFound.
func readBlobFile(s *Store, d Digest) ([]byte, error) {
	z, err := os.ReadFile(s.BlobPath(d))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("blob %s: %w", d.Short(), ErrNotFound)
	}
	return z, err
}

func sameOutputs(a, b []Output) bool {
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// GetRemote returns the content of blob d from r, verified against its
// digest (ErrNotFound, ErrCorrupt otherwise), without storing it.
func (s *Store) GetRemote(r Remote, d Digest) ([]byte, error) {
	z, err := r.Blob(d)
	if err != nil {
		return nil, fmt.Errorf("remote %s: %w", r.Name(), err)
	}
	data, err := s.decodeBlob(d, z)
	if err != nil {
		return nil, fmt.Errorf("remote %s: %w", r.Name(), err)
	}
	return data, nil
}

// DirSize is the number of files and their bytes under dir (0 if absent).
func DirSize(dir string) (files int, bytes int64, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		files++
		bytes += fi.Size()
		return nil
	})
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	return files, bytes, err
}
