package experiments

import (
	"cmp"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"repro/cellid"
	"repro/figure"
	"repro/numbers"
	"repro/pipeline"
	"repro/stages"
)

// FigureSpec is one [[figure]] entry of pipeline.toml: one of the paper's
// figures, every point named by an experiment and a protocol. figureLayout
// translates it, for one profile, into the figure cell's
// stages.FigLayout.
//
//	[[figure]]
//	name = "ksweep"                  # paper/figures/ksweep.*; point IDs fig/ksweep/<series>/<x>
//	label = "fig:ksweep"
//	caption = '...'                  # LaTeX, verbatim (main.tex)
//	width = '.5\linewidth'           # LaTeX width of the graphic
//	size = [4.5, 3.4]                # optional: inches (default 4.5 per panel by 3.4)
//	[[figure.panel]]
//	title = "..."                    # plain text
//	xlabel = "buffer size K"
//	ylabel = "sequential accuracy (%)"
//	xlog = true                      # optional: log x, ticks at the data's x values ...
//	xticks = [100, 1000]             # ... or at these (when the data's are many or long)
//	legend = "br"                    # tl, tr, bl, br (default), below (under the panel) or none
//	yrange = [60, 100]               # optional
//	needs = "..."                    # optional: why the panel is not run (a missing feature)
//	categories = ["night", "trickle"] # optional: a categorical x axis, category i at x = i (1-based);
//	                                 # its series give xs, and point IDs end in the experiment
//	[[figure.panel.series]]
//	name = "ours"                    # unique in the figure
//	label = "local learner (ours)"   # legend
//	experiments = ["k200", "full"]   # one point each
//	protocol = "sequential"          # y: final accuracy x100 under it (default sequential)
//	x = "param:local.buffer"         # param:<train param> | protocol:<p> (accuracy) | metric:replay_updates
//	xs = [200, 1000]                 # or the x of each point
//	offset = -0.12                   # optional: drawn x shift, to set series side by side
//	                                 # (on a log x axis in decades: x drawn at x·10^offset)
//	energy = "spike"                 # or: y is the accuracy and x the energy (nJ per sample) of the
//	                                 # energy cells of the one experiment ([spike] converts it):
//	                                 # spike (a point per time budget T_s, IDs .../t<T_s>), dense or
//	                                 # event (the rate network priced either way, IDs .../dense, /event)
//	minus = ["a", "b"]               # optional: y is the seed-paired margin experiment - minus
//	errors = "sd"                    # sd (default) | bootstrap (95% percentile interval) | none
//	resamples = 20000                # bootstrap resamples (default 10,000)
//	marker = "circle"                # circle square triangle diamond star cross plus ring
//	color = 0                        # palette index
//	line = true                      # join the points; dashed = true draws it dashed
//	seeds = true                     # draw every seed
//	labels = ["always-on", ...]      # optional: a text label beside each point
//	no_mean = ["br2"]                # optional: points drawn by their seeds only
//	frontier = true                  # colour non-dominated and dominated points apart
//	needs = "..."                    # optional: the series cannot run yet; its experiments need not be declared
//	select = "best_mean"             # optional: each point at the best of its variants, experiments
//	variants = ["lr3e4", "lr1e3"]    # <experiments[i]>-<variant>: the one whose seed mean is highest
//	                                 # (the sidecar lists the choice and every candidate's mean)
//	[[figure.panel.line]]            # a horizontal reference line
//	experiment = "night-narrow"      # at this experiment's mean (protocol as above) ...
//	value = 0.0                      # ... or at a value
//	label = "..."
type FigureSpec struct {
	Name    string        `toml:"name"`
	Label   string        `toml:"label"`
	Caption string        `toml:"caption"`
	Width   string        `toml:"width"` // LaTeX width of the graphic
	Size    []float64     `toml:"size"`  // [width, height] in inches
	Panels  []FigurePanel `toml:"panel"`
}

// FigurePanel is one panel of a figure.
type FigurePanel struct {
	Title  string    `toml:"title"`
	XLabel string    `toml:"xlabel"`
	YLabel string    `toml:"ylabel"`
	XLog   bool      `toml:"xlog"`
	Legend string    `toml:"legend"`
	YRange []float64 `toml:"yrange"`
	// Needs declares a panel that cannot run yet: why (a missing
	// feature); its experiments need not be declared.
	Needs string `toml:"needs"`
	// Categories name a categorical x axis (category i at x = i).
	Categories []string `toml:"categories"`
	// XTicks are the x axis' ticks when not the data's x values.
	XTicks []float64      `toml:"xticks"`
	Series []FigureSeries `toml:"series"`
	Lines  []FigureLine   `toml:"line"`
}

