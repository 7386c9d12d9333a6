package artifacts

import (
	"fmt"
	"os"
	"path/filepath"
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
