package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/klauspost/compress/zstd"
)

// Sentinel errors callers branch on with errors.Is.
var (
	// ErrNotFound: the blob, manifest or spec is not in the store.
	ErrNotFound = errors.New("not found")
	// ErrCorrupt: the stored bytes do not match their name; treat as missing.
	ErrCorrupt = errors.New("corrupt")
)

// storeREADMEHead opens every store's README: Open recognises a store by it.
const storeREADMEHead = "This directory is a repro artifact store"

// storeREADME is written at the root of every store so that a person who
// finds the directory knows what it is and what is safe to delete.
const storeREADME = storeREADMEHead + ` (format v1).

blobs/XX/<sha256>.zst   immutable content, zstd-compressed; named by the
                        SHA-256 of the uncompressed bytes
specs/XX/<key>.json     what a cell needs to run anywhere (stage, params, inputs)
cells/XX/<key>.json     a finished cell: outputs and provenance (written last)
failed/XX/<key>.json    the last failure of a cell (error and log digest)
refs/<profile>/...      the key each cell ID had when last planned
runs/<profile>.json     the last run: wall, jobs, busy and idle core-seconds
locks/<key>.lock        a cell being computed (pid, host, heartbeat)
logs/<key>.log          a cell's log while it runs (kept with the record after)
corrupt/                blobs that failed verification, moved aside

Everything is written through a temporary file and an atomic rename, so
several processes and hosts may share this directory. Use 'repro verify' to
check it and 'repro gc' to remove what the current plan does not reach.
`

// Store is a content-addressed artifact store rooted at a directory. A Store
// is safe for concurrent use by several goroutines, and several processes or
// hosts may open the same root at once.
type Store struct {
	root string
	now  func() time.Time

	encOnce sync.Once
	enc     *zstd.Encoder
	dec     *zstd.Decoder
	encErr  error

	// checked holds the digests of blobs this Store wrote, pulled or read
	// and found sound (CheckBlob): Digest -> struct{}.
	checked sync.Map
	// manifests memoises the manifests GetManifest decoded: Key ->
	// memoManifest, used while the file is unchanged.
	manifests sync.Map
}

// Options configure Open.
type Options struct {
	// Now is the clock (default time.Now); tests pass a fake.
	Now func() time.Time
	// Create makes a store even in a non-empty directory that is not one.
	Create bool
}

// Open opens the store at root, creating it when root is absent or an
// empty directory. An existing directory that holds anything but a store is
// refused (ErrNotStore): a mistyped --store must not turn a home or source
// directory into a store. Options.Create creates one there anyway (repro init),
// except in a directory remote: it has a store's layout but only the
// outputs of small cells, so a store's plan there would see almost nothing
// (gc would remove almost every record it holds).
func Open(root string, opt Options) (*Store, error) {
	abs, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("store %s: %w", root, err)
	}
	if k, _, err := dirKindOf(abs); err == nil && (k == kindRemote || k == kindOldRemote) {
		return nil, fmt.Errorf("store %s: %w: it is a repro remote (a results ledger, which push, pull and settings.remotes use); "+
			"name another directory for the store", abs, ErrNotStore)
	}
	if !opt.Create {
		if err := checkStoreDir(abs); err != nil {
			return nil, err
		}
	} else if err := checkNoClash(abs); err != nil {
		return nil, err
	}
	// The README first: a second process opening the directory meanwhile
	// sees a store, not a foreign directory.
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("store %s: %w", abs, err)
	}
	readme := filepath.Join(abs, "README")
	if _, err := os.Stat(readme); errors.Is(err, fs.ErrNotExist) {
		if err := WriteFile(readme, []byte(storeREADME), 0o644); err != nil {
			return nil, fmt.Errorf("store %s: %w", abs, err)
		}
	}
	for _, d := range storeDirs {
		if err := os.MkdirAll(filepath.Join(abs, d), 0o755); err != nil {
			return nil, fmt.Errorf("store %s: %w", abs, err)
		}
	}
	s := &Store{root: abs, now: opt.Now}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// storeDirs are the directories Open creates at a store's root.
var storeDirs = []string{"blobs", "specs", "cells", "failed", "refs", "locks", "logs"}

// ErrNotStore: the directory exists, is not empty and is not a store.
var ErrNotStore = errors.New("not a repro store")

// checkStoreDir accepts a missing or empty directory, a store (its README
// says so), and a store being created by another process (its README is
// written first, through a temporary file, so nothing but temporary files
// can be there yet). A directory holding anything else, even folders with
// a store's names, is someone else's: gc and verify would delete or move
// its files.
func checkStoreDir(dir string) error {
	k, other, err := dirKindOf(dir)
	if err != nil {
		return fmt.Errorf("store %s: %w", dir, err)
	}
	if k == kindForeign {
		return fmt.Errorf("store %s: %w: the directory holds other files (%s) and no store README; "+
			"name an empty or new directory, or run 'repro init --store %s' to make it a store anyway", dir, ErrNotStore, other, dir)
	}
	return nil
}

// storeNames are the entries a store keeps at its root: a folder that
// holds one of them and is not a store cannot become one (Options.Create),
// or the store would take another's files for its own (verify moves a
// file it does not know in blobs/ aside, gc removes what it names).
var storeNames = append([]string{"README", "corrupt", "runs"}, storeDirs...)

// checkNoClash refuses to make a store in a foreign directory that holds
// an entry under a store's names.
func checkNoClash(dir string) error {
	k, _, err := dirKindOf(dir)
	if err != nil || k != kindForeign {
		return err
	}
	for _, n := range storeNames {
		if _, err := os.Lstat(filepath.Join(dir, n)); err == nil {
			return fmt.Errorf("store %s: %w: the directory holds %s, which a store would take for its own; name an empty or new directory", dir, ErrNotStore, n)
		}
	}
	return nil
}

