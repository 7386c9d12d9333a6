package crate

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"repro/artifacts"
)

// fileOf writes content to dir/name and describes it as the crate's path.
func fileOf(t *testing.T, dir, name, path, content string) *File {
	t.Helper()
	src := filepath.Join(dir, name)
	if err := os.WriteFile(src, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256([]byte(content))
	return &File{Path: path, Source: src, Name: name, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(content))}
}

func digest(s string) artifacts.Digest { return artifacts.Digest(sha256.Sum256([]byte(s))) }

// twoCells is a download record and a train record that read it; both
// write a file of the same bytes, as two cells of the ledger may.
func twoCells() (down, train *artifacts.Manifest) {
	t0 := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	down = &artifacts.Manifest{Key: artifacts.Key(sha256.Sum256([]byte("down"))), CellID: "download/mnist", Stage: "download", StageVersion: 1,
		Params:     "download.dataset \"mnist\"\n",
		Outputs:    []artifacts.Output{{Name: "train.gz", Digest: digest("images"), Size: 6}, {Name: "note", Digest: digest("same"), Size: 4}},
		Provenance: artifacts.Provenance{Revision: "aaaa", Host: "vm", CPU: "EPYC", Kernels: "avx2", Executor: "local", Start: t0, End: t0.Add(time.Second)}}
	train = &artifacts.Manifest{Key: artifacts.Key(sha256.Sum256([]byte("train"))), CellID: "train/x/seed3", Stage: "train", StageVersion: 2,
		Params:     "train.lr 0.01\ntrain.seed 3\n",
		Inputs:     []artifacts.Input{{Name: "data", CellID: down.CellID, Key: down.Key, Outputs: down.Outputs}},
		Outputs:    []artifacts.Output{{Name: "result", Digest: digest("result"), Size: 6}, {Name: "copy", Digest: digest("same"), Size: 4}},
		Provenance: artifacts.Provenance{Revision: "bbbb", Host: "vm", CPU: "EPYC", Kernels: "avx512", Executor: "local", Start: t0.Add(2 * time.Second), End: t0.Add(9 * time.Second)}}
	return down, train
}

func testInput(t *testing.T) *Input {
	dir := t.TempDir()
	down, train := twoCells()
	return &Input{Name: "test crate", Description: "a test", Published: train.Provenance.End, Revision: "cccc", Profile: "paper",
		Workflow: fileOf(t, dir, "pipeline.toml", WorkflowID, "[settings]\n"),
		README:   fileOf(t, dir, "README.md", "README.md", "# x\n"),
		Citation: fileOf(t, dir, "CITATION.cff", "CITATION.cff", "cff-version: 1.2.0\n"),
		Records:  []*artifacts.Manifest{down, train},
		Releases: []Release{{Dataset: "mnist", Files: []ReleaseFile{{Name: "train.gz", URLs: []string{"https://example.org/train.gz", "https://mirror.example.org/train.gz"}, SHA256: digest("images").String(), Size: 6}}}},
		Numbers:  []Number{{ID: "t/x/seq", Group: "t", Ours: "91.7", Published: "91.6", Verdict: "agrees", Seeds: []Seed{{Seed: 3, Key: train.Key, Result: digest("result").String()}}}},
	}
}

func entities(c *Crate) map[string]Entity {
	m := map[string]Entity{}
	for _, e := range c.Graph {
		m[e["@id"].(string)] = e
	}
	return m
}

func refIDs(v any) []string {
	var out []string
	switch r := v.(type) {
	case map[string]string:
		out = append(out, r["@id"])
	case []map[string]string:
		for _, x := range r {
			out = append(out, x["@id"])
		}
	}
	return out
}

