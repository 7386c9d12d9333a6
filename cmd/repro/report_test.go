package main

import (
	"io/fs"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"repro/artifacts"
	"repro/site"
)

// TestReportAndDiff: repro report writes a site whose every number has a
// card naming its seeds, cells, code revision and verdict; after a change
// to one experiment's config and a rerun, repro diff of the committed paper
// against the store lists exactly that experiment's numbers.
func TestReportAndDiff(t *testing.T) {
	dir, cfg := mnistProject(t, paperTestConfig, map[string]string{"paper/published.toml": paperTestPublished})
	mustRepro(t, dir, "run", "-j", "2", "-q")
	out := mustRepro(t, dir, "report")
	if !strings.Contains(out, "site: paper/site/index.html") {
		t.Errorf("report: %s", out)
	}
	read := func(name string) string {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(dir, "paper", "site", name))
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	tab := read("tables/t.html")
	for _, id := range []string{"t.a.sequential", "t.a.static", "t.b.sequential", "t.compare.a-b"} {
		if !strings.Contains(tab, `href="../cards/`+id+`.html"`) {
			t.Errorf("tables/t.html does not link card %s", id)
		}
	}
	card := read("cards/t.a.sequential.html")
	for _, want := range []string{"train/a/sequential/split1234/seed0", "train/a/sequential/split1234/seed1", "computed by revision", `class="badge `, "repro verify --recompute train/a/sequential/split1234"} {
		if !strings.Contains(card, want) {
			t.Errorf("card t/a/sequential lacks %q", want)
		}
	}

	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, b)
		}
	}
	git("init", "-q")
	git("add", "paper", "pipeline.toml")
	git("commit", "-qm", "paper")
	if out := mustRepro(t, dir, "diff"); !strings.Contains(out, "0 numbers moved") {
		t.Errorf("diff right after the run:\n%s", out)
	}
	changed := strings.Replace(cfg, "lr = 3e-3", "lr = 3e-2", 1)
	if changed == cfg {
		t.Fatal("the config has no lr = 3e-3 to change")
	}
	if err := os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(changed), 0o644); err != nil {
		t.Fatal(err)
	}
	mustRepro(t, dir, "run", "-j", "2", "-q")
	out = mustRepro(t, dir, "diff", "HEAD", "store")
	var moved []string
	for _, m := range regexp.MustCompile(`(?m)^moved +(t/\S+): `).FindAllStringSubmatch(out, -1) {
		moved = append(moved, m[1])
	}
	slices.Sort(moved)
	if want := []string{"t/b/sequential", "t/compare/a-b"}; !slices.Equal(moved, want) {
		t.Errorf("diff after changing experiment b moved %v, want %v:\n%s", moved, want, out)
	}
	if !strings.Contains(out, "2 numbers moved") || !strings.Contains(out, " -> ") {
		t.Errorf("diff output:\n%s", out)
	}
}

