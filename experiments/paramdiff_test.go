package experiments

import (
	"strings"
	"testing"

	"repro/cellid"
	"repro/pipeline"
)

// TestAddRowDiff: adding one row to a table of pipeline.toml gives plan
// reasons that name the new row by its label, and the aggregate's new cell
// by its train cells, not both whole lists.
func TestAddRowDiff(t *testing.T) {
	t.Parallel()
	added := matrixConfig + `[[table.row]]
experiment = "middle"
label = "M"
`
	params := func(src, id string) []pipeline.Param {
		t.Helper()
		g := mustBuild(t, src, "smoke")
		c := g.Cell(id)
		if c == nil {
			t.Fatalf("no cell %s", id)
		}
		ps, err := pipeline.EncodeParams(c.Stage.Name, c.Params)
		if err != nil {
			t.Fatal(err)
		}
		return ps
	}
	for _, tc := range []struct{ id, want string }{
		{cellid.Render("t"), `render.rows[2] (new) {label = "M"}`},
		{cellid.Aggregate("t"), `aggregate.cells[2] (new) {cell = "train/middle/sequential/split1234"}, aggregate.rows ["full", "bp-er"] -> ["full", "bp-er", "middle"]`},
	} {
		got := pipeline.DiffParams(params(matrixConfig, tc.id), params(added, tc.id))
		if !strings.Contains(got, tc.want) {
			t.Errorf("%s: DiffParams =\n%s\nwant it to contain\n%s", tc.id, got, tc.want)
		}
		t.Logf("%s: %s", tc.id, got)
		if len(got) > 400 {
			t.Errorf("%s: a diff of %d characters for one row:\n%s", tc.id, len(got), got)
		}
	}
}
