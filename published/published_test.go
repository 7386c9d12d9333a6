package published

import (
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const fileTestPublished = `
[[value]]
id = "t/x/sequential"
mean = 91.7
sd = 0.4
n = 3
cite = "Table t, row 1"
line = 1
`

const fileTestRestatement = `
[[restatement]]
of = "t/x/sequential"
line = 7
cite = "Section 2: 'reaches 91.7'"
mean = 91.7
sd = 0.4
`

const fileTestNotRun = `
[[not_run]]
what = "timings"
lines = [3, 4]
count = 2
status = "not run"
category = "machine-specific timing"
reason = "the authors' machine"
`

// TestParseChecks: a file with restatements and categorised
// not-run groups is accepted, and each way of getting them wrong is
// refused with an error naming the file and the entry.
func TestParseChecks(t *testing.T) {
	t.Parallel()
	ok := fileTestPublished + fileTestRestatement + fileTestNotRun
	p, err := Parse("p.toml", ok)
	if err != nil {
		t.Fatalf("Parse(valid) = %v", err)
	}
	if len(p.Restatement) != 1 || p.Restatement[0].Of != "t/x/sequential" || p.NotRun[0].Category != NotRunTiming {
		t.Errorf("Parse(valid) = %+v, want one restatement and a timing group", p)
	}
	for _, tc := range []struct {
		name, old, new, want string
	}{
		{"restatement of no value", `of = "t/x/sequential"`, `of = "t/y/sequential"`, `restatement[0] (line 7): of "t/y/sequential" names no value`},
		{"restatement without cite", `cite = "Section 2: 'reaches 91.7'"`, ``, `restatement[0] of t/x/sequential: cite and line`},
		{"restatement without line", "line = 7\n", "", `restatement[0] of t/x/sequential: cite and line`},
		{"not transcribed", `status = "not run"`, `status = "not transcribed"`, `not_run[0] "timings": what, reason`},
		{"no category", `category = "machine-specific timing"`, ``, `not_run[0] "timings": category ""`},
		{"unknown category", `category = "machine-specific timing"`, `category = "later"`, `not_run[0] "timings": category "later"`},
		{"rank without seeds_of", "sd = 0.4\n", "sd = 0.4\nrank = 2\n", `value t/x/sequential: rank, survivors and minus go with seeds_of`},
		{"rank past n", "sd = 0.4\nn = 3\n", "n = 3\nseeds_of = \"t/y\"\nrank = 7\n", `value t/x/sequential: rank 7 of n = 3`},
		{"one run with an s.d.", "n = 3\n", "n = 3\nseeds_of = \"t/y\"\nrank = 1\n", `value t/x/sequential: one run: no sd`},
		{"over without extreme", "sd = 0.4\n", "sd = 0.4\nover = [\"t/a\", \"t/b\"]\n", `value t/x/sequential: over, over_minus and spread go with extreme`},
		{"spread without extreme", "sd = 0.4\n", "sd = 0.4\nspread = true\n", `value t/x/sequential: over, over_minus and spread go with extreme`},
		{"unknown end", "sd = 0.4\n", "extreme = \"middle\"\nover = [\"t/a\", \"t/b\"]\n", `value t/x/sequential: extreme "middle": want lowest or highest`},
		{"a range of one row", "sd = 0.4\n", "extreme = \"lowest\"\nover = [\"t/a\"]\n", `value t/x/sequential: over: 1 rows: a range is over two or more`},
		{"a row named twice", "sd = 0.4\n", "extreme = \"lowest\"\nover = [\"t/a\", \"t/a\"]\n", `value t/x/sequential: over[1] "t/a": empty, the value's own ID, or named twice`},
		{"a row that is the value", "sd = 0.4\n", "extreme = \"lowest\"\nover = [\"t/a\", \"t/x/sequential\"]\n", `over[1] "t/x/sequential"`},
		{"over_minus short", "sd = 0.4\n", "extreme = \"highest\"\nover = [\"t/a\", \"t/b\"]\nover_minus = [\"t/c\"]\n", `over_minus: 1 rows for over's 2`},
		{"over_minus a row itself", "sd = 0.4\n", "extreme = \"highest\"\nover = [\"t/a\", \"t/b\"]\nover_minus = [\"t/c\", \"t/b\"]\n", `over_minus[1] "t/b": names another number`},
		{"a range's end with an s.d.", "n = 3\n", "n = 3\nextreme = \"highest\"\nover = [\"t/a\", \"t/b\"]\n", `value t/x/sequential: a range's end: no sd`},
		{"a range's end of one run", "sd = 0.4\nn = 3\n", "n = 1\nextreme = \"highest\"\nover = [\"t/a\", \"t/b\"]\n", `value t/x/sequential: n = 1: want the paper's runs a row`},
		{"an s.d. printed as zero", "mean = 91.7\nsd = 0.4\n", "mean = 0.0\nextreme = \"lowest\"\nspread = true\nover = [\"t/a\", \"t/b\"]\n", `value t/x/sequential: spread: an s.d. of 0 printed as zero`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(ok, tc.old, tc.new, 1)
			if src == ok {
				t.Fatalf("%q is not in the file", tc.old)
			}
			_, err := Parse("p.toml", src)
			if err == nil || !strings.HasPrefix(err.Error(), "p.toml") || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse = %v, want an error naming p.toml and containing %q", err, tc.want)
			}
			// A value's error names the line of its id.
			if err != nil && strings.Contains(tc.want, "value t/x/sequential") && !strings.HasPrefix(err.Error(), "p.toml:3: value t/x/sequential") {
				t.Errorf("Parse = %v, want it to name p.toml:3, the value's id", err)
			}
		})
	}
}

