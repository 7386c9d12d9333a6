package site

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/internal/outdir"
	"repro/judge"
	"repro/numbers"
	"repro/verdict"
)

func buildFixture(t *testing.T) (string, Stats) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "site")
	st, err := Build(dir, FixtureInput(0))
	if err != nil {
		t.Fatal(err)
	}
	return dir, st
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestBuildLinksEveryNumber(t *testing.T) {
	t.Parallel()
	dir, st := buildFixture(t)
	n, bad, err := CheckLinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(bad) > 0 || n == 0 {
		t.Fatalf("CheckLinks: %d links, broken: %v", n, bad)
	}
	in := FixtureInput(0)
	// Every table number, comparison and figure point has a card, and its
	// page links to it.
	tab := read(t, filepath.Join(dir, "tables", "tab.html"))
	fig := read(t, filepath.Join(dir, "figures", "sweep.html"))
	var ids []string
	for _, x := range in.Tables[0].Numbers {
		ids = append(ids, x.ID)
	}
	ids = append(ids, in.Tables[0].Comparisons[0].ID)
	for _, id := range ids {
		if !strings.Contains(tab, `href="../cards/`+numbers.CardName(id)+`.html"`) {
			t.Errorf("tables/tab.html does not link %s", id)
		}
	}
	for _, p := range append(in.Figures[0].Points, in.Figures[0].Lines...) {
		ids = append(ids, p.ID)
		// Twice: the plotted point and its row in the list.
		if c := strings.Count(fig, `href="../cards/`+numbers.CardName(p.ID)+`.html"`); c != 2 {
			t.Errorf("figures/sweep.html links %s %d times, want 2 (plot and list)", p.ID, c)
		}
	}
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(dir, "cards", numbers.CardName(id)+".html")); err != nil {
			t.Errorf("no card for %s: %v", id, err)
		}
	}
	if st.Cards != len(ids) {
		t.Errorf("Build wrote %d cards, want %d", st.Cards, len(ids))
	}
}

func TestCardContents(t *testing.T) {
	t.Parallel()
	dir, _ := buildFixture(t)
	card := read(t, filepath.Join(dir, "cards", "tab.b.sequential.html"))
	for _, want := range []string{
		"85.0 ± 0.4",                         // ours, at the table's decimals
		"70.0 ± 0.3",                         // the paper's
		`class="badge differ">differs`,       // the verdict
		"Welch p",                            // its statistics
		"train/b/sequential/split1234/seed2", // a seed's cell
		"feedc0ffee00",                       // the code revision
		"- train.local.eta = 0.02",           // configuration against the default
		"+ train.local.eta = 0.1",
		"split/mnist/1234 split sha256:", // data digests
		"paper.tex line 100",             // the paper's line
		"repro verify --recompute train/b/sequential/split1234    # recompute its 3 seeds, compare each result with its record", // the command
		`<svg class="strip"`, // the strip plot
		`class="pub"`,        // with the paper's mean on it
	} {
		if !strings.Contains(card, want) {
			t.Errorf("card tab/b/sequential lacks %q", want)
		}
	}
	// A cell's other number is judged on the cell's card.
	a := read(t, filepath.Join(dir, "cards", "tab.a.sequential.html"))
	if !strings.Contains(a, "paper, forgetting") {
		t.Errorf("card tab/a/sequential does not show the verdict on its forgetting")
	}
	if !strings.Contains(a, "the default system itself") {
		t.Errorf("card tab/a/sequential: the default system's own seeds show a configuration difference")
	}
	// The index lists the number that differs, linked to its card.
	idx := read(t, filepath.Join(dir, "index.html"))
	if !strings.Contains(idx, `<a href="cards/tab.b.sequential.html">tab/b/sequential</a>`) {
		t.Errorf("index.html does not list tab/b/sequential among the numbers that differ")
	}
	if strings.Contains(idx, `<a href="cards/tab.a.sequential.html">`) {
		t.Errorf("index.html lists tab/a/sequential, which agrees, among the numbers that differ")
	}
}

