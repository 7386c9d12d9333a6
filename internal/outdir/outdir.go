package outdir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// ErrForeign is wrapped by the error of Check for a folder that holds
// files the command did not write.
var ErrForeign = errors.New("holds files repro did not write")

// ForeignError is Check's error for a foreign folder: the folder and one
// entry that makes it so (relative, slash-separated).
type ForeignError struct {
	Dir, Entry, Marker string
}

func (e *ForeignError) Error() string {
	return fmt.Sprintf("%s %v (%s) and no %s marker listing it: name an empty or new folder; nothing was written or removed",
		e.Dir, ErrForeign, e.Entry, e.Marker)
}

func (e *ForeignError) Unwrap() error { return ErrForeign }

// Owner is the rule of one kind of output folder.
type Owner struct {
	// Marker is the marker file's name at the folder's root (".repro-site").
	Marker string
	// Kind is the marker's first line ("repro report site v1"): a marker
	// of another kind does not make the folder this command's.
	Kind string
	// Legacy, when set, accepts a folder without a marker whose every file
	// (relative, slash-separated) it accepts: a folder the command wrote
	// before it wrote markers. The next write adds the marker.
	Legacy func(rel string) bool
}

// tempPrefix names the temporary files of artifacts.WriteFile: a folder
// holding only those is empty (an interrupted write left them).
const tempPrefix = ".tmp-"

// Check reports whether the command may write dir: nil when dir is
// missing, empty (temporary files aside), holds this Owner's marker (a
// regular file, not a symlink) listing every file in it, or is a Legacy
// folder. Otherwise it returns a *ForeignError (wrapping ErrForeign), or
// the error that kept it from reading dir. It changes nothing.
func (o Owner) Check(dir string) error {
	_, err := o.Owned(dir)
	return err
}

// Owned is Check that also returns the files (relative, slash-separated)
// the folder's marker lists, or for a Legacy folder every file it holds:
// what RemoveOwned may remove. The marker itself is not in the list.
func (o Owner) Owned(dir string) ([]string, error) {
	fi, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, fmt.Errorf("%s is not a folder (%s): name an empty or new folder", dir, fi.Mode().Type())
	}
	files, dirs, err := walk(dir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 && len(dirs) == 0 {
		return nil, nil
	}
	listed, marked, err := o.readMarker(dir)
	if err != nil {
		return nil, err
	}
	if !marked {
		for _, f := range files {
			if o.Legacy == nil || !o.Legacy(f) {
				return nil, &ForeignError{Dir: dir, Entry: f, Marker: o.Marker}
			}
		}
		if len(files) == 0 {
			return nil, &ForeignError{Dir: dir, Entry: dirs[0] + "/", Marker: o.Marker}
		}
		return files, nil
	}
	inList := map[string]bool{}
	parents := map[string]bool{}
	for _, f := range listed {
		inList[f] = true
		for p := pathDir(f); p != ""; p = pathDir(p) {
			parents[p] = true
		}
	}
	for _, f := range files {
		if f != o.Marker && !inList[f] {
			return nil, &ForeignError{Dir: dir, Entry: f, Marker: o.Marker}
		}
	}
	for _, d := range dirs {
		if !parents[d] {
			return nil, &ForeignError{Dir: dir, Entry: d + "/", Marker: o.Marker}
		}
	}
	var out []string
	for _, f := range files {
		if f != o.Marker {
			out = append(out, f)
		}
	}
	return out, nil
}

// pathDir is the parent of slash path p, "" at the top.
func pathDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return ""
	}
	return p[:i]
}

// walk lists the files and folders under dir (relative, slash-separated,
// sorted), temporary files aside. A symlink is listed as a file: it is
// never followed.
func walk(dir string) (files, dirs []string, err error) {
	err = filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if path == dir {
			return nil
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			dirs = append(dirs, rel)
			return nil
		}
		if !strings.HasPrefix(d.Name(), tempPrefix) {
			files = append(files, rel)
		}
		return nil
	})
	slices.Sort(files)
	slices.Sort(dirs)
	return files, dirs, err
}

// readMarker reads dir's marker: the files it lists and whether it is this
// Owner's. A marker that is not a regular file, or of another kind, is
// no marker.
func (o Owner) readMarker(dir string) (files []string, ok bool, err error) {
	path := filepath.Join(dir, o.Marker)
	fi, err := os.Lstat(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	if !fi.Mode().IsRegular() {
		return nil, false, nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, false, err
	}
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if lines[0] != o.Kind {
		return nil, false, nil
	}
	for _, l := range lines[1:] {
		if l != "" {
			files = append(files, l)
		}
	}
	return files, true, nil
}

// MarkerText is the content of this Owner's marker for a folder holding
// files (relative, slash-separated; sorted here).
func (o Owner) MarkerText(files []string) []byte {
	fs := slices.Clone(files)
	slices.Sort(fs)
	var b strings.Builder
	b.WriteString(o.Kind + "\n")
	for _, f := range fs {
		b.WriteString(f + "\n")
	}
	return []byte(b.String())
}

// RemoveOwned removes from dir the files listed (relative, slash-separated,
// as Owned returns them) and the marker, then every folder left empty,
// dir included. Anything else stays: when something does, RemoveOwned
// returns an error naming it (dir is then kept with it).
func (o Owner) RemoveOwned(dir string, files []string) error {
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	for _, f := range append(slices.Clone(files), o.Marker) {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(f))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	_, dirs, err := walk(dir)
	if err != nil {
		return err
	}
	// Deepest first, so that a parent is empty when its turn comes.
	slices.SortFunc(dirs, func(a, b string) int { return strings.Count(b, "/") - strings.Count(a, "/") })
	for _, d := range dirs {
		os.Remove(filepath.Join(dir, filepath.FromSlash(d))) // fails, harmlessly, unless empty
	}
	if err := os.Remove(dir); err != nil && !errors.Is(err, fs.ErrNotExist) {
		left, _, _ := walk(dir)
		if len(left) > 0 {
			return fmt.Errorf("%s kept: it holds %s, which repro did not write", dir, left[0])
		}
		return err
	}
	return nil
}