// FigureSeries is one series of a panel: what it plots and how it is drawn.
type FigureSeries struct {
	Name  string `toml:"name"`
	Label string `toml:"label"`

	// What is plotted.
	Experiments []string  `toml:"experiments"`
	Protocol    string    `toml:"protocol"`
	X           string    `toml:"x"`
	Xs          []float64 `toml:"xs"`
	Energy      string    `toml:"energy"`
	Minus       []string  `toml:"minus"`
	Labels      []string  `toml:"labels"` // one per experiment, drawn beside its point
	NoMean      []string  `toml:"no_mean"`
	Needs       string    `toml:"needs"`
	// Select, when set, draws each point at the best of its variants:
	// experiment <experiments[i]>-<variant> for every variant (the other
	// settings of one configuration, such as its learning rates).
	Select   string   `toml:"select"`
	Variants []string `toml:"variants"`

	// How it is drawn.
	Errors    string  `toml:"errors"`
	Resamples int     `toml:"resamples"`
	Marker    string  `toml:"marker"`
	Color     int     `toml:"color"`
	Line      bool    `toml:"line"`
	Dashed    bool    `toml:"dashed"`
	Seeds     bool    `toml:"seeds"`
	Frontier  bool    `toml:"frontier"`
	Offset    float64 `toml:"offset"` // drawn x shift (side-by-side series; decades on a log axis)
}

// FigureLine is one horizontal reference line of a panel: at an
// experiment's mean or at a value.
type FigureLine struct {
	Experiment string   `toml:"experiment"`
	Protocol   string   `toml:"protocol"`
	Value      *float64 `toml:"value"`
	Label      string   `toml:"label"`
	Dashed     bool     `toml:"dashed"`
	Color      int      `toml:"color"`
}

// loadFigures decodes and checks every [[figure]] entry (loadDecls,
// checkFigure).
func (m *Matrix) loadFigures() (err error) {
	m.Figures, err = loadDecls(m.cfg, "figure", func(f *FigureSpec) string { return f.Name }, m.checkFigure)
	return err
}

// The values some fields of a figure take, each the list its check and
// its error message are built from.
var (
	// seriesErrors are FigureSeries.Errors' values ("" is sd).
	seriesErrors = []string{"sd", "bootstrap", "none"}
	// energyKinds are FigureSeries.Energy's values (stages/energy.go).
	energyKinds = []string{"spike", "dense", "event"}
	// selectRules are FigureSeries.Select's values besides "".
	selectRules = []string{"best_mean"}
	// xMetrics are the metrics FigureSeries.X may name (metric:<name>).
	xMetrics = []string{"replay_updates"}
)

// maxFigureInches bounds a figure's width and height: 20 inches, over
// twice a page, is 3000 pixels at the PNG's 150 dpi (36 MB of RGBA); a
// size of 1e9 passed load and then failed the cell in image.NewRGBA.
const maxFigureInches = 20.0

// checkFigure checks one figure (its name is checked by loadDecls) and its
// panels, and that every experiment it names exists (unless its series or
// panel says what it needs).
func (m *Matrix) checkFigure(f *FigureSpec) error {
	switch {
	case len(f.Panels) == 0:
		return badField("panel", "no panels")
	case len(f.Size) != 0 && (len(f.Size) != 2 || f.Size[0] <= 0 || f.Size[1] <= 0):
		return badField("size", "want [width, height] in inches, both positive")
	case len(f.Size) == 2 && (f.Size[0] > maxFigureInches || f.Size[1] > maxFigureInches):
		return badField("size", "[%g, %g]: want at most %g inches a side (a page is 8.5)", f.Size[0], f.Size[1], maxFigureInches)
	}
	names := map[string]bool{} // series names are unique in a figure
	for p := range f.Panels {
		if err := m.checkPanel(&f.Panels[p], names); err != nil {
			return under(fmt.Sprintf("panel[%d]", p), err)
		}
	}
	return nil
}