// A rebuild replaces the site: a card of a number that is gone goes too.
func TestBuildReplaces(t *testing.T) {
	t.Parallel()
	dir, _ := buildFixture(t)
	in := FixtureInput(0)
	in.Figures = nil
	if _, err := Build(dir, in); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "cards", "fig.sweep.ours.100.html")); !os.IsNotExist(err) {
		t.Errorf("the card of a figure no longer built is still there (%v)", err)
	}
	if _, bad, _ := CheckLinks(dir); len(bad) > 0 {
		t.Errorf("broken links after a rebuild: %v", bad)
	}
	left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".site.new-*"))
	if len(left) > 0 {
		t.Errorf("temporary directories left: %v", left)
	}
}

func TestCheckLinksFindsBroken(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "a.html"), []byte(`<p id="x"></p><a href="b.html">b</a> <a href="#x">x</a> <a href="#y">y</a> <a href="https://example.org/">out</a> <img src="c.png">`), 0o644)
	n, bad, err := CheckLinks(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"a.html: #y: no element with that id", "a.html: b.html: no such file", "a.html: c.png: no such file", "a.html: https://example.org/ leaves the site"}
	if n != 5 || strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Errorf("CheckLinks = %d, %q; want 5, %q", n, bad, want)
	}
}

func TestPlainLabel(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{`\textbf{full system}: isolated replay $+$ always-on rotation`, "full system: isolated replay + always-on rotation"},
		{`baseline ($\eta{=}0.1$)`, "baseline (η=0.1)"},
		{`$91.7\pm0.4$`, "91.7 ± 0.4"},
		{`{\scriptsize not run}`, "not run"},
		{`A--B, 5\%`, "A–B, 5%"},
	} {
		if got := plainLabel(c.in); got != c.want {
			t.Errorf("plainLabel(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

// TestIndexDisputed: the front page shows the report's disputed rows, each
// linked to its number's card when it has one, with the three sides, the
// verdicts and the notes; a page without them has no such section.
func TestIndexDisputed(t *testing.T) {
	t.Parallel()
	in := FixtureInput(0)
	mean, sd := 90.1, 0.3
	j := verdict.Welch(verdict.Ours(88, 1, 12), verdict.Printed(mean, &sd, 3, verdict.HalfUnit(1, 0)), verdict.Points)
	ours := judge.DisputedSide{N: 12, Mean: ptr(88.0), SD: ptr(1.0), Median: ptr(88.2), Max: ptr(89.5), FailedKnown: true,
		Seeds: []int64{0, 1}, Values: []float64{87.1, 89.5}}
	authors := judge.DisputedSide{N: 6, Mean: ptr(40.0), SD: ptr(35.0), Median: ptr(12.0), Max: ptr(85.0), Failed: 4, FailedKnown: true,
		Seeds: []int64{0}, Values: []float64{9.9}}
	in.Report.Disputed = []judge.DisputedResult{
		{ID: "tab/a/sequential", Label: "system a <sequential>", Reference: "cfg_a", RefScript: "run_seq", Authors: authors, Ours: ours,
			Paper: judge.DisputedSide{N: 3, Mean: &mean, SD: &sd},
			Pairs: []judge.DisputedPair{{Name: "authors - paper"}, {Name: "ours - paper", Mean: &j, Outcome: verdict.Differs}, {Name: "ours - authors"}}},
		{ID: "nowhere/x", Label: "no card", Ours: ours},
	}
	dir := t.TempDir()
	if _, err := Build(dir, in); err != nil {
		t.Fatal(err)
	}
	index := read(t, filepath.Join(dir, "index.html"))
	for _, want := range []string{`<h2 id="disputed">Disputed rows`, "system a &lt;sequential&gt;",
		`<a href="cards/` + numbers.CardName("tab/a/sequential") + `.html">tab/a/sequential</a>`,
		"90.1 ± 0.3, n=3", "40.0 ± 35.0, n=6, med 12.0, 4 failed", "88.0 ± 1.0, n=12, med 88.2, 0 failed",
		`ours - paper: <span class="differ">differs</span>`, `authors - paper: <span class="notrun">not judged</span>`,
		"authors&#39; config cfg_a (run_seq.py --val, the held-out split)", "ours per seed: s0 87.1, s1 89.5",
		`<span class="meta">nowhere/x</span>`} {
		if !strings.Contains(index, want) {
			t.Errorf("index.html lacks %q", want)
		}
	}
	if _, bad, err := CheckLinks(dir); err != nil || len(bad) > 0 {
		t.Errorf("CheckLinks: %v, broken %v", err, bad)
	}
	plainDir, _ := buildFixture(t)
	if plain := read(t, filepath.Join(plainDir, "index.html")); strings.Contains(plain, `id="disputed"`) {
		t.Error("a report without disputed rows has the section")
	}
}

func ptr(x float64) *float64 { return &x }

// Build writes only a new or empty folder, its own site, or a site older
// than the marker; a folder holding anything else is refused before
// anything is written and left exactly as it was.
func TestBuildRefusesForeign(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		files  map[string]string
		refuse bool
	}{
		{"empty", map[string]string{}, false},
		{"legacy site", map[string]string{"index.html": "old", "cards/x.html": "old", "style.css": "old"}, false},
		{"foreign", map[string]string{"notes.txt": "mine"}, true},
		{"store", map[string]string{"README": "This directory is a repro artifact store", "blobs/ab/ab01.zst": "z", "cells/ab/ab01.json": "{}"}, true},
		{"home-like", map[string]string{".bashrc": "alias ll=ls", "Documents/thesis.tex": "\\begin"}, true},
		{"site with a note added", map[string]string{"index.html": "old", "notes.txt": "mine"}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := filepath.Join(t.TempDir(), "out")
			for name, content := range tc.files {
				p := filepath.Join(dir, filepath.FromSlash(name))
				os.MkdirAll(filepath.Dir(p), 0o755)
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			os.MkdirAll(dir, 0o755)
			_, err := Build(dir, FixtureInput(0))
			if !tc.refuse {
				if err != nil {
					t.Fatalf("Build = %v", err)
				}
				if _, err := Owner.Owned(dir); err != nil {
					t.Errorf("the written site is not the site's own: %v", err)
				}
				if _, err := os.Stat(filepath.Join(dir, "cards", "x.html")); !os.IsNotExist(err) {
					t.Errorf("a legacy site's stale card is still there (%v)", err)
				}
				return
			}
			if !errors.Is(err, outdir.ErrForeign) {
				t.Fatalf("Build = %v, want outdir.ErrForeign", err)
			}
			for name, content := range tc.files {
				if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(name))); err != nil || string(b) != content {
					t.Errorf("%s after a refused Build: %q, %v", name, b, err)
				}
			}
			if _, err := os.Stat(filepath.Join(dir, "index.html")); tc.files["index.html"] == "" && !os.IsNotExist(err) {
				t.Errorf("a refused Build wrote index.html")
			}
			left, _ := filepath.Glob(filepath.Join(filepath.Dir(dir), ".out.new-*"))
			if len(left) > 0 {
				t.Errorf("temporary folders left: %v", left)
			}
		})
	}
}