// TestParseExtreme: a range's end over named rows is accepted with its
// fields as written (the s.d.s of three rows; the differences of two
// pairs).
func TestParseExtreme(t *testing.T) {
	t.Parallel()
	src := fileTestExtreme
	p, err := Parse("p.toml", src)
	if err != nil {
		t.Fatalf("Parse(valid) = %v", err)
	}
	want := []Value{
		{ID: "t/sd/lowest", Mean: 1.8, N: 3, Cite: "a", Line: 5, Extreme: "lowest", Over: []string{"t/a/s", "t/b/s", "t/c/s"}, Spread: true},
		{ID: "t/lead/highest", Mean: 1.9, N: 3, Cite: "b", Line: 6, Extreme: "highest", Over: []string{"t/a/s", "t/b/s"}, OverMinus: []string{"t/c/s", "t/d/s"}},
	}
	if !reflect.DeepEqual(p.Value, want) {
		t.Errorf("Parse = %+v, want %+v", p.Value, want)
	}
	// The second value's error names its id's line, a literal string.
	bad := strings.Replace(src, "n = 3\nextreme = \"highest\"", "n = 1\nextreme = \"highest\"", 1)
	if _, err := Parse("p.toml", bad); err == nil || !strings.HasPrefix(err.Error(), "p.toml:13: value t/lead/highest: n = 1") {
		t.Errorf("Parse(n = 1) = %v, want p.toml:13: value t/lead/highest: n = 1 ...", err)
	}
}

const fileTestExtreme = `
[[value]]
id = "t/sd/lowest"
mean = 1.8
n = 3
extreme = "lowest"
spread = true
over = ["t/a/s", "t/b/s", "t/c/s"]
cite = "a"
line = 5

[[value]]
id = 't/lead/highest'
mean = 1.9
n = 3
extreme = "highest"
over = ["t/a/s", "t/b/s"]
over_minus = ["t/c/s", "t/d/s"]
cite = "b"
line = 6
`

// FuzzParse: the decoder never panics, and what it accepts
// survives a round trip through TOML unchanged.
func FuzzParse(f *testing.F) {
	f.Add(fileTestPublished)
	f.Add("[[value]]\nid = \"a/compare/x\"\nmean = -7.0\nlo = -8.9\nhi = -5.2\ncite = \"text\"\nline = 3\n")
	f.Add("[[value]]\nid = \"a\"\nmean = 1.0\nlo = 0.5\ncite = \"x\"\nline = 2\ndecimals = 0\n")
	f.Add("[[value]]\nid = \"a\"\nmean = nan\ncite = \"x\"\n")
	f.Add(fileTestPublished + fileTestRestatement + fileTestNotRun)
	f.Add(fileTestExtreme)
	f.Add(strings.Replace(fileTestExtreme, "over_minus = [", "over_minus = [\"t/e/s\", ", 1))
	f.Fuzz(func(t *testing.T, src string) {
		p, err := Parse("fuzz.toml", src)
		if err != nil {
			return
		}
		var b strings.Builder
		if err := toml.NewEncoder(&b).Encode(p); err != nil {
			t.Fatalf("encode: %v", err)
		}
		q, err := Parse("fuzz.toml", b.String())
		if err != nil {
			t.Fatalf("re-decode of %q: %v", b.String(), err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed %+v into %+v", p, q)
		}
	})
}
