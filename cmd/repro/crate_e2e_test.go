package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"repro/crate"
	"repro/experiments"
	"repro/numbers"
)

// crateSample is how many numbers TestCrateFreshClone draws: each is
// answered through the crate's RDF and compared with repro why.
const crateSample = 20

// cratePython is the Python with rdflib and PyLD the crate's test runs
// (Debian's python3-rdflib and python3-pyld): REPRO_CRATE_PYTHON, else
// /usr/bin/python3. Without them the test skips, saying so, unless
// REPRO_RDFLIB_REQUIRED=1 (.ci/run sets it), when it fails.
func cratePython(t *testing.T) string {
	t.Helper()
	py := cmpOrEnv("REPRO_CRATE_PYTHON", "/usr/bin/python3")
	out, err := exec.Command(py, "-c", "import rdflib, pyld").CombinedOutput()
	if err == nil {
		return py
	}
	msg := fmt.Sprintf("%s cannot import rdflib and pyld (apt-get install -y python3-rdflib python3-pyld): %v %s", py, err, strings.TrimSpace(string(out)))
	if os.Getenv("REPRO_RDFLIB_REQUIRED") == "1" {
		t.Fatal(msg + "; REPRO_RDFLIB_REQUIRED=1")
	}
	t.Skip(msg)
	return ""
}

