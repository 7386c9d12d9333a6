package artifacts

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Problem is one damaged entry found by Verify.
type Problem struct {
	Path string // the entry, relative to the store root
	Kind string // "corrupt", "missing" or "stray"
	Err  error  // what is wrong
	// MovedTo is where the entry was moved aside (relative to the root);
	// MoveErr why it could not be, when it could not (a read-only store).
	MovedTo string
	MoveErr error
	// Cells are the cells whose records name the blob (their IDs and keys):
	// rerunning them recomputes it.
	Cells []CellRef
}

// CellRef names a cell by its ID and key.
type CellRef struct {
	ID  string
	Key Key
}

// VerifyReport is what Verify found.
type VerifyReport struct {
	Blobs, Manifests int       // entries checked
	Bytes            int64     // uncompressed bytes re-hashed
	Problems         []Problem // damaged, missing or stray entries
	// NoLog are the cells whose log is not in the store: a cell taken from
	// a remote comes with its outputs, not its log (a results ledger keeps
	// none). A log is not an output (no cell reads it), so this is not a
	// problem; `repro why` still names the log's digest.
	NoLog []CellRef
}

// Verify re-hashes every blob, parses every manifest and checks that every
// output blob a manifest names exists (a missing log is listed in NoLog).
// A blob whose content does not match its name, a file in the blob tree
// whose name is not a digest and a manifest that does not parse are moved
// aside into corrupt/, so the next run recomputes every cell that needs
// them; a problem is reported even when it cannot be moved (its MoveErr
// says why). progress, if non-nil, is called after each blob. It is long because its passes (records, then
// blobs, then missing references) fill one report and share the index of
// which cells name each blob that the first pass builds.
func (s *Store) Verify(ctx context.Context, progress func(done int)) (*VerifyReport, error) {
	r := new(VerifyReport)
	// Records first: which cells name each blob, so that a damaged or
	// missing blob is reported with the cells that recompute it.
	users := make(map[Digest][]CellRef)
	var manifests []*Manifest
	err := walkFiles(filepath.Join(s.root, "cells"), ".json", func(path, name string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		k, err := ParseKey(name)
		if err != nil {
			return nil
		}
		r.Manifests++
		m, err := s.GetManifest(k)
		if err != nil {
			to, merr := s.moveAside(path, name+".json")
			r.Problems = append(r.Problems, Problem{Path: s.rel(path), Kind: "corrupt", Err: err, MovedTo: to, MoveErr: merr})
			return nil
		}
		manifests = append(manifests, m)
		ref := CellRef{m.CellID, k}
		for _, o := range m.Outputs {
			users[o.Digest] = append(users[o.Digest], ref)
		}
		if !m.Log.IsZero() {
			users[m.Log] = append(users[m.Log], ref)
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	gone := make(map[Digest]bool) // damaged blobs, reported once
	err = walkFiles(filepath.Join(s.root, "blobs"), "", func(path, file string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		name, isZst := strings.CutSuffix(file, ".zst")
		d, err := ParseDigest(name)
		if err != nil || !isZst {
			to, merr := s.moveAside(path, file)
			r.Problems = append(r.Problems, Problem{Path: s.rel(path), Kind: "stray", Err: fmt.Errorf("not a blob (the name is no SHA-256 digest)"), MovedTo: to, MoveErr: merr})
			return nil
		}
		r.Blobs++
		data, err := s.Get(d)
		if err != nil {
			gone[d] = true
			pr := Problem{Path: s.rel(path), Kind: "corrupt", Err: err, Cells: users[d]}
			if errors.Is(err, ErrCorrupt) {
				pr.MovedTo, pr.MoveErr = s.moveAside(path, fmt.Sprintf("%s.%d.zst", d, s.now().UnixNano()))
			}
			r.Problems = append(r.Problems, pr)
			return nil
		}
		r.Bytes += int64(len(data))
		if progress != nil {
			progress(r.Blobs)
		}
		return nil
	})
	if err != nil {
		return r, err
	}
	for _, m := range manifests {
		if !m.Log.IsZero() {
			if _, err := s.Stat(m.Log); err != nil {
				r.NoLog = append(r.NoLog, CellRef{ID: m.CellID, Key: m.Key})
			}
		}
		for _, o := range m.Outputs {
			if gone[o.Digest] {
				continue
			}
			if _, err := s.Stat(o.Digest); err != nil {
				gone[o.Digest] = true
				r.Problems = append(r.Problems, Problem{Path: s.rel(s.BlobPath(o.Digest)), Kind: "missing",
					Err: fmt.Errorf("output %s of cell %s: %w", o.Name, m.CellID, err), Cells: users[o.Digest]})
			}
		}
	}
	return r, nil
}

// moveAside moves a damaged entry into corrupt/ under name; it returns the
// new path (relative to the root), or why it could not move it.
func (s *Store) moveAside(path, name string) (string, error) {
	dst := filepath.Join(s.root, "corrupt", name)
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return "", err
	}
	if _, err := os.Stat(dst); err == nil {
		dst = fmt.Sprintf("%s.%d", dst, s.now().UnixNano())
	}
	if err := os.Rename(path, dst); err != nil {
		return "", err
	}
	return s.rel(dst), nil
}

// rel is path relative to the store root (for messages).
func (s *Store) rel(path string) string {
	if r, err := filepath.Rel(s.root, path); err == nil {
		return r
	}
	return path
}

// walkFiles calls fn for every regular file under dir whose name ends in
// ext, skipping temporary files, with the name stripped of ext. A dir that
// is a symlink to a directory (blobs/ moved to a bigger disk) is followed:
// its files are walked through the link, and the link itself is never an
// entry to move or remove. Links below dir are not followed.
func walkFiles(dir, ext string, fn func(path, name string) error) error {
	root := dir
	if fi, err := os.Lstat(dir); err == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return fmt.Errorf("%s: a symlink to no directory; a store's folders may be links to directories (elsewhere on a bigger disk), nothing else", dir)
		}
		root = dir + string(filepath.Separator) // WalkDir then starts inside the link
	}
	return filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".tmp-") || !strings.HasSuffix(d.Name(), ext) {
			return nil
		}
		return fn(path, strings.TrimSuffix(d.Name(), ext))
	})
}

