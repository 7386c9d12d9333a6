package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
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
