package presets_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"math"
	"os"
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"

	"repro/core"
	"repro/experiments"
	"repro/presets"
	"repro/stages"
)

var update = flag.Bool("update", false, "rewrite testdata/resolved.golden from presets.toml")

const golden = "testdata/resolved.golden"

// TestResolvedGolden pins every preset's resolved config. The golden was
// first generated from the Go closures the presets replaced
// (core.LocalPreset, backprop.Preset), so presets.toml is proven to
// resolve to exactly their configs; the bases added as entries of their
// own were appended with -update.
func TestResolvedGolden(t *testing.T) {
	set, err := experiments.LoadPresets()
	if err != nil {
		t.Fatal(err)
	}
	var got bytes.Buffer
	for _, l := range stages.PresetLearners() {
		for _, name := range set.Names(l.Table) {
			cfg, err := set.Resolve(l.Table, name)
			if err != nil {
				t.Fatalf("%s %s: %v", l.Table, name, err)
			}
			b, err := json.Marshal(cfg)
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&got, "%s %s %s\n", l.Table, name, b)
		}
	}
	if *update {
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	gotLines, wantLines := lines(got.String()), lines(string(want))
	if len(wantLines) < 130 {
		t.Fatalf("%s has %d presets, want the ~140 of the paper", golden, len(wantLines))
	}
	for k, w := range wantLines {
		if g, ok := gotLines[k]; !ok {
			t.Errorf("%s: in %s, not in presets.toml", k, golden)
		} else if g != w {
			t.Errorf("%s resolves to\n\t%s\nwant\n\t%s", k, g, w)
		}
	}
	for k := range gotLines {
		if _, ok := wantLines[k]; !ok {
			t.Errorf("%s: in presets.toml, not in %s (go test -update)", k, golden)
		}
	}
}

// lines maps "table name" to the resolved JSON.
func lines(s string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		table, rest, _ := strings.Cut(sc.Text(), " ")
		name, js, _ := strings.Cut(rest, " ")
		out[table+" "+name] = js
	}
	return out
}

// TestResolveIsFresh: a resolved config is the caller's to change.
func TestResolveIsFresh(t *testing.T) {
	set, err := experiments.LoadPresets()
	if err != nil {
		t.Fatal(err)
	}
	a, _ := set.Resolve("local", "g20_d3_kad")
	a.(*core.LocalConfig).Hidden[0] = 1
	b, _ := set.Resolve("local", "g20_d3_kad")
	if h := b.(*core.LocalConfig).Hidden; h[0] != 512 {
		t.Errorf("second resolve sees the first's edit: hidden %v", h)
	}
	if _, err := set.Resolve("local", "no_such"); !errors.Is(err, presets.ErrUnknown) {
		t.Errorf("unknown name: %v, want ErrUnknown", err)
	}
	if l, err := set.Layers("local", "v6_sweep"); err != nil || strings.Join(l, ",") != "ladder,v5_base,v6_base,v6_sweep" {
		t.Errorf("Layers(v6_sweep) = %v, %v", l, err)
	}
}

// testCfg is a small learner config for parser tests.
type testCfg struct {
	N int       `toml:"n"`
	X float64   `toml:"x"`
	S string    `toml:"s"`
	L []int     `toml:"l"`
	B bool      `toml:"b"`
	F []float64 `toml:"f"`
}

var testLearner = presets.Learner{
	Table: "t",
	New:   func() any { return &testCfg{N: 1, X: 0.5, S: "d", L: []int{4, 2}} },
	Check: func(cfg any) (string, error) {
		c := cfg.(*testCfg)
		switch {
		case c.N < 0:
			return "n", fmt.Errorf("n = %d, want >= 0", c.N)
		case math.IsNaN(c.X) || math.IsInf(c.X, 0):
			return "x", fmt.Errorf("x = %v, want finite", c.X)
		}
		return "", nil
	},
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, src, want string
	}{
		{"unknown field", "[t]\na = { n = 2 }\nb = { nn = 3 }\n", "p.toml:3: t.b.nn: unknown key"},
		{"unknown field, table", "[t.a]\nn = 2\nzz = 1\n", "p.toml:3: t.a.zz: unknown key"},
		{"unknown learner", "[t]\na = {}\n[u]\nb = {}\n", "p.toml:3: u: unknown learner table (want t)"},
		{"missing base", "[t]\na = { base = \"nope\" }\n", "p.toml:2: t.a.base: no t preset \"nope\" to build on"},
		{"loop", "[t]\na = { base = \"b\" }\nb = { base = \"a\" }\n", "bases form a loop: "},
		{"bad type", "[t]\na = {}\nb = { n = \"two\" }\n", "p.toml:3: t.b.n"},
		{"check at the layer setting it", "[t.a]\nn = -1\n[t.b]\nbase = \"a\"\ns = \"x\"\n", "p.toml:2: t.a.n: n = -1, want >= 0"},
		{"check at the overriding layer", "[t]\na = { n = 5 }\nb = { base = \"a\", n = -2 }\n", "p.toml:3: t.b.n: n = -2"},
		{"syntax", "[t]\na = {\n", "p.toml:3"},
		{"dotted name", "[t]\na = {}\n\"x.y\" = { n = -3 }\n", "p.toml:3: t.x.y.n: n = -3"},
		{"engine table", "[settings]\nstore = \"x\"\n", "p.toml:1: settings: not a learner table"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := presets.Parse("p.toml", tc.src, testLearner)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%q) = %v, want an error containing %q", tc.src, err, tc.want)
			}
		})
	}
}

