package main

import (
	"bytes"
	"html"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"repro/internal/buildstamp"
	"repro/pipeline"
)

// readmeCheckMarker precedes the README transcripts of a fresh clone with
// the ledger, which TestMakePaperLeavesTreeClean runs (TestReadmeExamples
// runs those marked readmeMarker, on a clone without the ledger).
const readmeCheckMarker = "<!-- README check: fresh clone with the ledger"

// readmeTimeRe finds the README's time of make paper on a fresh clone.
var readmeTimeRe = regexp.MustCompile(`The whole ` + "`make paper`" + ` \(run, site, three\s+pdflatex passes\) takes about (\d+) s`)

// checkReadmeTime checks the README's time of make paper against the run
// and the site measured here (pdflatex not included: a factor of 4 either
// way covers it and a busier or idler machine).
func checkReadmeTime(t *testing.T, readme string, took time.Duration) {
	t.Helper()
	m := readmeTimeRe.FindStringSubmatch(readme)
	if m == nil {
		t.Errorf("README.md does not state make paper's time on a fresh clone (%s)", readmeTimeRe)
		return
	}
	said, _ := strconv.Atoi(m[1])
	if s := took.Seconds(); float64(said) > 4*s || float64(said) < s/4 {
		t.Errorf("README.md says make paper takes about %d s; run and site took %.1f s here", said, s)
	}
}

// cloneWithLedger copies what a fresh clone's make paper reads and
// writes: pipeline.toml, paper/ whole (the ledger paper/cells and the
// site included) but the files .gitignore leaves out (the PDF, LaTeX's
// logs).
func cloneWithLedger(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if err := copyFile(filepath.Join(repoRoot, "pipeline.toml"), filepath.Join(dir, "pipeline.toml")); err != nil {
		t.Fatal(err)
	}
	files, err := paperFiles(filepath.Join(repoRoot, "paper"))
	if err != nil {
		t.Fatal(err)
	}
	for _, rel := range files {
		to := filepath.Join(dir, "paper", rel)
		if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := copyFile(filepath.Join(repoRoot, "paper", rel), to); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func copyFile(from, to string) error {
	b, err := os.ReadFile(from)
	if err != nil {
		return err
	}
	return os.WriteFile(to, b, 0o644)
}

// paperFiles lists the files under root a commit would hold (relative,
// sorted): not LaTeX's outputs, the PDF or a smoke profile's folder, which
// .gitignore leaves out.
func paperFiles(root string) ([]string, error) {
	var out []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		if d.IsDir() {
			if rel == "smoke" {
				return filepath.SkipDir
			}
			return nil
		}
		if filepath.Dir(rel) == "." {
			switch filepath.Ext(rel) {
			case ".aux", ".log", ".out", ".pdf":
				return nil
			}
		}
		out = append(out, filepath.ToSlash(rel))
		return nil
	})
	slices.Sort(out)
	return out, err
}

