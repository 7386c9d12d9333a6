package crate

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"repro/artifacts"
	"repro/internal/outdir"
)

// Marker is the file Write leaves in a crate's folder: it lists the files
// the crate wrote, so that a later Write may replace them and only them.
const Marker = ".repro-crate"

// Owner is the crate folder's rule, the one every command that writes a
// folder follows (internal/outdir): absent, empty, or a crate Write wrote
// before, its marker listing every file in it.
var Owner = outdir.Owner{Marker: Marker, Kind: "repro crate v1: the files below were written by repro crate, which may replace them"}

// ErrNotCrate is wrapped by Write's error for a folder that holds files
// no crate of ours wrote: nothing is written or removed.
var ErrNotCrate = outdir.ErrForeign

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
	old, err := Owner.Owned(dir)
	if err != nil {
		return Stats{}, fmt.Errorf("crate: %w", err)
	}
	for _, rel := range old {
		if err := checkRel(rel); err != nil {
			return Stats{}, fmt.Errorf("crate %s: %s: %w", dir, Marker, err)
		}
	}
	if err := Owner.RemoveOwned(dir, old); err != nil {
		return Stats{}, fmt.Errorf("crate %s: remove the previous crate: %w", dir, err)
	}
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
	return st, artifacts.WriteFile(filepath.Join(dir, Marker), Owner.MarkerText(written), 0o644)
}

// checkRel refuses a path that would leave the crate's folder.
func checkRel(rel string) error {
	if rel == "" || filepath.IsAbs(rel) || strings.HasPrefix(rel, "/") || !filepath.IsLocal(filepath.FromSlash(rel)) || rel == Marker {
		return fmt.Errorf("path %q is not a file inside the crate", rel)
	}
	return nil
}