func TestBuild(t *testing.T) {
	in := testInput(t)
	c, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	g := entities(c)
	down, train := in.Records[0], in.Records[1]
	root := g["./"]
	if got := refIDs(root["conformsTo"]); !slices.Contains(got, ProvenanceRun) || !slices.Contains(got, WorkflowCrate) {
		t.Errorf("root conformsTo %v", got)
	}
	if got := refIDs(g[MetadataFile]["conformsTo"]); !slices.Contains(got, ROCrate) {
		t.Errorf("descriptor conformsTo %v", got)
	}
	a := g[ActionID(train.Key)]
	if a == nil {
		t.Fatalf("no action for the train record")
	}
	if got := refIDs(a["instrument"]); !slices.Equal(got, []string{ToolID("train", 2)}) {
		t.Errorf("train action's instrument %v", got)
	}
	if got := refIDs(a["prov:wasInformedBy"]); !slices.Equal(got, []string{ActionID(down.Key)}) {
		t.Errorf("train action informed by %v, want the download record's action", got)
	}
	// The release file is named by its canonical URL wherever a cell
	// reads it; the file two cells write is one entity.
	if got := refIDs(a["object"]); !slices.Contains(got, "https://example.org/train.gz") || !slices.Contains(got, "#param-train.seed=3") {
		t.Errorf("train action's object %v", got)
	}
	same := DigestID(digest("same").String())
	if !slices.Contains(refIDs(a["result"]), same) || !slices.Contains(refIDs(g[ActionID(down.Key)]["result"]), same) {
		t.Errorf("the file both cells write is not one entity %s", same)
	}
	if g[same]["sha256"] != digest("same").String() {
		t.Errorf("file %s: sha256 %v", same, g[same]["sha256"])
	}
	n := g[NumberID("t/x/seq")]
	if got := refIDs(n["prov:wasInfluencedBy"]); !slices.Equal(got, []string{ActionID(train.Key)}) {
		t.Errorf("number's seeds %v", got)
	}
	if got := refIDs(n["valueReference"]); len(got) != 2 || g[got[1]]["value"] != "agrees" {
		t.Errorf("number's verdict %v", got)
	}
	var builds []string
	for _, id := range refIDs(a["additionalProperty"]) {
		builds = append(builds, g[id]["propertyID"].(string)+"="+g[id]["value"].(string))
	}
	for _, want := range []string{"revision=bbbb", "cpu=EPYC", "kernels=avx512", "host=vm"} {
		if !slices.Contains(builds, want) {
			t.Errorf("train action's build %v lacks %s", builds, want)
		}
	}
}

// TestBuildLargeOutputByDigest: an output above the copy limit (no Path)
// is described by its digest and not copied; a copied one is a part of the
// root and a result of the workflow's run.
func TestBuildLargeOutputByDigest(t *testing.T) {
	in := testInput(t)
	dir := t.TempDir()
	small := fileOf(t, dir, "t.tex", "paper/tables/t.tex", "91.7")
	big := fileOf(t, dir, "main.pdf", "", "%PDF-large")
	big.Source = ""
	in.Outputs = []*File{small, big}
	c, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	g := entities(c)
	bigID := DigestID(big.SHA256)
	if g[bigID] == nil || g[bigID]["sha256"] != big.SHA256 || g[bigID]["contentSize"] != "10" {
		t.Errorf("the large output's entity %s: %v", bigID, g[bigID])
	}
	for _, f := range c.Files {
		if f == big {
			t.Errorf("the large output is copied")
		}
	}
	if !slices.Contains(refIDs(g["./"]["hasPart"]), small.Path) || slices.Contains(refIDs(g["./"]["hasPart"]), bigID) {
		t.Errorf("root hasPart %v: want the copied output, not the one by digest", refIDs(g["./"]["hasPart"]))
	}
	if got := refIDs(g["#run"]["result"]); !slices.Contains(got, small.Path) || !slices.Contains(got, bigID) {
		t.Errorf("the run's result %v lacks an output", got)
	}
}