// checkPanel checks one panel, its series and its lines.
func (m *Matrix) checkPanel(pn *FigurePanel, names map[string]bool) error {
	switch {
	case pn.Legend != "" && !slices.Contains(figure.LegendPlaces(), pn.Legend):
		return badField("legend", "%q: want %s", pn.Legend, oneOf(figure.LegendPlaces()))
	case len(pn.XTicks) > 0 && (len(pn.Categories) > 0 || !slices.IsSorted(pn.XTicks) || pn.XLog && pn.XTicks[0] <= 0):
		return badField("xticks", "want increasing values (positive on a log axis), and no categories")
	case len(pn.YRange) != 0 && (len(pn.YRange) != 2 || pn.YRange[0] >= pn.YRange[1]):
		return badField("yrange", "want [min, max] with min < max")
	}
	for s := range pn.Series {
		if err := m.checkSeries(&pn.Series[s], pn, names); err != nil {
			return under(fmt.Sprintf("series[%d]", s), err)
		}
	}
	for l := range pn.Lines {
		if err := m.checkLine(&pn.Lines[l], pn); err != nil {
			return under(fmt.Sprintf("line[%d]", l), err)
		}
	}
	return nil
}

// checkSeries checks one series of panel pn (names holds the figure's
// series names before it): its name, experiments, x axis and how it is
// drawn.
func (m *Matrix) checkSeries(sr *FigureSeries, pn *FigurePanel, names map[string]bool) error {
	switch {
	case !declNameRe(sr.Name) || sr.Name == "line":
		return badField("name", "%q: want %s (not \"line\")", sr.Name, declNameRule)
	case names[sr.Name]:
		return badField("name", "%q: duplicate series in the figure", sr.Name)
	case len(sr.Experiments) == 0:
		return badField("experiments", "missing or empty")
	}
	names[sr.Name] = true
	if err := checkSelect(sr); err != nil {
		return err
	}
	for _, x := range append(seriesExperiments(sr), sr.Minus...) {
		if m.byName[x] == nil && sr.Needs == "" && pn.Needs == "" {
			return badField("experiments", "no experiment %q in %s (a series that cannot run yet says what it needs)", x, filepath.Base(m.cfg.Path))
		}
	}
	if err := checkProtocol(sr.Protocol); err != nil {
		return badField("protocol", "%v", err)
	}
	if err := m.checkSeriesX(sr, len(pn.Categories)); err != nil {
		return err
	}
	switch {
	case len(sr.Minus) != 0 && len(sr.Minus) != len(sr.Experiments):
		return badField("minus", "%d entries for %d experiments", len(sr.Minus), len(sr.Experiments))
	case len(sr.Labels) != 0 && len(sr.Labels) != len(sr.Experiments):
		return badField("labels", "%d labels for %d experiments", len(sr.Labels), len(sr.Experiments))
	}
	for _, n := range sr.NoMean {
		if !slices.Contains(sr.Experiments, n) {
			return badField("no_mean", "%q is not one of the series' experiments", n)
		}
	}
	switch {
	case sr.Errors != "" && !slices.Contains(seriesErrors, sr.Errors):
		return badField("errors", "%q: want %s", sr.Errors, oneOf(seriesErrors))
	case sr.Resamples < 0 || sr.Resamples > 0 && sr.Errors != "bootstrap":
		return badField("resamples", "a positive count, with errors = \"bootstrap\" only")
	case sr.Marker != "" && !slices.Contains(figure.Markers(), sr.Marker):
		return badField("marker", "%q: want one of %s", sr.Marker, strings.Join(figure.Markers(), ", "))
	}
	return nil
}

