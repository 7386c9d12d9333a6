package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"repro/experiments"
)

// cifarTestConfig is a table with a CIFAR-10 row and two CIFAR-100 rows
// (raw, and the V1 features), trained by backprop on small files written in
// the releases' binary formats, declared as releases of their own
// ([release.NAME], read from the data mirror); cifarConfig adds the rows.
const cifarTestConfig = smokeProject + `
%RELEASES%
%EXPERIMENTS%
[[table]]
name = "cifar"
label = "tab:cifar"
caption = "Small CIFAR files."
header = "Data"
[[table.column]]
id = "seq"
title = "Sequential"
[[table.column]]
id = "static"
title = "Static"
protocol = "static"
`

// cifarRows are the table's rows: experiment, data set, whether it runs
// the static protocol, label.
var cifarRows = []struct {
	name, dataset string
	static        bool
	label         string
}{
	{"c10", "cifar10", false, "CIFAR-10"},
	{"c100", "cifar100", true, "CIFAR-100"},
	{"c100f", "cifar100f", false, "CIFAR-100 + features"},
}

// cifarConfig is cifarTestConfig on mirror with its rows' experiments and
// the releases declared (%RELEASES% is left for the caller).
func cifarConfig(mirror string) string {
	var exps []experiments.TestExperiment
	var rows strings.Builder
	for _, r := range cifarRows {
		protocols, na := []string{"sequential", "static"}, ""
		if !r.static {
			protocols, na = []string{"sequential"}, "na = [\"static\"]\n"
		}
		exps = append(exps, experiments.TestExperiment{Name: r.name, Dataset: r.dataset, Protocols: protocols, Extra: []string{"bp = { hidden = [32], epochs = 1 }"}})
		fmt.Fprintf(&rows, "[[table.row]]\nexperiment = %q\nlabel = %q\n%s", r.name, r.label, na)
	}
	return strings.NewReplacer("%MIRROR%", mirror, "%EXPERIMENTS%", experiments.TestExperiments(exps...)).Replace(cifarTestConfig) + rows.String()
}

// cifarRecords returns n records of the CIFAR binary format: labelBytes
// label bytes (the class last: CIFAR-100 has the coarse label first), then
// 3072 channel-planar pixels; sample i is of class i mod classes, its pixels
// a class pattern plus noise.
func cifarRecords(rng *rand.Rand, n, classes, labelBytes int) []byte {
	var b []byte
	for i := range n {
		c := i % classes
		rec := make([]byte, labelBytes+3072)
		rec[0] = byte(c / 5) // CIFAR-100's coarse label; CIFAR-10's only one is overwritten below
		rec[labelBytes-1] = byte(c)
		for j := range 3072 {
			rec[labelBytes+j] = byte((j*(c+1)*37)%200 + rng.IntN(56))
		}
		b = append(b, rec...)
	}
	return b
}

// writeRelease writes files under mirror/sub and returns the
// [release.name] table declaring their digests.
func writeRelease(t *testing.T, mirror, sub, name string, files map[string][]byte) string {
	t.Helper()
	dir := filepath.Join(mirror, sub)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for f, b := range files {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
		sum := sha256.Sum256(b)
		lines = append(lines, fmt.Sprintf("%q = %q", f, hex.EncodeToString(sum[:])))
	}
	return fmt.Sprintf("[release.%s.sha256]\n%s\n", name, strings.Join(lines, "\n"))
}