// A rebuild of a marked site keeps nothing and removes nothing else: the
// marker lists every file, and a second Build accepts the first's folder.
func TestBuildTwiceOverItsOwnSite(t *testing.T) {
	t.Parallel()
	dir, _ := buildFixture(t)
	if _, err := Build(dir, FixtureInput(1)); err != nil {
		t.Fatalf("second Build over the first's site: %v", err)
	}
	os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644)
	if _, err := Build(dir, FixtureInput(0)); !errors.Is(err, outdir.ErrForeign) {
		t.Fatalf("Build over a site holding notes.txt = %v, want outdir.ErrForeign", err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "notes.txt")); string(b) != "mine" {
		t.Fatal("notes.txt lost")
	}
}

func TestCardNotRun(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, status string
		want         []string
	}{
		{"blocked by a download", "blocked by download/cifar100", []string{"<code>download/cifar100</code>", "the cifar100 release was not on the data mirror", "no seed has a record."}},
		{"other cause", "no data", []string{"not computed (not run: no data), so no seed has a record."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			in := FixtureInput(0)
			for i := range in.Tables[0].Numbers {
				if n := &in.Tables[0].Numbers[i]; n.ID == "tab/b/static" {
					n.Status = numbers.NotRun(c.status)
				}
			}
			dir := filepath.Join(t.TempDir(), "site")
			if _, err := Build(dir, in); err != nil {
				t.Fatal(err)
			}
			card := read(t, filepath.Join(dir, "cards", "tab.b.static.html"))
			for _, w := range c.want {
				if !strings.Contains(card, w) {
					t.Errorf("card tab/b/static lacks %q", w)
				}
			}
			for _, bad := range []string{"repro pull", "(ours )"} {
				if strings.Contains(card, bad) {
					t.Errorf("card tab/b/static says %q", bad)
				}
			}
		})
	}
}

