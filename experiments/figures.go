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

	"github.com/BurntSushi/toml"

	"repro/experiments/cellid"
	"repro/figure"
	"repro/pipeline"
	"repro/stages"
)

// FigureSpec is one [[figure]] entry of pipeline.toml.
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
//	legend = "br"                    # tl, tr, bl, br (default) or none
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
//	[[figure.panel.line]]            # a horizontal reference line
//	experiment = "night-narrow"      # at this experiment's mean (protocol as above) ...
//	value = 0.0                      # ... or at a value
//	label = "..."
type FigureSpec struct {
	Name    string      `toml:"name"`
	Label   string      `toml:"label"`
	Caption string      `toml:"caption"`
	Width   string      `toml:"width"`
	Size    []float64   `toml:"size"`
	Panels  []PanelSpec `toml:"panel"`
}

// PanelSpec is one panel of a figure.
type PanelSpec struct {
	Title  string    `toml:"title"`
	XLabel string    `toml:"xlabel"`
	YLabel string    `toml:"ylabel"`
	XLog   bool      `toml:"xlog"`
	XTicks []float64 `toml:"xticks"`
	Legend string    `toml:"legend"`
	YRange []float64 `toml:"yrange"`
	Needs  string    `toml:"needs"`
	// Categories name a categorical x axis (category i at x = i).
	Categories []string     `toml:"categories"`
	Series     []SeriesSpec `toml:"series"`
	Lines      []LineSpec   `toml:"line"`
}

// SeriesSpec is one series of a panel.
type SeriesSpec struct {
	Name        string    `toml:"name"`
	Label       string    `toml:"label"`
	Experiments []string  `toml:"experiments"`
	Protocol    string    `toml:"protocol"`
	X           string    `toml:"x"`
	Xs          []float64 `toml:"xs"`
	Offset      float64   `toml:"offset"`
	Energy      string    `toml:"energy"`
	Minus       []string  `toml:"minus"`
	Errors      string    `toml:"errors"`
	Resamples   int       `toml:"resamples"`
	Marker      string    `toml:"marker"`
	Color       int       `toml:"color"`
	Line        bool      `toml:"line"`
	Dashed      bool      `toml:"dashed"`
	Seeds       bool      `toml:"seeds"`
	Labels      []string  `toml:"labels"`
	NoMean      []string  `toml:"no_mean"`
	Frontier    bool      `toml:"frontier"`
	Needs       string    `toml:"needs"`
}

// LineSpec is a horizontal reference line.
type LineSpec struct {
	Experiment string   `toml:"experiment"`
	Protocol   string   `toml:"protocol"`
	Value      *float64 `toml:"value"`
	Label      string   `toml:"label"`
	Dashed     bool     `toml:"dashed"`
	Color      int      `toml:"color"`
}