// checkSeriesX checks where a series places its points: by energy, by xs,
// or by x (a train param, a protocol or a metric); on a panel with
// categories (their number), by xs at category positions.
func (m *Matrix) checkSeriesX(sr *FigureSeries, categories int) error {
	kind, xname, _ := strings.Cut(sr.X, ":")
	switch {
	case sr.Energy != "":
		return m.checkEnergySeries(sr, categories > 0)
	case sr.X == "" && len(sr.Xs) == len(sr.Experiments):
	case sr.X == "":
		return badField("xs", "%d values for %d experiments (or set x)", len(sr.Xs), len(sr.Experiments))
	case len(sr.Xs) > 0:
		return badField("x", "set x or xs, not both")
	case kind == "param" && xname != "":
	case kind == "protocol":
		if err := checkProtocol(xname); err != nil || xname == "" {
			return badField("x", "%q: want %s", sr.X, oneOf(prefixed("protocol:", protocols)))
		}
	case kind == "metric" && slices.Contains(xMetrics, xname):
	default:
		return badField("x", "%q: want param:<train param>, protocol:<protocol> or %s", sr.X, oneOf(prefixed("metric:", xMetrics)))
	}
	if categories == 0 {
		return nil
	}
	if sr.X != "" {
		return badField("x", "a categorical panel places its points by xs (category positions 1..%d)", categories)
	}
	for _, x := range sr.Xs {
		if x != math.Trunc(x) || x < 1 || int(x) > categories {
			return badField("xs", "%v: want a category position 1..%d", x, categories)
		}
	}
	return nil
}

// checkEnergySeries checks a series that plots accuracy against energy
// (FigureSeries.Energy).
func (m *Matrix) checkEnergySeries(sr *FigureSeries, categorical bool) error {
	switch {
	case !slices.Contains(energyKinds, sr.Energy):
		return badField("energy", "%q: want %s", sr.Energy, oneOf(energyKinds))
	case m.spike == nil:
		return badField("energy", "no [spike] section: no network is priced")
	case len(sr.Experiments) != 1:
		return badField("experiments", "an energy series plots one experiment (its points are the time budgets), not %d", len(sr.Experiments))
	case !slices.Contains(m.spike.Experiments, sr.Experiments[0]):
		return badField("experiments", "%q is not one of [spike].experiments %v", sr.Experiments[0], m.spike.Experiments)
	case sr.Protocol != "" && sr.Protocol != m.spike.Protocol:
		return badField("protocol", "%q: [spike] converts the %s networks", sr.Protocol, m.spike.Protocol)
	case sr.X != "" || len(sr.Xs) > 0 || len(sr.Minus) > 0 || len(sr.Labels) > 0 || categorical:
		return badField("energy", "an energy series takes x from the energy records: no x, xs, minus, labels or categories")
	}
	return nil
}

// checkSelect checks a series whose points are each the best of their
// variants (FigureSeries.Select). Such a series places its points by xs:
// an x read from the cells (a param, another protocol, energy) or a margin
// would depend on which variant wins.
func checkSelect(sr *FigureSeries) error {
	switch {
	case sr.Select == "" && len(sr.Variants) > 0:
		return badField("variants", "variants without select = %q", selectRules[0])
	case sr.Select == "":
		return nil
	case !slices.Contains(selectRules, sr.Select):
		return badField("select", "%q: want %s", sr.Select, oneOf(selectRules))
	case len(sr.Variants) < 2:
		return badField("variants", "want two or more variants to select from, not %d", len(sr.Variants))
	case sr.X != "" || sr.Energy != "" || len(sr.Minus) > 0:
		return badField("select", "a selected series places its points by xs: no x, energy or minus")
	}
	for i, v := range sr.Variants {
		if !declNameRe(v) || slices.Contains(sr.Variants[:i], v) {
			return badField("variants", "%q: want distinct names of %s", v, declNameRule)
		}
	}
	return nil
}

// checkLine checks one horizontal line of panel pn.
func (m *Matrix) checkLine(ln *FigureLine, pn *FigurePanel) error {
	switch {
	case (ln.Experiment == "") == (ln.Value == nil):
		return badField("", "set experiment or value, not both")
	case ln.Experiment != "" && m.byName[ln.Experiment] == nil && pn.Needs == "":
		return badField("experiment", "no experiment %q in %s", ln.Experiment, filepath.Base(m.cfg.Path))
	}
	if err := checkProtocol(ln.Protocol); err != nil {
		return badField("protocol", "%v", err)
	}
	return nil
}

// seriesExperiments lists the experiments a series' points read: its
// experiments, or each one's variants when it selects among them.
func seriesExperiments(sr *FigureSeries) []string {
	if sr.Select == "" {
		return slices.Clone(sr.Experiments)
	}
	var out []string
	for _, x := range sr.Experiments {
		for _, v := range sr.Variants {
			out = append(out, x+"-"+v)
		}
	}
	return out
}

