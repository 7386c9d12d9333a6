package experiments

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"repro/numbers"
	"repro/pipeline"
	"repro/stages"
)

var figuresTestConfig = tablesTestConfig + `
[[figure]]
name = "f"
label = "fig:f"
caption = "c"
[[figure.panel]]
xlog = true
[[figure.panel.series]]
name = "s"
experiments = ["x", "y"]
x = "param:bp.lr"
[[figure.panel.series]]
name = "m"
experiments = ["x"]
minus = ["y"]
xs = [1.0]
errors = "bootstrap"
[[figure.panel.line]]
experiment = "z"
protocol = "static"
[[figure.panel]]
needs = "a feature"
[[figure.panel.series]]
name = "absent"
experiments = ["nope"]
xs = [2.0]
needs = "a feature"
`

func TestFigureCells(t *testing.T) {
	t.Parallel()
	g, err := buildTest(t, figuresTestConfig, tablesTestPublished)
	if err != nil {
		t.Fatal(err)
	}
	c := g.Cell("figure/f")
	if c == nil {
		t.Fatal("no figure cell")
	}
	// s: x 3 seeds + y 2; m: x 3 + y 2; the line: z static 3.
	if len(c.Inputs) != 3+2+3+2+3 {
		t.Errorf("figure has %d inputs, want 13", len(c.Inputs))
	}
	var lay stages.FigLayout
	if err := json.Unmarshal([]byte(c.Params.(*stages.FigureParams).Layout), &lay); err != nil {
		t.Fatal(err)
	}
	s := lay.Panels[0].Series[0]
	if s.Points[0].ID != "fig/f/s/3e-05" || s.Points[0].X != 3e-5 || s.Points[1].ID != "fig/f/s/0.001" {
		t.Errorf("sweep points %+v", s.Points)
	}
	if m := lay.Panels[0].Series[1]; m.Resamples != stages.BootstrapResamples || m.Points[0].B == nil || m.Points[0].B.Seeds != "0 1" {
		t.Errorf("margin series %+v", m)
	}
	if p := lay.Panels[1].Series[0].Points[0]; p.Status != numbers.NotRun("a feature") || p.ID != "fig/f/absent/2" {
		t.Errorf("missing point %+v", p)
	}
	if tc := g.Cell("train/z/static/split7/seed0"); !strings.Contains(strings.Join(tc.Tables, " "), "fig/f") {
		t.Errorf("train cell not marked with the figure: %v", tc.Tables)
	}
}

func TestFigureSpecErrors(t *testing.T) {
	t.Parallel()
	cases := map[string]struct{ from, to, want string }{
		"name":       {`name = "f"`, `name = "F f"`, "figure F f.name"},
		"no x":       {`x = "param:bp.lr"`, ``, "series[0].xs"},
		"bad x":      {`x = "param:bp.lr"`, `x = "width"`, "series[0].x"},
		"protocol":   {`experiment = "z"` + "\nprotocol = \"static\"", `experiment = "z"` + "\nprotocol = \"stat\"", "line[0].protocol"},
		"errors":     {`errors = "bootstrap"`, `errors = "ci"`, `series[1].errors: "ci": want sd, bootstrap or none`},
		"legend":     {`xlog = true`, `xlog = true` + "\nlegend = \"top\"", `panel[0].legend: "top": want tl, tr, bl, br, below or none`},
		"minus":      {`minus = ["y"]`, `minus = ["y", "x"]`, "series[1].minus"},
		"dup":        {`name = "m"`, `name = "s"`, "duplicate series"},
		"line":       {`experiment = "z"`, `experiment = "z"` + "\nvalue = 1.0", "line[0]"},
		"unknown":    {`xlog = true`, `xlog = true` + "\nylog = true", "unknown key"},
		"undeclared": {`experiments = ["x", "y"]`, `experiments = ["x", "yy"]`, "no experiment \"yy\""},
		"resamples":  {`errors = "bootstrap"`, `errors = "sd"` + "\nresamples = 5", "resamples"},
		"xticks":     {`xlog = true`, `xlog = true` + "\nxticks = [10.0, 5.0]", "panel[0].xticks: want increasing values"},
		"category x": {`xlog = true`, `xlog = true` + "\ncategories = [\"a\"]", "series[0].x"},
		"category":   {`needs = "a feature"` + "\n[[figure.panel.series]]", `needs = "a feature"` + "\ncategories = [\"a\"]\n[[figure.panel.series]]", "category position 1..1"},
	}
	for name, c := range cases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			if !strings.Contains(figuresTestConfig, c.from) {
				t.Fatalf("config lacks %q", c.from)
			}
			_, err := buildTest(t, strings.Replace(figuresTestConfig, c.from, c.to, 1), tablesTestPublished)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error naming %q", err, c.want)
			}
		})
	}
}