func cmpOrEnv(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// ledgerClone is what a fresh clone has that repro crate reads: the
// committed pipeline.toml, README.md, CITATION.cff and paper/, with the
// ledger paper/cells linked (read only) rather than copied.
func ledgerClone(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, f := range []string{"pipeline.toml", "README.md", "CITATION.cff"} {
		b, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	paper := filepath.Join(repoRoot, "paper")
	err := filepath.WalkDir(paper, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		r, _ := filepath.Rel(repoRoot, path)
		switch {
		case r == filepath.Join("paper", "cells"):
			abs, err := filepath.Abs(path)
			if err != nil {
				return err
			}
			if err := os.Symlink(abs, filepath.Join(dir, r)); err != nil {
				return err
			}
			return filepath.SkipDir
		case d.IsDir():
			return os.MkdirAll(filepath.Join(dir, r), 0o755)
		case strings.HasSuffix(r, ".pdf") && filepath.Dir(r) == "paper", strings.HasPrefix(d.Name(), "main.") && d.Name() != "main.tex":
			return nil // a compiled paper is not committed
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dir, r), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// whyAnswer is what repro why says of a number, in the form the crate's
// queries answer it.
type whyAnswer struct {
	seeds, data []string // "KEY seed=S vN code REV", "CELL SHA"
	config      []string // the first seed's "name = value"
	firstKey    string
}

var (
	whySeedRe = regexp.MustCompile(`^\s+seed (-?\d+): (\S+) = \S+, result sha256:([0-9a-f]{64})$`)
	whyKeyRe  = regexp.MustCompile(`^\s+key ([0-9a-f]{64}), stage \S+ v(\d+), code ([^\s,]+)`)
	whyDataRe = regexp.MustCompile(`^\s+data (\S+) \S+ sha256:([0-9a-f]{64})$`)
)

// parseWhyNumber reads repro why's output for a number or figure point.
func parseWhyNumber(out string) (whyAnswer, error) {
	var a whyAnswer
	seed, inConfig, configDone := "", false, false
	for _, line := range strings.Split(out, "\n") {
		if inConfig {
			if name, value, ok := strings.Cut(strings.TrimPrefix(line, "      "), " = "); ok && strings.HasPrefix(line, "      ") && !strings.HasPrefix(line, "       ") {
				a.config = append(a.config, name+" = "+value)
				continue
			}
			inConfig, configDone = false, true
		}
		if m := whySeedRe.FindStringSubmatch(line); m != nil {
			seed = m[1]
		} else if m := whyKeyRe.FindStringSubmatch(line); m != nil {
			if seed == "" {
				return a, fmt.Errorf("key line before a seed line: %q", line)
			}
			a.seeds = append(a.seeds, fmt.Sprintf("%s seed=%s v%s code %s", m[1], seed, m[2], m[3]))
			if a.firstKey == "" {
				a.firstKey = m[1]
			}
			seed = ""
		} else if m := whyDataRe.FindStringSubmatch(line); m != nil {
			a.data = append(a.data, m[1]+" "+m[2])
		} else if strings.HasSuffix(line, "configuration (all seeds alike but train.seed):") && !configDone {
			inConfig = true
		}
	}
	slices.Sort(a.seeds)
	slices.Sort(a.data)
	a.seeds, a.data = slices.Compact(a.seeds), slices.Compact(a.data)
	if len(a.seeds) == 0 {
		return a, errors.New("no seed with a record")
	}
	return a, nil
}

var (
	whyParamRe  = regexp.MustCompile(`^  (?:config  |        ) (\S+) = (.*)$`)
	whyOutputRe = regexp.MustCompile(`^\s{4,}output\s+\S+ sha256:([0-9a-f]{64}) \(`)
)

// parseWhyCell reads repro why --depth 1 KEY: the cell's configuration,
// and its inputs as the outputs of the records it read.
func parseWhyCell(out string) (params, inputs []string) {
	for _, line := range strings.Split(out, "\n") {
		if m := whyParamRe.FindStringSubmatch(line); m != nil {
			params = append(params, m[1]+" = "+m[2])
		} else if m := whyOutputRe.FindStringSubmatch(line); m != nil {
			inputs = append(inputs, m[1])
		}
	}
	slices.Sort(params)
	slices.Sort(inputs)
	return params, slices.Compact(inputs)
}

// TestCrateFreshClone writes the crate of a fresh clone (the ledger and the
// committed files, an empty store), checks the folder rules, then reads
// the crate as RDF (PyLD and rdflib, check_crate.py): RO-Crate 1.1's
// structural rules and the profiles' links must hold, and for numbers
// drawn at random the competency queries (number -> its seeds' records ->
// seeds, tool versions, commits, data digests upstream; the first seed's
// parameters and inputs; the actions that produced its result file) must
// answer what repro why prints.
func TestCrateFreshClone(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the whole ledger and runs repro why for each sampled number (-short)")
	}
	py := cratePython(t)
	dir := ledgerClone(t)
	out := filepath.Join(t.TempDir(), "crate")

	start := time.Now()
	got := mustRepro(t, dir, "crate", "--out", out)
	took := time.Since(start)
	t.Logf("repro crate in %.1f s:\n%s", took.Seconds(), got)
	if !regexp.MustCompile(`(?m)^crate \S+: \d+ files, [\d.]+ MB \(ro-crate-metadata\.json [\d.]+ MB\); \d+ entities: `).MatchString(got) {
		t.Errorf("repro crate does not state the crate's size and entities:\n%s", got)
	}
	if strings.Contains(got, "0 records") {
		t.Errorf("the crate of a fresh clone has no records:\n%s", got)
	}
	for _, f := range []string{crate.MetadataFile, crate.Marker, "pipeline.toml", "CITATION.cff", "paper/tables/ablation.tex"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Errorf("the crate lacks %s: %v", f, err)
		}
	}
	// Again into the same folder: the previous crate is replaced.
	if again := mustRepro(t, dir, "crate", "--out", out); !strings.Contains(again, "crate "+out+": ") {
		t.Errorf("a second crate into the same folder:\n%s", again)
	}
	// A folder with other files is refused, and left as it was.
	other := t.TempDir()
	os.WriteFile(filepath.Join(other, "notes.txt"), []byte("mine"), 0o644)
	if msg, err := repro(t, dir, "crate", "--out", other); err == nil || !strings.Contains(msg, "holds files repro did not write (notes.txt)") {
		t.Errorf("crate into a folder of other files: %v\n%s", err, msg)
	}
	if ents, _ := os.ReadDir(other); len(ents) != 1 {
		t.Errorf("the refused folder has %d entries, want its one file", len(ents))
	}

	// The sample: published numbers of the committed tables and figures
	// whose seeds have records, drawn with a fixed seed
	// (REPRO_CRATE_SEED to draw others).
	w := repoWorkspace(t)
	rep, _, err := committedReport(w)
	if err != nil {
		t.Fatal(err)
	}
	verdicts := map[string]string{}
	for _, r := range rep.Rows {
		verdicts[r.ID] = fmt.Sprintf("%s (published %s)", r.Verdict, r.Published)
	}
	var cands []string
	for _, tb := range w.tableNames() {
		sc, err := experiments.ReadTableSidecar(w.idsPath(tb))
		if err != nil {
			continue
		}
		for _, n := range sc.Numbers {
			if n.Status.Kind == numbers.StatusOK && verdicts[n.ID] != "" {
				cands = append(cands, n.ID)
			}
		}
	}
	for _, f := range w.figureNames() {
		sc, err := experiments.ReadFigureSidecar(w.figurePath(f, "ids.json"))
		if err != nil {
			continue
		}
		for _, p := range sc.Points {
			if p.Status.Kind == numbers.StatusOK && p.YCell != nil && verdicts[p.ID] != "" {
				cands = append(cands, p.ID)
			}
		}
	}
	seed := uint64(59)
	if s := os.Getenv("REPRO_CRATE_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("REPRO_CRATE_SEED=%q: %v", s, err)
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0))
	rng.Shuffle(len(cands), func(i, j int) { cands[i], cands[j] = cands[j], cands[i] })
	if len(cands) < crateSample {
		t.Fatalf("only %d published numbers with seeds in the committed sidecars, want %d", len(cands), crateSample)
	}
	sample := cands[:crateSample]
	t.Logf("sample (seed %d): %s", seed, strings.Join(sample, " "))

	whys := map[string]whyAnswer{}
	cells := map[string][2][]string{}
	var keys []string
	for _, id := range sample {
		a, err := parseWhyNumber(mustRepro(t, dir, "why", id))
		if err != nil {
			t.Fatalf("repro why %s: %v", id, err)
		}
		whys[id] = a
		params, inputs := parseWhyCell(mustRepro(t, dir, "why", "--depth", "1", a.firstKey))
		cells[a.firstKey] = [2][]string{params, inputs}
		keys = append(keys, a.firstKey)
	}

	qfile := filepath.Join(t.TempDir(), "questions.json")
	qb, _ := json.Marshal(map[string][]string{"numbers": sample, "cells": keys})
	os.WriteFile(qfile, qb, 0o644)
	cmd := exec.Command(py, filepath.Join("testdata", "crate", "check_crate.py"), out, filepath.Join("testdata", "crate", "ro-crate-1.1-context.jsonld"), qfile)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	ans, err := cmd.Output()
	if err != nil {
		t.Fatalf("check_crate.py: %v\n%s", err, stderr.String())
	}
	t.Logf("check_crate.py: %s", strings.TrimSpace(stderr.String()))
	var res struct {
		Problems []string
		Triples  int
		Numbers  map[string]map[string][]string
		Cells    map[string]map[string][]string
	}
	if err := json.Unmarshal(ans, &res); err != nil {
		t.Fatalf("check_crate.py output: %v\n%s", err, ans)
	}
	for _, p := range res.Problems {
		t.Errorf("crate: %s", p)
	}
	for _, id := range sample {
		want, got := whys[id], res.Numbers[id]
		for _, c := range []struct {
			what      string
			got, want []string
		}{
			{"seeds (key, seed, tool version, commit)", got["seeds"], want.seeds},
			{"data digests upstream", got["data"], want.data},
			{"verdict", got["verdict"], []string{verdicts[id]}},
		} {
			if !slices.Equal(c.got, c.want) {
				t.Errorf("number %s: %s: crate %q, repro why %q", id, c.what, c.got, c.want)
			}
		}
		if v := got["value"]; len(v) != 1 || !regexp.MustCompile(` from (render|figure)/`).MatchString(v[0]) {
			t.Errorf("number %s: value and the cell that wrote it: %q", id, v)
		}
		k := want.firstKey
		cg, cw := res.Cells[k], cells[k]
		if !slices.Equal(cg["params"], cw[0]) || !slices.Equal(cg["params"], want.config) {
			t.Errorf("number %s: parameters of %s: crate %q, repro why %q (and %q)", id, k, cg["params"], cw[0], want.config)
		}
		if !slices.Equal(cg["inputs"], cw[1]) {
			t.Errorf("number %s: inputs of %s: crate %q, repro why %q", id, k, cg["inputs"], cw[1])
		}
		if !slices.ContainsFunc(cg["producers_of_result"], func(s string) bool { return strings.HasPrefix(s, k+" repro stage ") }) {
			t.Errorf("number %s: the actions that produced %s's result: %q", id, k, cg["producers_of_result"])
		}
	}
	t.Logf("%d triples; %d numbers answered as repro why answers them", res.Triples, len(sample))
}