func TestLayering(t *testing.T) {
	t.Parallel()
	src := "[t]\nbase0 = { n = 7, l = [1] }\nmid = { base = \"base0\", s = \"m\" }\ntop = { base = \"mid\", n = 9 }\n"
	set, err := presets.Parse("p.toml", src, testLearner)
	if err != nil {
		t.Fatal(err)
	}
	got, err := set.Resolve("t", "top")
	want := &testCfg{N: 9, X: 0.5, S: "m", L: []int{1}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("Resolve(top) = %+v, %v; want %+v", got, err, want)
	}
	if names := set.Names("t"); len(names) != 3 {
		t.Errorf("Names = %v, want 3", names)
	}
}

// TestUncheckedLearner: a learner registered without New is accepted as it
// stands (core's tests know only the local learner's type).
func TestUncheckedLearner(t *testing.T) {
	t.Parallel()
	src := "[t]\na = {}\n[u]\nb = { whatever = 1 }\n"
	set, err := presets.Parse("p.toml", src, testLearner, presets.Learner{Table: "u"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := set.Resolve("u", "b"); !errors.Is(err, presets.ErrUnknown) {
		t.Errorf("Resolve of an unchecked learner: %v, want ErrUnknown", err)
	}
}

// FuzzParsePresets: Parse never panics, and a file it accepts resolves the
// same as the file of its resolved configs written out flat (no bases).
func FuzzParsePresets(f *testing.F) {
	f.Add("[t]\na = { n = 2 }\nb = { base = \"a\", x = 1.5, l = [1, 2] }\n")
	f.Add("[t.a]\ns = \"q\"\nb = true\n[t]\nc = { base = \"a\", f = [0.1] }\n")
	f.Add("[t]\na = { base = \"a\" }\n")
	f.Add("[t]\n\"x.y\" = { n = 3 }\n")
	f.Add(builtinLike)
	f.Fuzz(func(t *testing.T, src string) {
		set, err := presets.Parse("f.toml", src, testLearner)
		if err != nil {
			return
		}
		flat := map[string]map[string]*testCfg{"t": {}}
		for _, name := range set.Names("t") {
			cfg, err := set.Resolve("t", name)
			if err != nil {
				t.Fatalf("accepted file, Resolve(%q): %v", name, err)
			}
			flat["t"][name] = cfg.(*testCfg)
		}
		var buf bytes.Buffer
		if err := toml.NewEncoder(&buf).Encode(flat); err != nil {
			t.Skip("not encodable:", err)
		}
		again, err := presets.Parse("flat.toml", buf.String(), testLearner)
		if err != nil {
			t.Fatalf("flat file %q: %v", buf.String(), err)
		}
		for name, want := range flat["t"] {
			got, err := again.Resolve("t", name)
			if err != nil || !reflect.DeepEqual(normal(got.(*testCfg)), normal(want)) {
				t.Fatalf("flat %q: %+v, %v; want %+v", name, got, err, want)
			}
		}
	})
}

// normal makes empty and nil slices equal (TOML writes both as absent or
// empty).
func normal(c *testCfg) testCfg {
	n := *c
	if len(n.L) == 0 {
		n.L = nil
	}
	if len(n.F) == 0 {
		n.F = nil
	}
	return n
}

const builtinLike = `[t]
a = {}
b = { base = "a", n = 3 }
[t.c]
base = "b"
l = [1, 2, 3]
`
