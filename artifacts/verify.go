package artifacts

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Problem is one damaged entry found by Verify.
type Problem struct {
	Path string
	Err  error
}

// VerifyReport is what Verify found.
type VerifyReport struct {
	Blobs, Manifests int       // entries checked
	Bytes            int64     // uncompressed bytes re-hashed
	Problems         []Problem // damaged entries (moved aside)
}

// Verify re-hashes every blob and parses every manifest. A blob whose
// content does not match its name is moved aside into corrupt/ (so the next
// run recomputes every cell that needs it); a manifest that does not parse
// is moved aside likewise. progress, if non-nil, is called after each blob.
func (s *Store) Verify(ctx context.Context, progress func(done int)) (*VerifyReport, error) {
	r := new(VerifyReport)
	err := walkFiles(filepath.Join(s.root, "blobs"), ".zst", func(path, name string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		d, err := ParseDigest(name)
		if err != nil {
			r.Problems = append(r.Problems, Problem{path, err})
			return nil
		}
		r.Blobs++
		data, err := s.Get(d)
		if err != nil {
			r.Problems = append(r.Problems, Problem{path, err})
			if errors.Is(err, ErrCorrupt) {
				return s.Quarantine(d)
			}
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
	err = walkFiles(filepath.Join(s.root, "cells"), ".json", func(path, name string) error {
		k, err := ParseKey(name)
		if err != nil {
			return nil
		}
		r.Manifests++
		if _, err := s.GetManifest(k); err != nil {
			r.Problems = append(r.Problems, Problem{path, err})
			dst := filepath.Join(s.root, "corrupt", name+".json")
			os.MkdirAll(filepath.Dir(dst), 0o755)
			return os.Rename(path, dst)
		}
		return nil
	})
	return r, err
}

// walkFiles calls fn for every regular file under dir whose name ends in
// ext, skipping temporary files, with the name stripped of ext.
func walkFiles(dir, ext string, fn func(path, name string) error) error {
	return filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
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
}

// GC removes every manifest, spec and failure record whose key is not in
// keep, and every blob that no kept manifest references (outputs and logs).
// Entries younger than GCGrace are left alone. With apply false nothing is
// deleted and the report says what would be.
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
	err = walkFiles(filepath.Join(s.root, "blobs"), ".zst", func(path, name string) error {
		d, err := ParseDigest(name)
		if err != nil || live[d] {
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
