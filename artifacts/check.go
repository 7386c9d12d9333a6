package artifacts

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/klauspost/compress/zstd"
)

// CheckBlob re-hashes blob d as a reader would, streaming (a prepared data
// set need not fit in memory twice): nil when its content hashes to d,
// ErrNotFound when it is absent, ErrCorrupt when it does not decompress or
// hashes to something else; a corrupt blob is moved aside into corrupt/ at
// once, so that nothing later in the run or after it reads it. A blob this
// Store wrote, pulled or read (verifying it) earlier is not read again:
// blobs are immutable (0444) and named by content, so within one process
// the first check stands.
func (s *Store) CheckBlob(d Digest) error {
	if _, ok := s.checked.Load(d); ok {
		return nil
	}
	f, err := os.Open(s.BlobPath(d))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob %s: %w", d.Short(), ErrNotFound)
	}
	if err != nil {
		return fmt.Errorf("blob %s: %w", d.Short(), err)
	}
	defer f.Close()
	dec, err := zstd.NewReader(f, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(8<<30))
	if err != nil {
		return fmt.Errorf("blob %s: %w", d.Short(), err)
	}
	defer dec.Close()
	h := sha256.New()
	if _, err := io.Copy(h, dec); err != nil {
		return s.quarantined(d, fmt.Errorf("blob %s: %w: %v", d.Short(), ErrCorrupt, err))
	}
	var got Digest
	h.Sum(got[:0])
	if got != d {
		return s.quarantined(d, fmt.Errorf("blob %s: %w: content hashes to %s", d.Short(), ErrCorrupt, got.Short()))
	}
	s.checked.Store(d, struct{}{})
	return nil
}

// ErrStuck is wrapped (beside ErrCorrupt) by the error of a damaged blob
// that could not be moved aside (a read-only store, a file named corrupt
// at its root, an immutable folder): it stays under its name, so the cell
// that made it cannot be recomputed until the cause is fixed (StuckAdvice).
var ErrStuck = errors.New("cannot be moved aside")

// StuckAdvice says what lets the store move damaged blobs aside again,
// for an error wrapping ErrStuck.
func (s *Store) StuckAdvice() string {
	corrupt := filepath.Join(s.root, "corrupt")
	if fi, err := os.Lstat(corrupt); err == nil && !fi.IsDir() {
		return fmt.Sprintf("move the file %s away (the store puts damaged blobs in a folder of that name), then run again", corrupt)
	}
	return fmt.Sprintf("make the store %s (its corrupt/ and blobs/ folders) writable by this user, then run again", s.root)
}

// quarantined moves blob d aside and returns err (saying where it went, or
// wrapping ErrStuck with why it stayed).
func (s *Store) quarantined(d Digest, err error) error {
	if qerr := s.Quarantine(d); qerr != nil {
		return fmt.Errorf("%w; it %w (%v)", err, ErrStuck, qerr)
	}
	return fmt.Errorf("%w (moved aside into corrupt/)", err)
}

// LookupVerified is Lookup with every output blob re-hashed (CheckBlob):
// the check a run makes before it counts a cell as cached, so that a
// damaged output is never served; the cell is then a miss wrapping
// ErrCorrupt and its blob is in corrupt/. The log is not checked: no cell
// reads it.
func (s *Store) LookupVerified(k Key) (*Manifest, error) {
	m, err := s.Lookup(k)
	if err != nil {
		return nil, err
	}
	for _, o := range m.Outputs {
		if err := s.CheckBlob(o.Digest); err != nil {
			return nil, fmt.Errorf("cell %s: output %s: %w", m.CellID, o.Name, err)
		}
	}
	return m, nil
}