// checkProtocol checks a protocol a figure names ("" is sequential).
func checkProtocol(p string) error {
	if p == "" || slices.Contains(protocols, p) {
		return nil
	}
	return fmt.Errorf("%q: want %s", p, oneOf(protocols))
}

func orSequential(p string) string {
	if p == "" {
		return "sequential"
	}
	return p
}

// figureCells adds one figure cell per [[figure]], over the train cells
// its points need, and marks those train cells with the figure.
func (m *Matrix) figureCells(profile string, prof *Profile, byID map[string]*pipeline.Cell) ([]*pipeline.Cell, error) {
	var out []*pipeline.Cell
	for _, f := range m.Figures {
		r := &figResolver{m: m, prof: prof, profile: profile, byID: byID, fig: f.Name}
		lay, err := r.figureLayout(f)
		if err != nil {
			return nil, err
		}
		b, err := json.Marshal(lay)
		if err != nil {
			return nil, err
		}
		out = append(out, &pipeline.Cell{ID: cellid.Figure(f.Name), Stage: stages.Figure,
			Params: &stages.FigureParams{Name: f.Name, Layout: string(b)}, Inputs: r.inputs, Tables: []string{"fig/" + f.Name}})
	}
	return out, nil
}

// figureLayout translates figure f into its cell's layout in the
// resolver's profile: its options copied, every series' and line's points
// resolved to the cells they read (collected in r.inputs).
func (r *figResolver) figureLayout(f *FigureSpec) (*stages.FigLayout, error) {
	lay := &stages.FigLayout{Name: f.Name, Label: f.Label, Caption: f.Caption, TeXWidth: f.Width,
		Stamp: r.prof.Stamp, Profile: r.profile}
	if len(f.Size) == 2 {
		lay.Width, lay.Height = f.Size[0], f.Size[1]
	}
	for p := range f.Panels {
		pn := &f.Panels[p]
		out := stages.FigPanel{Title: pn.Title, XLabel: pn.XLabel, YLabel: pn.YLabel, XLog: pn.XLog, Legend: pn.Legend,
			YRange: pn.YRange, Needs: pn.Needs, Categories: pn.Categories, XTicks: pn.XTicks}
		for s := range pn.Series {
			sr, err := r.series(p, s, &pn.Series[s], pn)
			if err != nil {
				return nil, err
			}
			out.Series = append(out.Series, sr)
		}
		for l := range pn.Lines {
			ln, err := r.line(p, l, &pn.Lines[l], pn.Needs)
			if err != nil {
				return nil, err
			}
			out.Lines = append(out.Lines, ln)
		}
		lay.Panels = append(lay.Panels, out)
	}
	return lay, nil
}

// line resolves line l of panel p (whose needs, when set, say why its
// experiment may be missing).
func (r *figResolver) line(p, l int, ln *FigureLine, needs string) (stages.FigLine, error) {
	out := stages.FigLine{Label: ln.Label, Dashed: ln.Dashed, Color: ln.Color, Value: ln.Value,
		Status: numbers.Status{Kind: numbers.StatusRun}}
	if ln.Value != nil {
		out.ID = fmt.Sprintf("fig/%s/line/%s", r.fig, strconv.FormatFloat(*ln.Value, 'g', -1, 64))
		return out, nil
	}
	out.ID = fmt.Sprintf("fig/%s/line/%s", r.fig, ln.Experiment)
	var err error
	out.Ref, out.Status, err = r.ref(ln.Experiment, orSequential(ln.Protocol), "", cellid.FigureInput{Panel: p, Series: -1, Point: l, Role: 'r'}, needs)
	return out, err
}

// figResolver resolves one figure's points against the graph's train cells.
type figResolver struct {
	m       *Matrix
	prof    *Profile
	profile string
	byID    map[string]*pipeline.Cell
	fig     string
	inputs  []pipeline.CellInput
}