// loadFigures decodes and checks every [[figure]] entry: its layout, and
// that every experiment it names exists (unless its series or panel says
// what it needs). It is long because it is the list of field checks in
// field order, each error at its file:line, kept in one place so a new
// field's check goes beside its peers.
func (m *Matrix) loadFigures() error {
	cfg := m.cfg
	sec, ok := cfg.Section("figure")
	if !ok {
		return nil
	}
	var prims []toml.Primitive
	if err := cfg.DecodeAt(sec, &prims, "figure"); err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, prim := range prims {
		at := fmt.Sprintf("figure[%d]", i)
		f := &FigureSpec{}
		if err := cfg.DecodeAt(prim, f, at); err != nil {
			return err
		}
		bad := func(key, format string, args ...any) error {
			line := cfg.KeyLine(at + "." + key)
			if line == 0 {
				line = cfg.KeyLine(at)
			}
			return cfg.ErrAt(line, fmt.Sprintf("figure %s.%s", f.Name, key), format, args...)
		}
		if !tableNameRe(f.Name) {
			return bad("name", "%q: want lower-case letters, digits, - and _", f.Name)
		}
		if seen[f.Name] {
			return bad("name", "duplicate figure")
		}
		seen[f.Name] = true
		if len(f.Panels) == 0 {
			return bad("panel", "no panels")
		}
		if len(f.Size) != 0 && (len(f.Size) != 2 || f.Size[0] <= 0 || f.Size[1] <= 0) {
			return bad("size", "want [width, height] in inches, both positive")
		}
		names := map[string]bool{}
		for p, pn := range f.Panels {
			key := func(k string) string { return fmt.Sprintf("panel[%d].%s", p, k) }
			switch pn.Legend {
			case "", "tl", "tr", "bl", "br", "none":
			default:
				return bad(key("legend"), "%q: want tl, tr, bl, br or none", pn.Legend)
			}
			if len(pn.XTicks) > 0 && (len(pn.Categories) > 0 || !slices.IsSorted(pn.XTicks) || pn.XLog && pn.XTicks[0] <= 0) {
				return bad(key("xticks"), "want increasing values (positive on a log axis), and no categories")
			}
			if len(pn.YRange) != 0 && (len(pn.YRange) != 2 || pn.YRange[0] >= pn.YRange[1]) {
				return bad(key("yrange"), "want [min, max] with min < max")
			}
			for s, sr := range pn.Series {
				sk := func(k string) string { return key(fmt.Sprintf("series[%d].%s", s, k)) }
				if !tableNameRe(sr.Name) || sr.Name == "line" {
					return bad(sk("name"), "%q: want lower-case letters, digits, - and _ (not \"line\")", sr.Name)
				}
				if names[sr.Name] {
					return bad(sk("name"), "%q: duplicate series in the figure", sr.Name)
				}
				names[sr.Name] = true
				if len(sr.Experiments) == 0 {
					return bad(sk("experiments"), "missing or empty")
				}
				for _, x := range append(slices.Clone(sr.Experiments), sr.Minus...) {
					if m.byName[x] == nil && sr.Needs == "" && pn.Needs == "" {
						return bad(sk("experiments"), "no experiment %q in %s (a series that cannot run yet says what it needs)", x, filepath.Base(cfg.Path))
					}
				}
				if err := checkProtocol(sr.Protocol); err != nil {
					return bad(sk("protocol"), "%v", err)
				}
				kind, xname, _ := strings.Cut(sr.X, ":")
				switch {
				case sr.Energy != "":
					if k, err := m.checkEnergySeries(&sr, len(pn.Categories) > 0); err != nil {
						return bad(sk(k), "%v", err)
					}
				case sr.X == "" && len(sr.Xs) == len(sr.Experiments):
				case sr.X == "":
					return bad(sk("xs"), "%d values for %d experiments (or set x)", len(sr.Xs), len(sr.Experiments))
				case len(sr.Xs) > 0:
					return bad(sk("x"), "set x or xs, not both")
				case kind == "param" && xname != "":
				case kind == "protocol":
					if err := checkProtocol(xname); err != nil || xname == "" {
						return bad(sk("x"), "%q: want protocol:sequential, protocol:static or protocol:single_pass", sr.X)
					}
				case sr.X == "metric:replay_updates":
				default:
					return bad(sk("x"), "%q: want param:<train param>, protocol:<protocol> or metric:replay_updates", sr.X)
				}
				if len(pn.Categories) > 0 {
					if sr.X != "" {
						return bad(sk("x"), "a categorical panel places its points by xs (category positions 1..%d)", len(pn.Categories))
					}
					for _, x := range sr.Xs {
						if x != math.Trunc(x) || x < 1 || int(x) > len(pn.Categories) {
							return bad(sk("xs"), "%v: want a category position 1..%d", x, len(pn.Categories))
						}
					}
				}
				if len(sr.Minus) != 0 && len(sr.Minus) != len(sr.Experiments) {
					return bad(sk("minus"), "%d entries for %d experiments", len(sr.Minus), len(sr.Experiments))
				}
				if len(sr.Labels) != 0 && len(sr.Labels) != len(sr.Experiments) {
					return bad(sk("labels"), "%d labels for %d experiments", len(sr.Labels), len(sr.Experiments))
				}
				for _, n := range sr.NoMean {
					if !slices.Contains(sr.Experiments, n) {
						return bad(sk("no_mean"), "%q is not one of the series' experiments", n)
					}
				}
				switch sr.Errors {
				case "", "sd", "bootstrap", "none":
				default:
					return bad(sk("errors"), "%q: want sd, bootstrap or none", sr.Errors)
				}
				if sr.Resamples < 0 || sr.Resamples > 0 && sr.Errors != "bootstrap" {
					return bad(sk("resamples"), "a positive count, with errors = \"bootstrap\" only")
				}
				if _, ok := markerSet[sr.Marker]; sr.Marker != "" && !ok {
					return bad(sk("marker"), "%q: want one of %s", sr.Marker, strings.Join(figure.Markers(), ", "))
				}
			}
			for l, ln := range pn.Lines {
				lk := key(fmt.Sprintf("line[%d]", l))
				if (ln.Experiment == "") == (ln.Value == nil) {
					return bad(lk, "set experiment or value, not both")
				}
				if ln.Experiment != "" && m.byName[ln.Experiment] == nil && pn.Needs == "" {
					return bad(lk+".experiment", "no experiment %q in %s", ln.Experiment, filepath.Base(cfg.Path))
				}
				if err := checkProtocol(ln.Protocol); err != nil {
					return bad(lk+".protocol", "%v", err)
				}
			}
		}
		m.Figures = append(m.Figures, f)
	}
	return nil
}