// dirKind is what a directory named as a store or a remote holds.
type dirKind int

const (
	kindEmpty     dirKind = iota // missing, empty, or only temporary files
	kindStore                    // a store's README
	kindRemote                   // a remote's marker (RemoteMarker)
	kindOldRemote                // a remote's README without the marker (made before it)
	kindForeign                  // anything else: not ours
)

// dirKindOf classifies dir; for a foreign directory it names one entry.
func dirKindOf(dir string) (dirKind, string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return kindEmpty, "", nil
	}
	if err != nil {
		return kindForeign, "", err
	}
	if b, err := os.ReadFile(filepath.Join(dir, RemoteMarker)); err == nil && string(b) == remoteMarkerText {
		return kindRemote, "", nil
	}
	if b, err := os.ReadFile(filepath.Join(dir, "README")); err == nil {
		switch {
		case strings.HasPrefix(string(b), storeREADMEHead):
			return kindStore, "", nil
		case strings.HasPrefix(string(b), remoteREADMEHead):
			return kindOldRemote, "", nil
		}
	}
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".tmp-") {
			return kindForeign, e.Name(), nil
		}
	}
	return kindEmpty, "", nil
}

// Root is the store's absolute directory.
func (s *Store) Root() string { return s.root }

// Now reads the store's clock.
func (s *Store) Now() time.Time { return s.now() }

func (s *Store) coders() (*zstd.Encoder, *zstd.Decoder, error) {
	s.encOnce.Do(func() {
		// One encoder and decoder per store, used through EncodeAll and
		// DecodeAll, which are safe for concurrent use. The encoder runs at
		// SpeedFastest (about zstd level 1): every output of every cell is
		// compressed once on the cell's own core, so speed counts more than
		// ratio. The level is not part of any name (blobs are named by their
		// uncompressed content), so changing it changes no digest or key.
		s.enc, s.encErr = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
		if s.encErr == nil {
			s.dec, s.encErr = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(8<<30))
		}
	})
	return s.enc, s.dec, s.encErr
}

func fanout(dir, name string) string { return filepath.Join(dir, name[:2], name) }

// BlobPath is where the blob d lives (whether or not it exists).
func (s *Store) BlobPath(d Digest) string {
	return fanout(filepath.Join(s.root, "blobs"), d.String()) + ".zst"
}

// Put stores data and returns its digest. Content already present is
// re-hashed once (CheckBlob), unless this Store wrote or checked it
// already: a damaged copy is moved aside and replaced by data, so a cell
// recomputed over a damaged output repairs it.
func (s *Store) Put(data []byte) (Digest, error) {
	d := Sum(data)
	if _, err := s.Stat(d); err == nil {
		if err := s.CheckBlob(d); err == nil || !errors.Is(err, ErrCorrupt) && !errors.Is(err, ErrNotFound) {
			return d, err
		}
	}
	enc, dec, err := s.coders()
	if err != nil {
		return d, err
	}
	z := enc.EncodeAll(data, make([]byte, 0, len(data)/2+64))
	// Verify before publishing: decompress and re-hash what goes to disk
	// (restic verifies ciphertext the same way), so a coder fault can never
	// publish a blob whose content does not match its name.
	back, err := dec.DecodeAll(z, make([]byte, 0, len(data)))
	if err != nil || Sum(back) != d {
		return d, fmt.Errorf("blob %s: compressed copy does not verify", d.Short())
	}
	if err := WriteFile(s.BlobPath(d), z, 0o444); err != nil {
		return d, fmt.Errorf("blob %s: %w", d.Short(), err)
	}
	s.checked.Store(d, struct{}{})
	return d, nil
}

// Get returns the content of blob d, verified against its name. A missing
// blob gives ErrNotFound; a damaged one ErrCorrupt (callers treat both as a
// miss).
func (s *Store) Get(d Digest) ([]byte, error) {
	z, err := readBlobFile(s, d)
	if err != nil {
		return nil, err
	}
	data, err := s.decodeBlob(d, z)
	if err == nil {
		s.checked.Store(d, struct{}{})
	}
	return data, err
}

// decodeBlob decompresses z and checks that it is the content of blob d
// (ErrCorrupt otherwise).
func (s *Store) decodeBlob(d Digest, z []byte) ([]byte, error) {
	_, dec, err := s.coders()
	if err != nil {
		return nil, err
	}
	data, err := dec.DecodeAll(z, nil)
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w: %v", d.Short(), ErrCorrupt, err)
	}
	if got := Sum(data); got != d {
		return nil, fmt.Errorf("blob %s: %w: content hashes to %s", d.Short(), ErrCorrupt, got.Short())
	}
	return data, nil
}

// Stat reports the compressed size of blob d without reading it; a missing
// blob gives ErrNotFound. It does not verify content (Get and Verify do).
func (s *Store) Stat(d Digest) (int64, error) {
	fi, err := os.Stat(s.BlobPath(d))
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("blob %s: %w", d.Short(), ErrNotFound)
	}
	if err != nil {
		return 0, err
	}
	return fi.Size(), nil
}

// Quarantine moves blob d aside into corrupt/, so that the next run
// recomputes whatever needs it. It is not an error if d is already gone.
func (s *Store) Quarantine(d Digest) error {
	if _, err := s.moveAside(s.BlobPath(d), fmt.Sprintf("%s.%d.zst", d, s.now().UnixNano())); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob %s: quarantine: %w", d.Short(), err)
	}
	return nil
}
