package artifacts

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// WriteFile atomically replaces path with data: temporary file in the same
// directory, write, check length, fsync, close, rename, fsync the directory.
// On any error the temporary file is removed and path is untouched. Every
// file of the store, and every file repro writes into the work tree, goes
// through it.
func WriteFile(path string, data []byte, perm os.FileMode) (err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(tmp)
		}
	}()
	n, err := f.Write(data)
	if err != nil {
		return err
	}
	if n != len(data) {
		return fmt.Errorf("write %s: wrote %d of %d bytes", tmp, n, len(data))
	}
	if err := f.Chmod(perm); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Some filesystems (and some network filesystems) refuse fsync on a
	// directory; the rename has happened, so that is not a failure.
	_ = d.Sync()
	return nil
}

// WriteFileExclusive creates path with data unless a file is there, and
// reports whether it did: the data is written and synced to a temporary
// file, which is then hard-linked to path, an atomic create-if-absent (of
// several processes or hosts creating one path at once exactly one
// succeeds, and a reader never sees a partial file). On a filesystem
// without hard links it falls back to a check and WriteFile, which a
// concurrent writer can race.
func WriteFileExclusive(path string, data []byte, perm os.FileMode) (created bool, err error) {
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return false, err
	}
	f, err := os.CreateTemp(dir, ".tmp-"+filepath.Base(path)+"-*")
	if err != nil {
		return false, err
	}
	tmp := f.Name()
	defer os.Remove(tmp)
	n, err := f.Write(data)
	if err == nil && n != len(data) {
		err = fmt.Errorf("write %s: wrote %d of %d bytes", tmp, n, len(data))
	}
	if err == nil {
		err = f.Chmod(perm)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return false, err
	}
	err = os.Link(tmp, path)
	switch {
	case err == nil:
		return true, syncDir(dir)
	case errors.Is(err, fs.ErrExist):
		return false, nil
	case errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.ENOTSUP) || errors.Is(err, syscall.EXDEV):
		// No hard links here (some network and FUSE filesystems).
		if _, serr := os.Lstat(path); serr == nil {
			return false, nil
		}
		return true, WriteFile(path, data, perm)
	}
	return false, err
}