func TestTablePageCaptionAndHeaders(t *testing.T) {
	t.Parallel()
	in := FixtureInput(0)
	in.TableDecls = map[string]TableDecl{"tab": {Caption: `Anchor at $\lambda{=}3{\cdot}10^{-4}$, see Eq.~\ref{eq:mask}.`, Titles: []string{"Sequential", `i.i.d.\ (static)`}}}
	dir := filepath.Join(t.TempDir(), "site")
	if _, err := Build(dir, in); err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(dir, "tables", "tab.html"))
	for _, want := range []string{`<p class="caption">Anchor at λ=3·10<sup>-4</sup>, see Eq. “mask”.</p>`, "<th>Sequential</th>", "<th>i.i.d. (static)</th>", `<p class="legend">Each value: mean ± s.d.`} {
		if !strings.Contains(page, want) {
			t.Errorf("tables/tab.html lacks %q", want)
		}
	}
	for _, bad := range []string{"eq:mask", `\ref`, "310-4"} {
		if strings.Contains(page, bad) {
			t.Errorf("tables/tab.html shows %q", bad)
		}
	}
}

func TestFigurePageReadable(t *testing.T) {
	t.Parallel()
	in := FixtureInput(0)
	in.FigureDecls = map[string]FigureDecl{"sweep": {Caption: `Accuracy against $K$.`,
		Panels: []PanelDecl{{Title: "split-MNIST", XLabel: "replay buffer $K$", YLabel: "accuracy (%)", XLog: true}},
		Series: map[string]string{"ours": "full system"}}}
	dir := filepath.Join(t.TempDir(), "site")
	if _, err := Build(dir, in); err != nil {
		t.Fatal(err)
	}
	page := read(t, filepath.Join(dir, "figures", "sweep.html"))
	for _, want := range []string{`class="ptitle">split-MNIST</text>`, `class="alabel">replay buffer K (log scale)</text>`, `class="alabel">accuracy (%)</text>`,
		`<figcaption class="legend">`, "full system</span>", `<p class="caption">Accuracy against K.</p>`} {
		if !strings.Contains(page, want) {
			t.Errorf("figures/sweep.html lacks %q", want)
		}
	}
	if strings.Contains(page, "panel 1") {
		t.Errorf("figures/sweep.html titles a panel by its number")
	}
	seen := map[string]int{}
	for i := range 40 {
		k := seriesColour(i) + " " + markers[i%len(markers)]
		if j, dup := seen[k]; dup {
			t.Fatalf("series %d and %d share colour and marker %s", j, i, k)
		}
		seen[k] = i
	}
}

func TestNiceTicks(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		lo, hi float64
		want   string
	}{
		{1.49, 343, "[100 200 300]"},
		{-1013, 17898, "[0 5000 10000 15000]"},
		{88.2, 92.7, "[89 90 91 92]"},
	} {
		if got := fmt.Sprint(niceTicks(c.lo, c.hi, 5)); got != c.want {
			t.Errorf("niceTicks(%v, %v) = %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
	if got := fmt.Sprint(logTicks(1.49, 343)); got != "[2 5 10 20 50 100 200]" {
		t.Errorf("logTicks(1.49, 343) = %s", got)
	}
}