func TestBuildRefusesUnknownSeed(t *testing.T) {
	in := testInput(t)
	in.Numbers[0].Seeds[0].Key = artifacts.Key(sha256.Sum256([]byte("other")))
	if _, err := Build(in); err == nil || !strings.Contains(err.Error(), "no record") {
		t.Errorf("Build with a seed that has no record: %v", err)
	}
}

func TestWrite(t *testing.T) {
	in := testInput(t)
	c, err := Build(in)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "crate")
	st, err := Write(dir, c)
	if err != nil {
		t.Fatal(err)
	}
	if st.Files != 4 || st.MetadataBytes == 0 {
		t.Errorf("Write = %+v, want 4 files (3 copied and the metadata)", st)
	}
	var doc struct {
		Context []any    `json:"@context"`
		Graph   []Entity `json:"@graph"`
	}
	b, _ := os.ReadFile(filepath.Join(dir, MetadataFile))
	if err := json.Unmarshal(b, &doc); err != nil || len(doc.Graph) != len(c.Graph) || doc.Context[0] != ROCrateContext {
		t.Fatalf("metadata file: %v, %d entities, context %v", err, len(doc.Graph), doc.Context)
	}

	// Again with another README: the previous crate's files are replaced.
	in.README = fileOf(t, t.TempDir(), "README.md", "docs/README.md", "# y\n")
	if c, err = Build(in); err != nil {
		t.Fatal(err)
	}
	if _, err := Write(dir, c); err != nil {
		t.Fatalf("a second Write into the crate: %v", err)
	}
	for name, want := range map[string]bool{"README.md": false, "docs/README.md": true, Marker: true} {
		if _, err := os.Stat(filepath.Join(dir, name)); (err == nil) != want {
			t.Errorf("after the second Write, %s exists = %v, want %v", name, err == nil, want)
		}
	}
	// A file the crate did not write makes the folder foreign (the rule
	// of every output folder, internal/outdir): refused, left as it was.
	os.WriteFile(filepath.Join(dir, "mine.txt"), []byte("mine"), 0o644)
	if _, err := Write(dir, c); !errors.Is(err, ErrNotCrate) {
		t.Errorf("Write into a crate holding mine.txt: %v, want ErrNotCrate", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "mine.txt")); string(b) != "mine" {
		t.Error("mine.txt lost")
	}

	// A folder with other files, or a marker not ours, is refused.
	for name, marker := range map[string]string{"no marker": "", "foreign marker": "something else\n"} {
		t.Run(name, func(t *testing.T) {
			other := t.TempDir()
			os.WriteFile(filepath.Join(other, "data.csv"), []byte("1,2\n"), 0o644)
			if marker != "" {
				os.WriteFile(filepath.Join(other, Marker), []byte(marker), 0o644)
			}
			if _, err := Write(other, c); !errors.Is(err, ErrNotCrate) {
				t.Errorf("Write into a folder with %s: %v, want ErrNotCrate", name, err)
			}
			if _, err := os.Stat(filepath.Join(other, MetadataFile)); err == nil {
				t.Errorf("Write into a refused folder wrote %s", MetadataFile)
			}
		})
	}

	// A file that changed since Build described it is not copied.
	os.WriteFile(in.Workflow.Source, []byte("changed\n"), 0o644)
	if _, err := Write(filepath.Join(t.TempDir(), "c"), c); err == nil || !strings.Contains(err.Error(), "changed while the crate was written") {
		t.Errorf("Write of a changed file: %v", err)
	}
}

func TestCheckRel(t *testing.T) {
	for _, rel := range []string{"../x", "/etc/passwd", "", Marker, "a/../../b"} {
		if checkRel(rel) == nil {
			t.Errorf("checkRel(%q) = nil, want an error", rel)
		}
	}
	for _, rel := range []string{"pipeline.toml", "paper/tables/a.tex"} {
		if err := checkRel(rel); err != nil {
			t.Errorf("checkRel(%q) = %v", rel, err)
		}
	}
}