// TestCIFAREndToEnd runs the real CLI on small CIFAR-10 and CIFAR-100
// files in a fake mirror: every stage of the CIFAR-100 path (download from
// the mirror, decode with fine labels, split, streams of ten tasks, the V1
// feature front-end, train, aggregate, render) computes a number. Then, with CIFAR-100 on no mirror
// and no network, its cells fail alone: the run exits 1, names the
// download as the reason, renders the table with the CIFAR-10 row and the
// CIFAR-100 cells as "not run" with that reason, and check flags them.
func TestCIFAREndToEnd(t *testing.T) {
	// No network for the download stage's canonical URLs, whatever the
	// machine has: every request goes to a proxy that refuses it.
	t.Setenv("HTTPS_PROXY", "http://127.0.0.1:1")
	t.Setenv("HTTP_PROXY", "http://127.0.0.1:1")
	dir, mirror := t.TempDir(), t.TempDir()
	t.Setenv("REPRO_DATA_MIRROR", mirror) // it would override data_mirror
	rng := rand.New(rand.NewPCG(1, 2))
	c10 := map[string][]byte{"batches.meta.txt": []byte("airplane\nautomobile\n"), "test_batch.bin": cifarRecords(rng, 50, 10, 1)}
	for i := range 5 {
		c10[fmt.Sprintf("data_batch_%d.bin", i+1)] = cifarRecords(rng, 20, 10, 1)
	}
	rel10 := writeRelease(t, mirror, "cifar-10-batches-bin", "cifar10", c10)
	// Ten per class: the held-out tenth keeps one of each.
	rel100 := writeRelease(t, mirror, "cifar-100-binary", "cifar100", map[string][]byte{
		"train.bin": cifarRecords(rng, 1000, 100, 2), "test.bin": cifarRecords(rng, 200, 100, 2)})
	tmpl := cifarConfig(mirror)
	cfg := strings.Replace(tmpl, "%RELEASES%", rel10+rel100, 1)
	if err := os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}

	out := mustRepro(t, dir, "run", "-j", "2", "-q")
	if !strings.Contains(out, "wrote paper/tables/cifar.tex") {
		t.Fatalf("run:\n%s", out)
	}
	tex, err := os.ReadFile(filepath.Join(dir, "paper/tables/cifar.tex"))
	if err != nil {
		t.Fatal(err)
	}
	// Two seeds each: mean and s.d., no n marker.
	for _, want := range []string{`CIFAR-10 & \reprocard{cifar.c10.seq}{$`, `CIFAR-100 & \reprocard{cifar.c100.seq}{$`, `CIFAR-100 + features & \reprocard{cifar.c100f.seq}{$`, `\pm`, "cifar/c100/seq, cifar/c100/static"} {
		if !strings.Contains(string(tex), want) {
			t.Errorf("cifar.tex lacks %q:\n%s", want, tex)
		}
	}
	if strings.Contains(string(tex), "not run") || strings.Contains(string(tex), "n{=}") {
		t.Errorf("a cell did not compute:\n%s", tex)
	}
	why := mustRepro(t, dir, "why", "cifar/c100/static")
	for _, want := range []string{"train/c100/static/split1234/seed1", "split/cifar100-1234", "download/cifar100"} {
		if !strings.Contains(why, want) {
			t.Errorf("why lacks %q:\n%s", want, why)
		}
	}

	// CIFAR-100 on no mirror: the mirror keeps only CIFAR-10, and the
	// config declares CIFAR-100 as the published release.
	if err := os.RemoveAll(filepath.Join(mirror, "cifar-100-binary")); err != nil {
		t.Fatal(err)
	}
	cfg = strings.Replace(cfg, rel100, "", 1)
	if err := os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	// A release absent from the mirror, with no network, is no failure:
	// the run says so once, with the cells it blocks, and exits 0.
	out, err = repro(t, dir, "run", "-j", "2", "-q")
	if err != nil {
		t.Fatalf("run without CIFAR-100: err %v\n%s", err, out)
	}
	const reason = "download cifar100: cifar-100-binary.tar.gz: not on the data mirror, and no network"
	for _, want := range []string{"not computed here: download/cifar100 (" + reason + ") blocks ", `the tables show them as "not run: blocked by download/cifar100"`, "wrote paper/tables/cifar.tex"} {
		if !strings.Contains(out, want) {
			t.Errorf("run output lacks %q:\n%s", want, out)
		}
	}
	if n := strings.Count(out, reason); n != 1 {
		t.Errorf("run output gives the reason %d times, want once:\n%s", n, out)
	}
	// One count: the run's blocked cells are plan's and status's, and
	// what the absent release blocks; every cell is counted once.
	runRe := regexp.MustCompile(`ran (\d+) cells?, (\d+) cached.*, (\d+) failed, (\d+) blocked in`)
	planRe := regexp.MustCompile(`(\d+) to run, (\d+) blocked, (\d+) cached.*\(profile \S+, (\d+) cells\)`)
	planOut := mustRepro(t, dir, "plan", "--estimate")
	rm, pm := runRe.FindStringSubmatch(out), planRe.FindStringSubmatch(planOut)
	if rm == nil || pm == nil {
		t.Fatalf("run or plan summary not found:\n%s", out)
	}
	if rm[3] != pm[1] || rm[4] != pm[2] || !strings.Contains(out, "blocks "+pm[2]+" cells") {
		t.Errorf("run: %s failed, %s blocked; plan: %s to run, %s blocked; run output:\n%s", rm[3], rm[4], pm[1], pm[2], out)
	}
	if want := "estimate: " + pm[1] + " cell"; !strings.Contains(planOut, want) && !(pm[1] == "0" && strings.Contains(planOut, "estimate: nothing to run")) {
		t.Errorf("plan --estimate counts other cells than plan's %s to run (want %q):\n%s", pm[1], want, planOut)
	}
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	if got, want := atoi(rm[1])+atoi(rm[2])+atoi(rm[3])+atoi(rm[4]), atoi(pm[4]); got != want {
		t.Errorf("run counts %d cells (ran + cached + failed + blocked), plan %d:\n%s", got, want, out)
	}
	tex2, err := os.ReadFile(filepath.Join(dir, "paper/tables/cifar.tex"))
	if err != nil {
		t.Fatal(err)
	}
	row10 := func(tex []byte) string {
		for _, l := range strings.Split(string(tex), "\n") {
			if strings.HasPrefix(l, "CIFAR-10 &") {
				return l
			}
		}
		return ""
	}
	if row10(tex2) != row10(tex) || row10(tex) == "" {
		t.Errorf("the CIFAR-10 row changed: %q, was %q", row10(tex2), row10(tex))
	}
	// The table names the failed cell, not its error: the status enters
	// the aggregate's key, which an error's wording must not move.
	const blocked = "blocked by download/cifar100"
	for _, want := range []string{
		`CIFAR-100 & {\scriptsize not run$^{a}$} & {\scriptsize not run$^{a}$} \\`,
		`CIFAR-100 + features & {\scriptsize not run$^{a}$} & --- \\`,
		`{\scriptsize Not run: $^{a}$\,` + blocked + `.\par}`,
		"cifar/c100/seq (not run: " + blocked + ")",
	} {
		if !strings.Contains(string(tex2), want) {
			t.Errorf("cifar.tex lacks %q:\n%s", want, tex2)
		}
	}
	if strings.Contains(string(tex2), reason) {
		t.Errorf("the table quotes the download's error:\n%s", tex2)
	}
	if strings.Contains(string(tex2), mirror) {
		t.Errorf("the table names the machine's mirror path:\n%s", tex2)
	}
	// The committed table is what a run here renders: check passes.
	if out, err := repro(t, dir, "check"); err != nil || !strings.Contains(out, "paper/ is current") {
		t.Errorf("check after the failed download: %v\n%s", err, out)
	}
	// Where CIFAR-100 can be obtained (here: its declared release, whose
	// cells the first run stored), the same table is stale, and check
	// names the CIFAR-100 numbers only.
	if err := os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(strings.Replace(tmpl, "%RELEASES%", rel10+rel100, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err = repro(t, dir, "check")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(out, "cifar/c100/seq (row 2, column 1") || strings.Contains(out, "cifar/c10/seq") {
		t.Errorf("check with CIFAR-100 computed: %v\n%s", err, out)
	}
}