// ref returns the cells of one experiment and protocol as figure inputs
// named input+<seed index>, or why it is not run (needs, when set, is the
// reason an experiment that is not configured is missing).
//
// An energy metric (stages.IsEnergyMetric) reads the experiment's energy
// cells instead of its train cells.
func (r *figResolver) ref(name, protocol, metric string, input cellid.FigureInput, needs string) (*stages.CellRef, numbers.Status, error) {
	e := r.m.byName[name]
	switch {
	case e == nil && needs != "":
		return nil, numbers.NotRun(needs), nil
	case e == nil:
		return nil, numbers.Status{}, fmt.Errorf("%s: figure %s: no experiment %q", r.m.cfg.Path, r.fig, name)
	case !e.inProfile(r.profile):
		return nil, numbers.NotRun(fmt.Sprintf("experiment %s is not in profile %s", name, r.profile)), nil
	case !slices.Contains(e.Protocols, protocol):
		return nil, numbers.NotRun(fmt.Sprintf("experiment %s has no protocol %s", name, protocol)), nil
	}
	eval := cellid.EvalOf(e.splits(r.prof)[0])
	prefix := cellid.Train{Experiment: name, Protocol: protocol, Eval: eval}.Prefix()
	energy := stages.IsEnergyMetric(metric)
	if energy {
		prefix = cellid.EnergyPrefix(prefix)
	}
	ref := &stages.CellRef{Experiment: name, Protocol: protocol, Prefix: prefix, Input: input, Metric: metric}
	var parts []string
	for s, seed := range e.seeds(r.prof) {
		parts = append(parts, strconv.FormatInt(seed, 10))
		id := cellid.WithSeed(prefix, seed)
		if energy {
			id = cellid.Energy(cellid.Train{Experiment: name, Protocol: protocol, Eval: eval, Seed: seed})
		}
		tc := r.byID[id]
		if tc == nil {
			return nil, numbers.Status{}, fmt.Errorf("%s: figure %s: no cell %s", r.m.cfg.Path, r.fig, id)
		}
		if tag := "fig/" + r.fig; !slices.Contains(tc.Tables, tag) {
			tc.Tables = append(tc.Tables, tag)
		}
		in := input
		in.Seed = s
		r.inputs = append(r.inputs, pipeline.CellInput{Name: in.String(), Cell: tc})
	}
	ref.Seeds = strings.Join(parts, " ")
	return ref, numbers.Status{Kind: numbers.StatusRun}, nil
}

// series resolves series s of panel p: its drawing options with their
// defaults, its x kind and its points.
func (r *figResolver) series(p, s int, sr *FigureSeries, pn *FigurePanel) (stages.FigSeries, error) {
	out := stages.FigSeries{Name: sr.Name, Label: sr.Label, Select: sr.Select,
		Errors: cmp.Or(sr.Errors, "sd"), Resamples: sr.Resamples, Marker: sr.Marker, Color: sr.Color,
		Line: sr.Line, Dashed: sr.Dashed, Seeds: sr.Seeds, Frontier: sr.Frontier,
		ShowLabels: len(sr.Labels) > 0, Offset: sr.Offset}
	if out.Errors == "bootstrap" && out.Resamples == 0 {
		out.Resamples = stages.BootstrapResamples
	}
	if sr.Energy != "" {
		return out, r.energySeries(p, s, sr, &out)
	}
	kind, xname, _ := strings.Cut(sr.X, ":")
	switch {
	case sr.X == "" || kind == "param":
		out.XKind = "value"
	default:
		out.XKind, out.XName = kind, xname
	}
	protocol := orSequential(sr.Protocol)
	needs := cmp.Or(sr.Needs, pn.Needs)
	for i, name := range sr.Experiments {
		pt := stages.FigPointRef{Experiment: name, NoMean: slices.Contains(sr.NoMean, name)}
		if len(sr.Labels) > 0 {
			pt.Label = sr.Labels[i]
		}
		in := cellid.FigureInput{Panel: p, Series: s, Point: i, Role: 'y'}
		var y *stages.CellRef
		var status numbers.Status
		var err error
		if sr.Select != "" {
			pt.Variants, status, err = r.variants(name, protocol, sr.Variants, in, needs)
		} else {
			y, status, err = r.ref(name, protocol, "", in, needs)
		}
		if err != nil {
			return out, err
		}
		pt.Y, pt.Status = y, status
		xkey := name
		if y != nil && len(sr.Minus) > 0 {
			in.Role = 'b'
			pt.B, pt.Status, err = r.ref(sr.Minus[i], protocol, "", in, needs)
			if err != nil {
				return out, err
			}
		}
		if y != nil && kind == "protocol" {
			in.Role = 'x'
			pt.XC, pt.Status, err = r.ref(name, xname, "", in, needs)
			if err != nil {
				return out, err
			}
		}
		switch {
		case len(sr.Xs) > 0 && len(pn.Categories) > 0:
			pt.X = sr.Xs[i] // the ID keeps the experiment: categories are not numbers
		case len(sr.Xs) > 0:
			pt.X = sr.Xs[i]
			xkey = strconv.FormatFloat(pt.X, 'g', -1, 64)
		case kind == "param" && y != nil:
			v, err := rawParam(r.byID[cellid.WithSeed(y.Prefix, firstSeed(y.Seeds))], xname)
			if err != nil {
				return out, fmt.Errorf("%s: figure %s: series %s: x: %w", r.m.cfg.Path, r.fig, sr.Name, err)
			}
			if pt.X, err = strconv.ParseFloat(v, 64); err != nil {
				return out, fmt.Errorf("%s: figure %s: series %s: x: param %s = %s is not a number", r.m.cfg.Path, r.fig, sr.Name, xname, v)
			}
			xkey = strconv.FormatFloat(pt.X, 'g', -1, 64)
		}
		pt.ID = fmt.Sprintf("fig/%s/%s/%s", r.fig, sr.Name, xkey)
		out.Points = append(out.Points, pt)
	}
	return out, nil
}

