package site

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestBrowser loads the index and a sample of pages of a built site in
// headless Chromium (Debian's chromium): each page must render (a
// screenshot is written) and log no console message; CheckLinks first
// checks that every link resolves. It builds the fixture site, and also
// samples the committed paper/site when there is one. Without chromium it
// skips, saying so, unless REPRO_BROWSER_REQUIRED=1 (CI), where it fails.
// Screenshots go to REPRO_BROWSER_SHOTS (default: a temporary directory,
// named in the log).
func TestBrowser(t *testing.T) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		if os.Getenv("REPRO_BROWSER_REQUIRED") == "1" {
			t.Fatal("REPRO_BROWSER_REQUIRED=1 but chromium is not installed (apt-get install chromium)")
		}
		t.Skip("chromium is not installed: the browser test of the report site is skipped (apt-get install chromium; REPRO_BROWSER_REQUIRED=1 makes this a failure)")
	}
	shots := os.Getenv("REPRO_BROWSER_SHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	fixture, _ := buildFixture(t)
	sites := map[string][]string{fixture: {"index.html", "tables/tab.html", "figures/sweep.html", "cards/tab.b.sequential.html", "cards/fig.sweep.ours.100.html"}}
	if committed := filepath.Join("..", "paper", "site"); fileExists(filepath.Join(committed, "index.html")) {
		sites[committed] = samplePages(t, committed)
	}
	profile := t.TempDir()
	for dir, pages := range sites {
		n, bad, err := CheckLinks(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(bad) > 0 {
			t.Errorf("%s: %d of %d links do not resolve: %s", dir, len(bad), n, strings.Join(bad, "; "))
		}
		abs, _ := filepath.Abs(dir)
		tag := "fixture"
		if dir != fixture {
			tag = "paper"
		}
		for _, p := range pages {
			shot := filepath.Join(shots, tag+"-"+strings.NewReplacer("/", "-", ".html", ".png").Replace(p))
			logs := loadPage(t, bin, profile, "file://"+filepath.ToSlash(filepath.Join(abs, p)), shot)
			for _, l := range logs {
				t.Errorf("%s/%s: console: %s", tag, p, l)
			}
			st, err := os.Stat(shot)
			if err != nil || st.Size() < 2000 {
				t.Errorf("%s/%s: no screenshot rendered (%v)", tag, p, err)
			}
		}
	}
	t.Logf("screenshots in %s", shots)
}

// samplePages is the index, every table and figure page, and every 25th
// card of a site.
func samplePages(t *testing.T, dir string) []string {
	pages := []string{"index.html"}
	for _, sub := range []string{"tables", "figures"} {
		m, _ := filepath.Glob(filepath.Join(dir, sub, "*.html"))
		for _, p := range m {
			pages = append(pages, sub+"/"+filepath.Base(p))
		}
	}
	cards, _ := filepath.Glob(filepath.Join(dir, "cards", "*.html"))
	slices.Sort(cards)
	for i := 0; i < len(cards); i += 25 {
		pages = append(pages, "cards/"+filepath.Base(cards[i]))
	}
	return pages
}

// loadPage renders url in headless Chromium into a screenshot and returns
// the console messages the page logged.
func loadPage(t *testing.T, bin, profile, url, shot string) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--user-data-dir="+profile,
		"--enable-logging=stderr", "--v=0", "--window-size=1200,1400", "--screenshot="+shot, url)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("chromium %s: %v\n%s", url, err, out)
	}
	var logs []string
	for _, l := range strings.Split(string(out), "\n") {
		if strings.Contains(l, ":CONSOLE") {
			logs = append(logs, l)
		}
	}
	return logs
}

func fileExists(path string) bool { _, err := os.Stat(path); return err == nil }