var markerSet = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range figure.Markers() {
		m[k] = true
	}
	return m
}()

// checkEnergySeries checks a series that plots accuracy against energy
// (SeriesSpec.Energy), returning the offending key with the error.
func (m *Matrix) checkEnergySeries(sr *SeriesSpec, categorical bool) (string, error) {
	switch {
	case sr.Energy != "spike" && sr.Energy != "dense" && sr.Energy != "event":
		return "energy", fmt.Errorf("%q: want spike, dense or event", sr.Energy)
	case m.spike == nil:
		return "energy", fmt.Errorf("no [spike] section: no network is priced")
	case len(sr.Experiments) != 1:
		return "experiments", fmt.Errorf("an energy series plots one experiment (its points are the time budgets), not %d", len(sr.Experiments))
	case !slices.Contains(m.spike.Experiments, sr.Experiments[0]):
		return "experiments", fmt.Errorf("%q is not one of [spike].experiments %v", sr.Experiments[0], m.spike.Experiments)
	case sr.Protocol != "" && sr.Protocol != m.spike.Protocol:
		return "protocol", fmt.Errorf("%q: [spike] converts the %s networks", sr.Protocol, m.spike.Protocol)
	case sr.X != "" || len(sr.Xs) > 0 || len(sr.Minus) > 0 || len(sr.Labels) > 0 || categorical:
		return "energy", fmt.Errorf("an energy series takes x from the energy records: no x, xs, minus, labels or categories")
	}
	return "", nil
}