// TestOutputFolderRule: every command that writes a folder (report --out,
// push into a remote, init --store) writes it only when it is empty or
// carries the command's own marker; a foreign folder, a store and a
// home-like folder are refused (init alone makes a store beside foreign
// files, as documented, but never over an entry with a store's name), and
// in every case every file already there is left byte for byte.
func TestOutputFolderRule(t *testing.T) {
	t.Parallel()
	folders := map[string]func(t *testing.T, cmd, dir string){
		"empty": func(t *testing.T, cmd, dir string) { os.MkdirAll(dir, 0o755) },
		"marked": func(t *testing.T, cmd, dir string) {
			switch cmd {
			case "report":
				if _, err := site.Build(dir, site.FixtureInput(0)); err != nil {
					t.Fatal(err)
				}
			case "push":
				os.MkdirAll(dir, 0o755)
				os.WriteFile(filepath.Join(dir, artifacts.RemoteMarker), []byte("repro remote format v1\n"), 0o644)
			case "init":
				if _, err := artifacts.Open(dir, artifacts.Options{}); err != nil {
					t.Fatal(err)
				}
			}
		},
		"foreign": func(t *testing.T, cmd, dir string) {
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
		},
		"store": func(t *testing.T, cmd, dir string) {
			if _, err := artifacts.Open(dir, artifacts.Options{}); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, "blobs", "ab", "not-a-blob"), []byte("x"), 0o644)
		},
		"home-like": func(t *testing.T, cmd, dir string) {
			os.MkdirAll(filepath.Join(dir, "Documents"), 0o755)
			os.WriteFile(filepath.Join(dir, ".bashrc"), []byte("alias ll=ls"), 0o644)
			os.WriteFile(filepath.Join(dir, "README"), []byte("my home"), 0o644)
			os.WriteFile(filepath.Join(dir, "Documents", "thesis.tex"), []byte(`\begin`), 0o644)
		},
	}
	// want is the outcome per command and folder: "" accepted, else a
	// text the refusal must hold.
	want := map[string]map[string]string{
		"report": {"empty": "", "marked": "", "foreign": "holds files repro did not write (notes.txt)", "store": "holds files repro did not write (README)", "home-like": "holds files repro did not write (.bashrc)"},
		"push":   {"empty": "", "marked": "", "foreign": "not a repro remote", "store": "it is a repro store", "home-like": "not a repro remote"},
		"init":   {"empty": "", "marked": "", "foreign": "", "store": "", "home-like": "the directory holds README, which a store would take for its own"},
	}
	for _, cmd := range []string{"report", "push", "init"} {
		for _, kind := range []string{"empty", "marked", "foreign", "store", "home-like"} {
			t.Run(cmd+"/"+kind, func(t *testing.T) {
				t.Parallel()
				dir := workdir(t, tinyDAG)
				if cmd == "push" {
					dir = remoteWorkdir(t, "[settings.remotes.out]\npath = \"out\"\n", tinyDAG)
				}
				out := filepath.Join(dir, "out")
				var args []string
				switch cmd {
				case "report":
					args = []string{"report", "--out", "out"}
				case "push":
					mustRepro(t, dir, "run", "-q")
					args = []string{"push", "--allow-dirty", "--remote", "out"}
				case "init":
					args = []string{"init", "--store", "out"}
				}
				folders[kind](t, cmd, out)
				before := treeContent(t, out)
				stdout, stderr, code := reproSplit(t, dir, args...)
				refusal := want[cmd][kind]
				switch {
				case refusal != "":
					if code != 1 || !strings.Contains(stderr, refusal) {
						t.Errorf("repro %s into a %s folder: exit %d, stderr %q; want exit 1 and %q", strings.Join(args, " "), kind, code, stderr, refusal)
					}
					if after := treeContent(t, out); !maps.Equal(before, after) {
						t.Errorf("a refused %s changed the folder:\nbefore %v\nafter  %v", cmd, before, after)
					}
					return
				case cmd == "report":
					// A synthetic pipeline has no table to show: the
					// folder passed, the report stops at its content.
					if code != 1 || !strings.Contains(stderr, "no table or figure is committed") {
						t.Errorf("report --out into a %s folder: exit %d, stderr %q", kind, code, stderr)
					}
				default:
					if code != 0 {
						t.Errorf("repro %s into a %s folder: exit %d, stdout %q, stderr %q", strings.Join(args, " "), kind, code, stdout, stderr)
					}
				}
				after := treeContent(t, out)
				for name, b := range before {
					if after[name] != b {
						t.Errorf("%s: %s changed or removed", cmd, name)
					}
				}
			})
		}
	}
}

// treeContent is every file under dir (slash path -> content).
func treeContent(t *testing.T, dir string) map[string]string {
	t.Helper()
	m := map[string]string{}
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(dir, path)
		m[filepath.ToSlash(rel)] = string(b)
		return nil
	})
	return m
}

// TestReportOutRefusesAFolderHoldingAFile is the "done when": report
// --out on a folder holding a file refuses with a message and leaves it.
func TestReportOutRefusesAFolderHoldingAFile(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	mustRepro(t, dir, "run", "-q")
	proj := filepath.Join(dir, "proj")
	os.MkdirAll(proj, 0o755)
	os.WriteFile(filepath.Join(proj, "notes.txt"), []byte("notes"), 0o644)
	_, stderr, code := reproSplit(t, dir, "report", "--out", "proj", "--store", "store")
	if code != 1 || !strings.Contains(stderr, "--out: ") || !strings.Contains(stderr, "nothing was written or removed") {
		t.Fatalf("report --out proj: exit %d, stderr %q", code, stderr)
	}
	if b, err := os.ReadFile(filepath.Join(proj, "notes.txt")); err != nil || string(b) != "notes" {
		t.Fatalf("notes.txt after the refusal: %q, %v", b, err)
	}
	if ents, _ := os.ReadDir(proj); len(ents) != 1 {
		t.Fatalf("proj holds %d entries after the refusal", len(ents))
	}
}