// TestEnergyFigureSeries: fig:appfigs' right panel reads the energy cells:
// a point per T_s of [spike] (and one per rate reference), y and x from the
// same cells, and a bad energy series is an error naming its key.
func TestEnergyFigureSeries(t *testing.T) {
	t.Parallel()
	src, c, lay := paperFigure(t, "appfigs")
	series := map[string]stages.FigSeries{}
	for _, s := range lay.Panels[1].Series {
		series[s.Name] = s
	}
	sp := series["spike-default"]
	var ids []string
	for _, p := range sp.Points {
		ids = append(ids, p.ID)
		if p.Status.Kind != numbers.StatusRun || p.Y == nil || p.XC == nil || p.XC.Input != p.Y.Input || p.XC.Prefix != p.Y.Prefix ||
			!strings.HasPrefix(p.Y.Prefix, "energy/full/static/") || !strings.HasPrefix(p.Y.Metric, "energy.acc@spike") || !strings.HasPrefix(p.XC.Metric, "energy.nj@spike") {
			t.Errorf("point %+v (y %+v, x %+v)", p, p.Y, p.XC)
		}
	}
	if got := strings.Join(ids, " "); sp.XKind != "energy" || got != "fig/appfigs/spike-default/t4 fig/appfigs/spike-default/t8 fig/appfigs/spike-default/t16 fig/appfigs/spike-default/t32" {
		t.Errorf("spike series %s points %s", sp.XKind, got)
	}
	if d := series["dense-default"].Points; len(d) != 1 || d[0].ID != "fig/appfigs/dense-default/dense" || d[0].XC.Metric != "energy.nj@dense" {
		t.Errorf("dense series %+v", d)
	}
	energyInputs := 0
	for _, in := range c.Inputs {
		if strings.HasPrefix(in.Cell.ID, "energy/") {
			energyInputs++
			if !slices.Contains(in.Cell.Tables, "fig/appfigs") {
				t.Errorf("energy cell %s not marked with the figure", in.Cell.ID)
			}
		}
	}
	// 2 x 4 budgets + 4 rate references, each over the experiment's seeds
	// (full and silent run the same, settled or not).
	n := len(paperExperimentSeeds(t, "full"))
	if ns := len(paperExperimentSeeds(t, "silent")); ns != n {
		t.Fatalf("full runs %d seeds, silent %d", n, ns)
	}
	if energyInputs != (2*4+4)*n {
		t.Errorf("%d energy inputs, want %d", energyInputs, (2*4+4)*n)
	}
	checkEdits(t, src, []edit{
		{"energy = \"spike\"", "energy = \"spiking\"", "series[0].energy: \"spiking\": want spike, dense or event"},
		{"experiments = [\"silent\"]\nenergy = \"spike\"", "experiments = [\"full\", \"silent\"]\nenergy = \"spike\"", "series[1].experiments: an energy series plots one experiment"},
		{"experiments = [\"full\"]\nenergy = \"dense\"", "experiments = [\"bp-er\"]\nenergy = \"dense\"", "series[2].experiments: \"bp-er\" is not one of [spike].experiments"},
		{"energy = \"event\"", "energy = \"event\"\nxs = [1.0]", "series[3].energy: an energy series takes x from the energy records"},
	})
}

