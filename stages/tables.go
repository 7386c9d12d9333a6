package stages

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/BurntSushi/toml"
)

// The paper's tables are three stages on top of the train cells:
//
// aggregate/<table> (Aggregate): inputs "rXXcYsZ", the train cell of seed
// index Z in row XX, column Y; output "aggregate", canonical JSON
// (AggregateRecord): per table cell the seeds, their final accuracy x100,
// mean and sample s.d., forgetting and replay counts, the missing seeds and
// the result digests; and the seed-paired bootstrap intervals of the
// differences the paper states.
//
// render/<table> (Render): input "aggregate"; outputs "tex" (the booktabs
// table, one comment per row naming its number IDs) and "ids" (JSON
// Sidecar: every number with its row, column and provenance). `repro run`
// copies them to paper/tables/<table>.tex and .ids.json.
//
// reproduction (Reproduction): one input per table, named by the table;
// outputs "tex" (paper/reproduction.tex) and "report" (JSON ReproReport):
// every number against the paper's published value (paper/published.toml).
//
// Which cells a table reads, and how they are named, is decided by package
// experiments (the [[table]] declarations of pipeline.toml).

// Bootstrap settings of every comparison: the 10,000 resamples and a
// fixed seed, so the intervals are reproducible bit for bit.
const (
	BootstrapResamples = 10000
	BootstrapSeed      = 20260101
)

// Published is the paper's published values (paper/published.toml), each
// cited to its table and row.
type Published struct {
	Value []PublishedValue `toml:"value"`
	Claim []Claim          `toml:"claim"`
}

// Claim is an ordering the paper states: it holds when every condition
// holds on our means. A condition compares two number IDs (or a number ID
// and a constant): "val/full/split1 >= val/night/split1".
type Claim struct {
	ID    string   `toml:"id"`
	Text  string   `toml:"text"`
	Cite  string   `toml:"cite"`
	Holds []string `toml:"holds"`
}

var claimOps = []string{">=", "<=", ">", "<"}

// parseCondition splits "a OP b" into its operands and operator.
func parseCondition(c string) (a, op, b string, err error) {
	for _, o := range claimOps {
		if x, y, ok := strings.Cut(c, " "+o+" "); ok {
			a, b = strings.TrimSpace(x), strings.TrimSpace(y)
			if a == "" || b == "" || strings.ContainsAny(a+b, " <>=") {
				break
			}
			return a, o, b, nil
		}
	}
	return "", "", "", fmt.Errorf("condition %q: want \"ID OP ID\" or \"ID OP number\" with OP one of >= <= > <", c)
}

// PublishedValue is one published number: a table cell (mean ± sd over n
// seeds) or a stated paired difference (mean [lo, hi]).
type PublishedValue struct {
	ID   string   `toml:"id"`
	Mean float64  `toml:"mean"`
	SD   *float64 `toml:"sd"`
	N    int      `toml:"n"`
	Lo   *float64 `toml:"lo"`
	Hi   *float64 `toml:"hi"`
	Cite string   `toml:"cite"`
	// NoiseFrom names, for a single published run (n = 1, no s.d.), the
	// number ID of the same configuration over several seeds: its s.d.
	// over our seeds stands in for one run's seed noise, on both sides.
	// Without it a single run has no noise estimate and must match to the
	// published rounding.
	NoiseFrom string `toml:"noise_from,omitzero"`
}

// LoadPublished reads and checks a published-values file.
func LoadPublished(path string) (*Published, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePublished(path, string(b))
}

// ParsePublished decodes and checks the content src of a published-values
// file (path names it in errors): known keys only, unique IDs, a cite for
// every value, lo and hi together.
func ParsePublished(path, src string) (*Published, error) {
	p := &Published{}
	md, err := toml.Decode(src, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if u := md.Undecoded(); len(u) > 0 {
		return nil, fmt.Errorf("%s: unknown key %s", path, u[0])
	}
	seen := map[string]bool{}
	for i, v := range p.Value {
		if v.ID == "" || seen[v.ID] {
			return nil, fmt.Errorf("%s: value[%d]: id %q missing or duplicate", path, i, v.ID)
		}
		seen[v.ID] = true
		if v.Cite == "" {
			return nil, fmt.Errorf("%s: value %s: no cite", path, v.ID)
		}
		for _, x := range []*float64{&v.Mean, v.SD, v.Lo, v.Hi} {
			if x != nil && (math.IsNaN(*x) || math.IsInf(*x, 0)) {
				return nil, fmt.Errorf("%s: value %s: not a finite number", path, v.ID)
			}
		}
		if (v.Lo == nil) != (v.Hi == nil) {
			return nil, fmt.Errorf("%s: value %s: lo and hi go together", path, v.ID)
		}
		if v.NoiseFrom != "" && (v.N != 1 || v.SD != nil || v.NoiseFrom == v.ID) {
			return nil, fmt.Errorf("%s: value %s: noise_from is for a single run (n = 1, no sd) and names another number", path, v.ID)
		}
	}
	claims := map[string]bool{}
	for i, c := range p.Claim {
		if c.ID == "" || claims[c.ID] || c.Cite == "" || c.Text == "" || len(c.Holds) == 0 {
			return nil, fmt.Errorf("%s: claim[%d] %q: id (unique), text, cite and holds are required", path, i, c.ID)
		}
		claims[c.ID] = true
		for _, h := range c.Holds {
			if _, _, _, err := parseCondition(h); err != nil {
				return nil, fmt.Errorf("%s: claim %s: %w", path, c.ID, err)
			}
		}
	}
	return p, nil
}

// AddPublished appends the published values and claims of a file to the
// report's.
func (rp *ReproductionParams) AddPublished(p *Published) {
	rp.Values = append(rp.Values, p.Value...)
	rp.Claims = append(rp.Claims, p.Claim...)
}