// TestMakePaperLeavesTreeClean: what make paper runs on a fresh clone
// (repro run, then repro report), by a binary stamped with another
// revision and a dirty tree, writes every committed file of paper/ back
// byte for byte and adds none: git status stays empty, and the next make
// build is not stamped dirty. Committed outputs are a function of the
// committed inputs, never of the build that renders them.
func TestMakePaperLeavesTreeClean(t *testing.T) {
	if testing.Short() {
		t.Skip("pulls the ledger's 1,600 records into an empty store and writes the site; about 15 s")
	}
	t.Parallel()
	bin := reproStamped(t, buildstamp.Stamp{Revision: strings.Repeat("d", 40), Dirty: true, Diff: strings.Repeat("e", 64)}.LDFlags())
	dir := cloneWithLedger(t)
	if err := os.MkdirAll(filepath.Join(dir, "bin"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(bin, filepath.Join(dir, "bin", "repro")); err != nil {
		t.Fatal(err)
	}
	// As on the machine the README describes: the project's data mirror
	// (no CIFAR-100 on it) and no network.
	env := append(cleanEnv(), "REPRO_STORE="+filepath.Join(t.TempDir(), "store"), "HTTPS_PROXY=http://127.0.0.1:1", "HTTP_PROXY=http://127.0.0.1:1")
	mirror := ""
	if cfg, err := pipeline.LoadConfig(filepath.Join(repoRoot, "pipeline.toml")); err == nil {
		mirror = cfg.HostSettings(os.Getenv)["data.mirror"]
	}
	if mirror == "" {
		mirror = filepath.Join(repoRoot, "..", "shared", "data") // as the Makefile
	}
	if abs, err := filepath.Abs(mirror); err == nil {
		mirror = abs
	}
	env = append(env, "REPRO_DATA_MIRROR="+mirror)
	_, noC100 := os.Stat(filepath.Join(mirror, "cifar-100-binary"))
	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	steps, err := readmeStepsMarked(string(readme), readmeCheckMarker)
	if err != nil {
		t.Fatal(err)
	}
	if len(steps) < 4 || !strings.HasPrefix(steps[0].cmd, "bin/repro run --profile paper") {
		t.Fatalf("README.md: want the fresh clone's transcripts marked %q, starting with bin/repro run --profile paper; have %d steps", readmeCheckMarker, len(steps))
	}
	start := time.Now()
	for i, st := range steps {
		cmd := exec.Command("sh", "-c", st.cmd)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if i == 0 && err != nil && !strings.Contains(string(out), "blocked by download/cifar100") {
			t.Fatalf("%s: %v\n%s", st.cmd, err, out)
		}
		if i == 0 {
			report := exec.Command(bin, "report", "--profile", "paper")
			report.Dir, report.Env = dir, env
			if out, err := report.CombinedOutput(); err != nil {
				t.Fatalf("repro report: %v\n%s", err, out)
			}
			checkReadmeTime(t, string(readme), time.Since(start))
		}
		if noC100 == nil {
			continue // a mirror with CIFAR-100: the README's counts are not this machine's
		}
		if msg := matchTranscript(st.want, string(out)); msg != "" {
			t.Errorf("README.md, fresh clone with the ledger: $ %s\n%s\nfull output:\n%s", st.cmd, msg, out)
		}
	}
	want, err := paperFiles(filepath.Join(repoRoot, "paper"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := paperFiles(filepath.Join(dir, "paper"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range got {
		if _, ok := slices.BinarySearch(want, f); !ok {
			t.Errorf("?? paper/%s: written by make paper, not committed", f)
		}
	}
	var changed int
	for _, f := range want {
		a, err1 := os.ReadFile(filepath.Join(repoRoot, "paper", f))
		b, err2 := os.ReadFile(filepath.Join(dir, "paper", f))
		if err1 != nil || err2 != nil {
			t.Errorf(" D paper/%s: %v %v", f, err1, err2)
			continue
		}
		if !bytes.Equal(a, b) {
			if changed++; changed <= 10 {
				t.Errorf(" M paper/%s: make paper rewrote it (first difference: %s)", f, firstDiff(string(b), string(a)))
			}
		}
	}
	if changed > 10 {
		t.Errorf("%d files modified in all", changed)
	}
}

// cleanEnv is the test's environment without REPRO_ variables.
func cleanEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "REPRO_") {
			env = append(env, kv)
		}
	}
	return env
}

// TestReadmeShape: the README stays short enough to read in the first
// hour, and its cluster recipe builds a binary that names its source (a
// plain go build cannot: its records say "revision unknown" and push
// refuses them).
func TestReadmeShape(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > 400 {
		t.Errorf("README.md has %d lines, want at most 400", len(lines))
	}
	for i, l := range lines {
		if strings.Contains(l, "go build") && strings.Contains(l, "./cmd/repro") {
			t.Errorf("README.md:%d builds repro with go build (unstamped: its records cannot be pushed); use make build BIN=...: %s", i+1, l)
		}
	}
	if !strings.Contains(string(b), "make build BIN=") {
		t.Errorf("README.md: the cluster recipe does not build with make build BIN=...")
	}
}

// TestSiteTextHasNoSource: no page of the committed site shows the ASCII or
// LaTeX a string was written in (+-, x 10^, a \ref, a raw label such as
// tab:accmatrix, app:probes or eq:mask): every string goes through
// package latex.
func TestSiteTextHasNoSource(t *testing.T) {
	t.Parallel()
	tags := regexp.MustCompile(`(?s)<[^>]*>`)
	bad := regexp.MustCompile(`\+-|\d ?x 10\^|\\ref\b|\\[a-z]+\{|\b(tab|app|eq|sec):[A-Za-z]`)
	root := filepath.Join(repoRoot, "paper", "site")
	n, hits := 0, 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".html") {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		n++
		text := html.UnescapeString(tags.ReplaceAllString(string(b), " "))
		if m := bad.FindStringIndex(text); m != nil {
			if hits++; hits <= 10 {
				lo, hi := max(0, m[0]-60), min(len(text), m[1]+60)
				t.Errorf("%s shows %q: …%s…", strings.TrimPrefix(path, root+"/"), text[m[0]:m[1]], strings.Join(strings.Fields(text[lo:hi]), " "))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n < 800 {
		t.Fatalf("read %d pages of %s; want the whole site", n, root)
	}
	if hits > 10 {
		t.Errorf("%d pages in all", hits)
	}
}