func checkProtocol(p string) error {
	switch p {
	case "", "sequential", "static", "single_pass":
		return nil
	}
	return fmt.Errorf("%q: want sequential, static or single_pass", p)
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
		lay := stages.FigLayout{Name: f.Name, Label: f.Label, Caption: f.Caption, TeXWidth: f.Width, Stamp: prof.Stamp, Profile: profile}
		if len(f.Size) == 2 {
			lay.Width, lay.Height = f.Size[0], f.Size[1]
		}
		for p, pn := range f.Panels {
			fp := stages.FigPanel{Title: pn.Title, XLabel: pn.XLabel, YLabel: pn.YLabel, XLog: pn.XLog, Legend: pn.Legend, YRange: pn.YRange, Needs: pn.Needs,
				Categories: pn.Categories, XTicks: pn.XTicks}
			for s, sr := range pn.Series {
				fs, err := r.series(p, s, &sr, &pn)
				if err != nil {
					return nil, err
				}
				fp.Series = append(fp.Series, fs)
			}
			for l, ln := range pn.Lines {
				fl := stages.FigLine{Label: ln.Label, Dashed: ln.Dashed, Color: ln.Color, Value: ln.Value, Status: "run"}
				if ln.Value != nil {
					fl.ID = fmt.Sprintf("fig/%s/line/%s", f.Name, strconv.FormatFloat(*ln.Value, 'g', -1, 64))
				} else {
					fl.ID = fmt.Sprintf("fig/%s/line/%s", f.Name, ln.Experiment)
					ref, status, err := r.ref(ln.Experiment, orSequential(ln.Protocol), "", cellid.FigureInput{Panel: p, Series: -1, Point: l, Role: 'r'}, pn.Needs)
					if err != nil {
						return nil, err
					}
					fl.Ref, fl.Status = ref, status
				}
				fp.Lines = append(fp.Lines, fl)
			}
			lay.Panels = append(lay.Panels, fp)
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
func (r *figResolver) ref(name, protocol, metric string, input cellid.FigureInput, needs string) (*stages.CellRef, string, error) {
	e := r.m.byName[name]
	switch {
	case e == nil && needs != "":
		return nil, "not run: " + needs, nil
	case e == nil:
		return nil, "", fmt.Errorf("%s: figure %s: no experiment %q", r.m.cfg.Path, r.fig, name)
	case !e.inProfile(r.profile):
		return nil, fmt.Sprintf("not run: experiment %s is not in profile %s", name, r.profile), nil
	case !slices.Contains(e.Protocols, protocol):
		return nil, fmt.Sprintf("not run: experiment %s has no protocol %s", name, protocol), nil
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
			return nil, "", fmt.Errorf("%s: figure %s: no cell %s", r.m.cfg.Path, r.fig, id)
		}
		if tag := "fig/" + r.fig; !slices.Contains(tc.Tables, tag) {
			tc.Tables = append(tc.Tables, tag)
		}
		in := input
		in.Seed = s
		r.inputs = append(r.inputs, pipeline.CellInput{Name: in.String(), Cell: tc})
	}
	ref.Seeds = strings.Join(parts, " ")
	return ref, "run", nil
}

func (r *figResolver) series(p, s int, sr *SeriesSpec, pn *PanelSpec) (stages.FigSeries, error) {
	panelNeeds := pn.Needs
	fs := stages.FigSeries{Name: sr.Name, Label: sr.Label, Errors: sr.Errors, Resamples: sr.Resamples, Marker: sr.Marker, Color: sr.Color,
		Line: sr.Line, Dashed: sr.Dashed, Seeds: sr.Seeds, Frontier: sr.Frontier, Labels: len(sr.Labels) > 0, Offset: sr.Offset}
	if fs.Errors == "" {
		fs.Errors = "sd"
	}
	if fs.Errors == "bootstrap" && fs.Resamples == 0 {
		fs.Resamples = stages.BootstrapResamples
	}
	if sr.Energy != "" {
		return r.energySeries(p, s, sr, fs)
	}
	kind, xname, _ := strings.Cut(sr.X, ":")
	switch {
	case sr.X == "" || kind == "param":
		fs.XKind = "value"
	default:
		fs.XKind, fs.XName = kind, xname
	}
	protocol := orSequential(sr.Protocol)
	for i, name := range sr.Experiments {
		pt := stages.FigPointRef{Experiment: name, NoMean: slices.Contains(sr.NoMean, name)}
		if len(sr.Labels) > 0 {
			pt.Label = sr.Labels[i]
		}
		needs := sr.Needs
		if needs == "" {
			needs = panelNeeds
		}
		in := cellid.FigureInput{Panel: p, Series: s, Point: i, Role: 'y'}
		y, status, err := r.ref(name, protocol, "", in, needs)
		if err != nil {
			return fs, err
		}
		pt.Y, pt.Status = y, status
		xkey := name
		if y != nil && len(sr.Minus) > 0 {
			in.Role = 'b'
			pt.B, pt.Status, err = r.ref(sr.Minus[i], protocol, "", in, needs)
			if err != nil {
				return fs, err
			}
		}
		if y != nil && kind == "protocol" {
			in.Role = 'x'
			pt.XC, pt.Status, err = r.ref(name, xname, "", in, needs)
			if err != nil {
				return fs, err
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
				return fs, fmt.Errorf("%s: figure %s: series %s: x: %w", r.m.cfg.Path, r.fig, sr.Name, err)
			}
			if pt.X, err = strconv.ParseFloat(v, 64); err != nil {
				return fs, fmt.Errorf("%s: figure %s: series %s: x: param %s = %s is not a number", r.m.cfg.Path, r.fig, sr.Name, xname, v)
			}
			xkey = strconv.FormatFloat(pt.X, 'g', -1, 64)
		}
		pt.ID = fmt.Sprintf("fig/%s/%s/%s", r.fig, sr.Name, xkey)
		fs.Points = append(fs.Points, pt)
	}
	return fs, nil
}

// energySeries resolves a series of accuracy against energy: one point
// per inference of the experiment's energy records (each time budget of
// [spike], or the rate network priced densely or event-driven), y and x
// read from the same energy cells.
func (r *figResolver) energySeries(p, s int, sr *SeriesSpec, fs stages.FigSeries) (stages.FigSeries, error) {
	fs.XKind = "energy"
	name := sr.Experiments[0]
	protocol := cmp.Or(sr.Protocol, r.m.spike.Protocol)
	infs := []string{sr.Energy}
	if sr.Energy == "spike" {
		infs = nil
		for _, t := range r.m.spike.Steps {
			infs = append(infs, "spike"+strconv.Itoa(t))
		}
		fs.Labels = true
	}
	for i, inf := range infs {
		pt := stages.FigPointRef{Experiment: name, ID: fmt.Sprintf("fig/%s/%s/%s", r.fig, sr.Name, inf)}
		if t, ok := strings.CutPrefix(inf, "spike"); ok {
			pt.ID, pt.Label = fmt.Sprintf("fig/%s/%s/t%s", r.fig, sr.Name, t), "T="+t
		}
		y, status, err := r.ref(name, protocol, "energy.acc@"+inf, cellid.FigureInput{Panel: p, Series: s, Point: i, Role: 'y'}, sr.Needs)
		if err != nil {
			return fs, err
		}
		pt.Y, pt.Status = y, status
		if y != nil {
			x := *y // the same cells (and inputs), read for the energy
			x.Metric = "energy.nj@" + inf
			pt.XC = &x
		}
		fs.Points = append(fs.Points, pt)
	}
	return fs, nil
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