// GCGrace protects entries younger than this from gc: a cell running
// concurrently writes its blobs before its manifest, and they must survive.
const GCGrace = time.Hour

// GCReport lists what gc removed (or would remove, on a dry run).
type GCReport struct {
	Manifests, Specs, Blobs, Logs int
	Bytes                         int64 // compressed bytes
	Paths                         []string
	// Strays are the files in the blob tree that are not blobs (relative
	// to the root): not repro's, so gc leaves them where they are.
	Strays []string
}

// GC removes every manifest, spec and failure record whose key is not in
// keep, and every blob that no kept manifest references (outputs and logs):
// only files named as repro names them. A file in the blob tree that is not
// a blob is listed in Strays and left alone.
// Entries younger than GCGrace are left alone. With apply false nothing is
// deleted and the report says what would be. It is three sweeps in one
// body (records, running logs, the blob tree) because they share the grace
// and removal rules and the blob sweep needs the live set the first builds.
func (s *Store) GC(ctx context.Context, keep map[Key]bool, apply bool) (*GCReport, error) {
	r := new(GCReport)
	live := make(map[Digest]bool)
	now := s.now()
	old := func(path string) (int64, bool) {
		fi, err := os.Stat(path)
		if err != nil {
			return 0, false
		}
		return fi.Size(), now.Sub(fi.ModTime()) >= GCGrace
	}
	remove := func(path string, size int64) error {
		r.Paths = append(r.Paths, path)
		r.Bytes += size
		if apply {
			if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
		return nil
	}
	for _, kind := range []string{"cells", "specs", "failed"} {
		err := walkFiles(filepath.Join(s.root, kind), ".json", func(path, name string) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			k, err := ParseKey(name)
			if err != nil {
				return nil
			}
			if keep[k] {
				if kind == "cells" {
					if m, err := s.GetManifest(k); err == nil {
						for _, o := range m.Outputs {
							live[o.Digest] = true
						}
						live[m.Log] = true
					}
				}
				return nil
			}
			size, isOld := old(path)
			if !isOld {
				return nil
			}
			switch kind {
			case "cells":
				r.Manifests++
			case "specs":
				r.Specs++
			}
			return remove(path, size)
		})
		if err != nil {
			return r, err
		}
	}
	// Running logs (logs/<key>.log, <key>.slurm.log) of cells not kept: a
	// finished cell's log is a blob referenced by its manifest.
	err := walkFiles(filepath.Join(s.root, "logs"), ".log", func(path, name string) error {
		k, err := ParseKey(strings.TrimSuffix(name, ".slurm"))
		if err != nil || keep[k] {
			return nil
		}
		size, isOld := old(path)
		if !isOld {
			return nil
		}
		r.Logs++
		return remove(path, size)
	})
	if err != nil {
		return r, err
	}
	err = walkFiles(filepath.Join(s.root, "blobs"), "", func(path, file string) error {
		name, isZst := strings.CutSuffix(file, ".zst")
		d, err := ParseDigest(name)
		stray := err != nil || !isZst // not a blob: nothing can reference it
		if !stray && live[d] {
			return nil
		}
		if stray {
			// Not a name repro writes: someone else's file, left alone.
			r.Strays = append(r.Strays, s.rel(path))
			return nil
		}
		size, isOld := old(path)
		if !isOld {
			return nil
		}
		r.Blobs++
		return remove(path, size)
	})
	return r, err
}
