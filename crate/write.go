package crate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"repro/artifacts"
)

// Marker is the file Write leaves in a crate's folder: it lists the files
// the crate wrote, so that a later Write may replace them and only them.
const Marker = ".repro-crate"

// markerHead opens the marker; a folder whose marker does not start so is
// not a crate of ours.
const markerHead = "repro crate v1: the files below were written by repro crate, which may replace them\n"

// ErrNotCrate is returned by Write for a folder that has files and no
// marker: it is not a previous crate, and nothing is written.
var ErrNotCrate = errors.New("not empty and not a crate written by repro crate")

// Stats says what Write wrote.
type Stats struct {
	Files int   // files in the crate, the metadata file included
	Bytes int64 // their total size
	// MetadataBytes is the size of ro-crate-metadata.json.
	MetadataBytes int64
}

// Context is the crate's @context: RO-Crate 1.1's, with the terms it adds
// (the checksum and the two PROV links; see the package doc).
func Context() []any {
	return []any{ROCrateContext, map[string]string{"sha256": SHA256Term, "prov": PROV}}
}

// Marshal is the crate's metadata file: the @context and the flat
// @graph, indented.
func (c *Crate) Marshal() ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	if err := enc.Encode(map[string]any{"@context": Context(), "@graph": c.Graph}); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Write writes c into dir: each file of c.Files, checked against its
// digest, then the metadata file, then the marker. dir must be absent,
// empty or a crate Write wrote before, whose files it removes first (and
// no others). It is not safe for two writers of one dir at once.
func Write(dir string, c *Crate) (Stats, error) {
	old, err := checkOutDir(dir)
	if err != nil {
		return Stats{}, err
	}
	for _, rel := range old {
		if err := os.Remove(filepath.Join(dir, filepath.FromSlash(rel))); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return Stats{}, fmt.Errorf("crate %s: remove the previous crate's %s: %w", dir, rel, err)
		}
	}
	removeEmptyDirs(dir)
	var st Stats
	var written []string
	for _, f := range c.Files {
		b, err := os.ReadFile(f.Source)
		if err != nil {
			return st, fmt.Errorf("crate %s: %w", dir, err)
		}
		// The file as read must be the file described (a file changed
		// since Build read it would make the crate lie).
		if sum := sha256.Sum256(b); hex.EncodeToString(sum[:]) != f.SHA256 {
			return st, fmt.Errorf("crate %s: %s changed while the crate was written (sha256 %x, described as %s)", dir, f.Source, sum, f.SHA256)
		}
		if err := checkRel(f.Path); err != nil {
			return st, fmt.Errorf("crate %s: %w", dir, err)
		}
		if err := artifacts.WriteFile(filepath.Join(dir, filepath.FromSlash(f.Path)), b, 0o644); err != nil {
			return st, err
		}
		written = append(written, f.Path)
		st.Files++
		st.Bytes += int64(len(b))
	}
	meta, err := c.Marshal()
	if err != nil {
		return st, err
	}
	if err := artifacts.WriteFile(filepath.Join(dir, MetadataFile), meta, 0o644); err != nil {
		return st, err
	}
	written = append(written, MetadataFile)
	st.Files++
	st.Bytes += int64(len(meta))
	st.MetadataBytes = int64(len(meta))
	slices.Sort(written)
	marker := markerHead + strings.Join(written, "\n") + "\n"
	return st, artifacts.WriteFile(filepath.Join(dir, Marker), []byte(marker), 0o644)
}

// checkOutDir says whether dir may take a crate: it may be absent, empty
// or a previous crate, whose files (as its marker lists them) it returns.
// A shared helper for output folders may replace it.
func checkOutDir(dir string) (previous []string, err error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) || err == nil && len(ents) == 0 {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("crate %s: %w", dir, err)
	}
	b, err := os.ReadFile(filepath.Join(dir, Marker))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("crate %s: %w (no %s in it): name a new folder", dir, ErrNotCrate, Marker)
	}
	if err != nil {
		return nil, fmt.Errorf("crate %s: %w", dir, err)
	}
	rest, ok := strings.CutPrefix(string(b), markerHead)
	if !ok {
		return nil, fmt.Errorf("crate %s: %w (its %s is not ours)", dir, ErrNotCrate, Marker)
	}
	for _, rel := range strings.Split(strings.TrimSuffix(rest, "\n"), "\n") {
		if rel == "" {
			continue
		}
		if err := checkRel(rel); err != nil {
			return nil, fmt.Errorf("crate %s: %s: %w", dir, Marker, err)
		}
		previous = append(previous, rel)
	}
	return previous, nil
}

// checkRel refuses a path that would leave the crate's folder.
func checkRel(rel string) error {
	if rel == "" || filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || !filepath.IsLocal(filepath.FromSlash(rel)) || rel == Marker {
		return fmt.Errorf("path %q is not a file inside the crate", rel)
	}
	return nil
}

// removeEmptyDirs removes the folders under dir a previous crate left
// empty (deepest first), never dir itself.
func removeEmptyDirs(dir string) {
	var dirs []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.IsDir() && p != dir {
			dirs = append(dirs, p)
		}
		return nil
	})
	for i := len(dirs) - 1; i >= 0; i-- {
		os.Remove(dirs[i]) // fails, as it should, when not empty
	}
}
