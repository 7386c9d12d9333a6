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
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(ok, tc.old, tc.new, 1)
			_, err := Parse("p.toml", src)
			if err == nil || !strings.Contains(err.Error(), "p.toml: "+tc.want) {
				t.Errorf("Parse = %v, want an error containing %q", err, "p.toml: "+tc.want)
			}
		})
	}
}

// FuzzParse: the decoder never panics, and what it accepts
// survives a round trip through TOML unchanged.
func FuzzParse(f *testing.F) {
	f.Add(fileTestPublished)
	f.Add("[[value]]\nid = \"a/compare/x\"\nmean = -7.0\nlo = -8.9\nhi = -5.2\ncite = \"text\"\nline = 3\n")
	f.Add("[[value]]\nid = \"a\"\nmean = 1.0\nlo = 0.5\ncite = \"x\"\nline = 2\ndecimals = 0\n")
	f.Add("[[value]]\nid = \"a\"\nmean = nan\ncite = \"x\"\n")
	f.Add(fileTestPublished + fileTestRestatement + fileTestNotRun)
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
