package stages

import (
	"reflect"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const tablesTestPublished = `
[[value]]
id = "t/x/sequential"
mean = 91.7
sd = 0.4
n = 3
cite = "Table t, row 1"
line = 1
`

// FuzzParsePublished: the decoder never panics, and what it accepts
// survives a round trip through TOML unchanged.
func FuzzParsePublished(f *testing.F) {
	f.Add(tablesTestPublished)
	f.Add("[[value]]\nid = \"a/compare/x\"\nmean = -7.0\nlo = -8.9\nhi = -5.2\ncite = \"text\"\nline = 3\n")
	f.Add("[[value]]\nid = \"a\"\nmean = 1.0\nlo = 0.5\ncite = \"x\"\nline = 2\ndecimals = 0\n")
	f.Add("[[value]]\nid = \"a\"\nmean = nan\ncite = \"x\"\n")
	f.Fuzz(func(t *testing.T, src string) {
		p, err := ParsePublished("fuzz.toml", src)
		if err != nil {
			return
		}
		var b strings.Builder
		if err := toml.NewEncoder(&b).Encode(p); err != nil {
			t.Fatalf("encode: %v", err)
		}
		q, err := ParsePublished("fuzz.toml", b.String())
		if err != nil {
			t.Fatalf("re-decode of %q: %v", b.String(), err)
		}
		if !reflect.DeepEqual(p, q) {
			t.Fatalf("round trip changed %+v into %+v", p, q)
		}
	})
}
