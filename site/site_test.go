package site

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"repro/stages"
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
		if !strings.Contains(tab, `href="../cards/`+stages.CardName(id)+`.html"`) {
			t.Errorf("tables/tab.html does not link %s", id)
		}
	}
	for _, p := range append(in.Figures[0].Points, in.Figures[0].Lines...) {
		ids = append(ids, p.ID)
		// Twice: the plotted point and its row in the list.
		if c := strings.Count(fig, `href="../cards/`+stages.CardName(p.ID)+`.html"`); c != 2 {
			t.Errorf("figures/sweep.html links %s %d times, want 2 (plot and list)", p.ID, c)
		}
	}
	for _, id := range ids {
		if _, err := os.Stat(filepath.Join(dir, "cards", stages.CardName(id)+".html")); err != nil {
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
		"split/mnist/1234 split sha256:",      // data digests
		"paper.tex line 100",                  // the paper's line
		"repro run --only train/b/sequential", // the command
		`<svg class="strip"`,                  // the strip plot
		`class="pub"`,                         // with the paper's mean on it
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
		{`$91.7\pm0.4$`, "91.7±0.4"},
		{`{\scriptsize not run}`, "not run"},
		{`A--B, 5\%`, "A–B, 5%"},
	} {
		if got := plainLabel(c.in); got != c.want {
			t.Errorf("plainLabel(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