// TestSelectFigureSeries: fig:appfigs' substrate panel draws each BP + ER
// configuration at its better learning rate: a point per configuration
// whose candidates are both learning rates' cells (inputs numbered by
// variant), and a bad selection is an error naming its key and line.
func TestSelectFigureSeries(t *testing.T) {
	t.Parallel()
	src, c, lay := paperFigure(t, "appfigs")
	sr := lay.Panels[0].Series[0]
	if sr.Name != "bp-er" || sr.Select != "best_mean" || len(sr.Points) != 4 {
		t.Fatalf("series %s select %q, %d points", sr.Name, sr.Select, len(sr.Points))
	}
	p := sr.Points[1]
	if p.ID != "fig/appfigs/bp-er/cfeat-bp-er-w512" || p.Y != nil || p.Status.Kind != numbers.StatusRun || len(p.Variants) != 2 ||
		p.Variants[0].Experiment != "cfeat-bp-er-w512-lr3e4" || p.Variants[1].Experiment != "cfeat-bp-er-w512-lr1e3" ||
		p.Variants[1].Input.String() != "p0s0i1v2y0" || p.Variants[1].Seeds != "0 1 2" {
		t.Errorf("point %+v (variants %+v)", p, p.Variants)
	}
	inputs := map[string]string{}
	for _, in := range c.Inputs {
		inputs[in.Name] = in.Cell.ID
	}
	if got := inputs["p0s0i1v2y2"]; got != "train/cfeat-bp-er-w512-lr1e3/sequential/split1234/seed2" {
		t.Errorf("input p0s0i1v2y2 = %q", got)
	}
	checkEdits(t, src, []edit{
		{`select = "best_mean"`, `select = "best"`, `series[0].select: "best": want best_mean`},
		{`variants = ["lr3e4", "lr1e3"]`, `variants = ["lr3e4"]`, "series[0].variants: want two or more variants"},
		{`variants = ["lr3e4", "lr1e3"]`, `variants = ["lr3e4", "lr3e4"]`, `series[0].variants: "lr3e4": want distinct names`},
		{`variants = ["lr3e4", "lr1e3"]`, `variants = ["lr3e4", "lr3e3"]`, `series[0].experiments: no experiment "cfeat-bp-er-lr3e3"`},
		{"select = \"best_mean\"\nvariants", "variants", "series[0].variants: variants without select"},
		{`xs = [1.0, 2.0, 3.0, 4.0]`, `x = "param:bp.lr"`, "series[0].select: a selected series places its points by xs"},
	})
}

// paperFigure builds the paper profile of pipeline.toml and returns the
// file's text, the named figure's cell and its resolved layout.
func paperFigure(t *testing.T, name string) (string, *pipeline.Cell, stages.FigLayout) {
	t.Helper()
	src := readPipelineTOML(t)
	cfg, err := pipeline.ParseConfig("../pipeline.toml", src)
	if err != nil {
		t.Fatal(err)
	}
	g, err := build(cfg, "paper")
	if err != nil {
		t.Fatal(err)
	}
	c := g.Cell("figure/" + name)
	var lay stages.FigLayout
	if err := json.Unmarshal([]byte(c.Params.(*stages.FigureParams).Layout), &lay); err != nil {
		t.Fatal(err)
	}
	return src, c, lay
}

// paperExperimentSeeds are the seeds an experiment of pipeline.toml runs
// under the paper profile.
func paperExperimentSeeds(t *testing.T, name string) []int64 {
	t.Helper()
	cfg, err := pipeline.LoadConfig("../pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m.byName[name].seeds(m.Profiles["paper"])
}

// edit replaces the first old in pipeline.toml by new; the load must then
// fail with an error containing want, at a line of the file.
type edit struct{ old, new, want string }

func checkEdits(t *testing.T, src string, edits []edit) {
	t.Helper()
	for _, e := range edits {
		if !strings.Contains(src, e.old) {
			t.Fatalf("pipeline.toml lacks %q", e.old)
		}
		if err := buildEdited(src, e.old, e.new); err == nil || !strings.Contains(err.Error(), e.want) || !strings.Contains(err.Error(), "pipeline.toml:") {
			t.Errorf("%s: error %v, want %q", e.new, err, e.want)
		}
	}
}