// variants resolves the candidates of one point of a selected series:
// experiment name-<variant> for each variant, its inputs numbered by
// variant (1-based). The point runs when every candidate does.
func (r *figResolver) variants(name, protocol string, variants []string, in cellid.FigureInput, needs string) ([]*stages.CellRef, numbers.Status, error) {
	var refs []*stages.CellRef
	for v, suffix := range variants {
		in.Variant = v + 1
		ref, status, err := r.ref(name+"-"+suffix, protocol, "", in, needs)
		if err != nil || ref == nil {
			return nil, status, err
		}
		refs = append(refs, ref)
	}
	return refs, numbers.Status{Kind: numbers.StatusRun}, nil
}

// energySeries resolves the points of a series of accuracy against
// energy into out: one point
// per inference of the experiment's energy records (each time budget of
// [spike], or the rate network priced densely or event-driven), y and x
// read from the same energy cells.
func (r *figResolver) energySeries(p, s int, sr *FigureSeries, out *stages.FigSeries) error {
	out.XKind = "energy"
	name := sr.Experiments[0]
	protocol := cmp.Or(sr.Protocol, r.m.spike.Protocol)
	infs := []string{sr.Energy}
	if sr.Energy == "spike" {
		infs = nil
		for _, t := range r.m.spike.Steps {
			infs = append(infs, "spike"+strconv.Itoa(t))
		}
		out.ShowLabels = true
	}
	for i, inf := range infs {
		pt := stages.FigPointRef{Experiment: name, ID: fmt.Sprintf("fig/%s/%s/%s", r.fig, sr.Name, inf)}
		if t, ok := strings.CutPrefix(inf, "spike"); ok {
			pt.ID, pt.Label = fmt.Sprintf("fig/%s/%s/t%s", r.fig, sr.Name, t), "T="+t
		}
		y, status, err := r.ref(name, protocol, "energy.acc@"+inf, cellid.FigureInput{Panel: p, Series: s, Point: i, Role: 'y'}, sr.Needs)
		if err != nil {
			return err
		}
		pt.Y, pt.Status = y, status
		if y != nil {
			x := *y // the same cells (and inputs), read for the energy
			x.Metric = "energy.nj@" + inf
			pt.XC = &x
		}
		out.Points = append(out.Points, pt)
	}
	return nil
}

// rawParam returns a train cell's resolved param (dotted name below
// "train") in canonical TOML.
func rawParam(c *pipeline.Cell, name string) (string, error) {
	ps, err := pipeline.EncodeParams(c.Stage.Name, c.Params)
	if err != nil {
		return "", err
	}
	for _, p := range ps {
		if p.Name == c.Stage.Name+"."+name {
			return p.Value, nil
		}
	}
	return "", fmt.Errorf("cell %s has no param %s", c.ID, name)
}

// firstSeed is the first of a space-separated seed list.
func firstSeed(seeds string) int64 {
	s, _ := strconv.ParseInt(strings.Fields(seeds)[0], 10, 64)
	return s
}
