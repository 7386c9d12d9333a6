package experiments

import (
	"cmp"
	"encoding/json"
	"errors"
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

// loadFigures decodes and checks every [[figure]] entry: its layout, and
// that every experiment it names exists (unless its series or panel says
// what it needs). Each entity has its own check (checkFigure, checkPanel,
// checkSeries, checkLine), which names the key of the field at fault;
// loadFigures puts that key's file:line on the error.
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
		f := &stages.FigLayout{}
		if err := cfg.DecodeAt(prim, f, at); err != nil {
			return err
		}
		if err := m.checkFigure(f, seen); err != nil {
			var fe *fieldError
			if !errors.As(err, &fe) {
				return err
			}
			line := cfg.KeyLine(at + "." + fe.key)
			if line == 0 {
				line = cfg.KeyLine(at)
			}
			return cfg.ErrAt(line, fmt.Sprintf("figure %s.%s", f.Name, fe.key), "%s", fe.msg)
		}
		seen[f.Name] = true
		m.Figures = append(m.Figures, f)
	}
	return nil
}

// fieldError is a bad field of a figure: its key below the figure entry
// (panel[0].series[1].xs) and what is wrong.
type fieldError struct{ key, msg string }

func (e *fieldError) Error() string { return e.key + ": " + e.msg }

// badField is the error of field key ("" for the entity as a whole).
func badField(key, format string, args ...any) error {
	return &fieldError{key, fmt.Sprintf(format, args...)}
}

// under prefixes the key of a field error with the entity it is in
// ("panel[0]"); other errors pass unchanged.
func under(prefix string, err error) error {
	if fe, ok := err.(*fieldError); ok && fe.key == "" {
		return &fieldError{prefix, fe.msg}
	} else if ok {
		return &fieldError{prefix + "." + fe.key, fe.msg}
	}
	return err
}

// The values some fields of a figure take, each the list its check and
// its error message are built from.
var (
	// seriesErrors are FigSeries.Errors' values ("" is sd).
	seriesErrors = []string{"sd", "bootstrap", "none"}
	// energyKinds are FigSeries.Energy's values (stages/energy.go).
	energyKinds = []string{"spike", "dense", "event"}
)

// oneOf is a list of choices for a message: "a, b or c".
func oneOf(choices []string) string {
	if len(choices) < 2 {
		return strings.Join(choices, "")
	}
	return strings.Join(choices[:len(choices)-1], ", ") + " or " + choices[len(choices)-1]
}

// checkFigure checks one figure (seen holds the names of those before it)
// and its panels.
func (m *Matrix) checkFigure(f *stages.FigLayout, seen map[string]bool) error {
	switch {
	case !tableNameRe(f.Name):
		return badField("name", "%q: want lower-case letters, digits, - and _", f.Name)
	case seen[f.Name]:
		return badField("name", "duplicate figure")
	case len(f.Panels) == 0:
		return badField("panel", "no panels")
	case len(f.Size) != 0 && (len(f.Size) != 2 || f.Size[0] <= 0 || f.Size[1] <= 0):
		return badField("size", "want [width, height] in inches, both positive")
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
func (m *Matrix) checkPanel(pn *stages.FigPanel, names map[string]bool) error {
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

// checkSeries checks one series of panel pn: its name, experiments, x
// axis and how it is drawn.
func (m *Matrix) checkSeries(sr *stages.FigSeries, pn *stages.FigPanel, names map[string]bool) error {
	switch {
	case !tableNameRe(sr.Name) || sr.Name == "line":
		return badField("name", "%q: want lower-case letters, digits, - and _ (not \"line\")", sr.Name)
	case names[sr.Name]:
		return badField("name", "%q: duplicate series in the figure", sr.Name)
	case len(sr.Experiments) == 0:
		return badField("experiments", "missing or empty")
	}
	names[sr.Name] = true
	if k, err := checkSelect(sr); err != nil {
		return badField(k, "%v", err)
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
	case len(sr.PointLabels) != 0 && len(sr.PointLabels) != len(sr.Experiments):
		return badField("labels", "%d labels for %d experiments", len(sr.PointLabels), len(sr.Experiments))
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
	case sr.Marker != "" && !markerSet[sr.Marker]:
		return badField("marker", "%q: want one of %s", sr.Marker, strings.Join(figure.Markers(), ", "))
	}
	return nil
}

// checkSeriesX checks where a series places its points: by energy, by xs,
// or by x (a train param, a protocol or the replay count); on a panel with
// categories (their number), by xs at category positions.
func (m *Matrix) checkSeriesX(sr *stages.FigSeries, categories int) error {
	kind, xname, _ := strings.Cut(sr.X, ":")
	switch {
	case sr.Energy != "":
		if k, err := m.checkEnergySeries(sr, categories > 0); err != nil {
			return badField(k, "%v", err)
		}
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
	case sr.X == "metric:replay_updates":
	default:
		return badField("x", "%q: want param:<train param>, protocol:<protocol> or metric:replay_updates", sr.X)
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

// prefixed is each of list with prefix.
func prefixed(prefix string, list []string) []string {
	out := make([]string, len(list))
	for i, s := range list {
		out[i] = prefix + s
	}
	return out
}

// checkLine checks one horizontal line of panel pn.
func (m *Matrix) checkLine(ln *stages.FigLine, pn *stages.FigPanel) error {
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

var markerSet = func() map[string]bool {
	m := map[string]bool{}
	for _, k := range figure.Markers() {
		m[k] = true
	}
	return m
}()

// checkEnergySeries checks a series that plots accuracy against energy
// (FigSeries.Energy), returning the offending key with the error.
func (m *Matrix) checkEnergySeries(sr *stages.FigSeries, categorical bool) (string, error) {
	switch {
	case !slices.Contains(energyKinds, sr.Energy):
		return "energy", fmt.Errorf("%q: want %s", sr.Energy, oneOf(energyKinds))
	case m.spike == nil:
		return "energy", fmt.Errorf("no [spike] section: no network is priced")
	case len(sr.Experiments) != 1:
		return "experiments", fmt.Errorf("an energy series plots one experiment (its points are the time budgets), not %d", len(sr.Experiments))
	case !slices.Contains(m.spike.Experiments, sr.Experiments[0]):
		return "experiments", fmt.Errorf("%q is not one of [spike].experiments %v", sr.Experiments[0], m.spike.Experiments)
	case sr.Protocol != "" && sr.Protocol != m.spike.Protocol:
		return "protocol", fmt.Errorf("%q: [spike] converts the %s networks", sr.Protocol, m.spike.Protocol)
	case sr.X != "" || len(sr.Xs) > 0 || len(sr.Minus) > 0 || len(sr.PointLabels) > 0 || categorical:
		return "energy", fmt.Errorf("an energy series takes x from the energy records: no x, xs, minus, labels or categories")
	}
	return "", nil
}

// checkSelect checks a series whose points are each the best of their
// variants (FigSeries.Select), returning the offending key with the
// error. Such a series places its points by xs: an x read from the cells
// (a param, another protocol, energy) or a margin would depend on which
// variant wins.
func checkSelect(sr *stages.FigSeries) (string, error) {
	switch {
	case sr.Select == "" && len(sr.Variants) > 0:
		return "variants", fmt.Errorf("variants without select = \"best_mean\"")
	case sr.Select == "":
		return "", nil
	case sr.Select != "best_mean":
		return "select", fmt.Errorf("%q: want best_mean", sr.Select)
	case len(sr.Variants) < 2:
		return "variants", fmt.Errorf("want two or more variants to select from, not %d", len(sr.Variants))
	case sr.X != "" || sr.Energy != "" || len(sr.Minus) > 0:
		return "select", fmt.Errorf("a selected series places its points by xs: no x, energy or minus")
	}
	for i, v := range sr.Variants {
		if !tableNameRe(v) || slices.Contains(sr.Variants[:i], v) {
			return "variants", fmt.Errorf("%q: want distinct names of lower-case letters, digits, - and _", v)
		}
	}
	return "", nil
}

// seriesExperiments lists the experiments a series' points read: its
// experiments, or each one's variants when it selects among them.
func seriesExperiments(sr *stages.FigSeries) []string {
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
		// The declaration is shared by every profile's build: resolve a
		// copy of each panel, series and line.
		lay := *f
		lay.Stamp, lay.Profile = prof.Stamp, profile
		if len(f.Size) == 2 {
			lay.Width, lay.Height = f.Size[0], f.Size[1]
		}
		lay.Panels = slices.Clone(f.Panels)
		for p := range lay.Panels {
			pn := &lay.Panels[p]
			pn.Series, pn.Lines = slices.Clone(pn.Series), slices.Clone(pn.Lines)
			for s := range pn.Series {
				if err := r.series(p, s, &pn.Series[s], pn); err != nil {
					return nil, err
				}
			}
			for l := range pn.Lines {
				ln := &pn.Lines[l]
				ln.Status = stages.Status{Kind: stages.StatusRun}
				if ln.Value != nil {
					ln.ID = fmt.Sprintf("fig/%s/line/%s", f.Name, strconv.FormatFloat(*ln.Value, 'g', -1, 64))
					continue
				}
				ln.ID = fmt.Sprintf("fig/%s/line/%s", f.Name, ln.Experiment)
				ref, status, err := r.ref(ln.Experiment, orSequential(ln.Protocol), "", cellid.FigureInput{Panel: p, Series: -1, Point: l, Role: 'r'}, pn.Needs)
				if err != nil {
					return nil, err
				}
				ln.Ref, ln.Status = ref, status
			}
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
func (r *figResolver) ref(name, protocol, metric string, input cellid.FigureInput, needs string) (*stages.CellRef, stages.Status, error) {
	e := r.m.byName[name]
	switch {
	case e == nil && needs != "":
		return nil, stages.NotRun(needs), nil
	case e == nil:
		return nil, stages.Status{}, fmt.Errorf("%s: figure %s: no experiment %q", r.m.cfg.Path, r.fig, name)
	case !e.inProfile(r.profile):
		return nil, stages.NotRun(fmt.Sprintf("experiment %s is not in profile %s", name, r.profile)), nil
	case !slices.Contains(e.Protocols, protocol):
		return nil, stages.NotRun(fmt.Sprintf("experiment %s has no protocol %s", name, protocol)), nil
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
			return nil, stages.Status{}, fmt.Errorf("%s: figure %s: no cell %s", r.m.cfg.Path, r.fig, id)
		}
		if tag := "fig/" + r.fig; !slices.Contains(tc.Tables, tag) {
			tc.Tables = append(tc.Tables, tag)
		}
		in := input
		in.Seed = s
		r.inputs = append(r.inputs, pipeline.CellInput{Name: in.String(), Cell: tc})
	}
	ref.Seeds = strings.Join(parts, " ")
	return ref, stages.Status{Kind: stages.StatusRun}, nil
}

// series resolves one series in place: its defaults, x kind and points.
func (r *figResolver) series(p, s int, sr *stages.FigSeries, pn *stages.FigPanel) error {
	sr.Errors = cmp.Or(sr.Errors, "sd")
	if sr.Errors == "bootstrap" && sr.Resamples == 0 {
		sr.Resamples = stages.BootstrapResamples
	}
	sr.ShowLabels = len(sr.PointLabels) > 0
	if sr.Energy != "" {
		return r.energySeries(p, s, sr)
	}
	kind, xname, _ := strings.Cut(sr.X, ":")
	switch {
	case sr.X == "" || kind == "param":
		sr.XKind = "value"
	default:
		sr.XKind, sr.XName = kind, xname
	}
	protocol := orSequential(sr.Protocol)
	needs := cmp.Or(sr.Needs, pn.Needs)
	for i, name := range sr.Experiments {
		pt := stages.FigPointRef{Experiment: name, NoMean: slices.Contains(sr.NoMean, name)}
		if len(sr.PointLabels) > 0 {
			pt.Label = sr.PointLabels[i]
		}
		in := cellid.FigureInput{Panel: p, Series: s, Point: i, Role: 'y'}
		var y *stages.CellRef
		var status stages.Status
		var err error
		if sr.Select != "" {
			pt.Variants, status, err = r.variants(name, protocol, sr.Variants, in, needs)
		} else {
			y, status, err = r.ref(name, protocol, "", in, needs)
		}
		if err != nil {
			return err
		}
		pt.Y, pt.Status = y, status
		xkey := name
		if y != nil && len(sr.Minus) > 0 {
			in.Role = 'b'
			pt.B, pt.Status, err = r.ref(sr.Minus[i], protocol, "", in, needs)
			if err != nil {
				return err
			}
		}
		if y != nil && kind == "protocol" {
			in.Role = 'x'
			pt.XC, pt.Status, err = r.ref(name, xname, "", in, needs)
			if err != nil {
				return err
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
				return fmt.Errorf("%s: figure %s: series %s: x: %w", r.m.cfg.Path, r.fig, sr.Name, err)
			}
			if pt.X, err = strconv.ParseFloat(v, 64); err != nil {
				return fmt.Errorf("%s: figure %s: series %s: x: param %s = %s is not a number", r.m.cfg.Path, r.fig, sr.Name, xname, v)
			}
			xkey = strconv.FormatFloat(pt.X, 'g', -1, 64)
		}
		pt.ID = fmt.Sprintf("fig/%s/%s/%s", r.fig, sr.Name, xkey)
		sr.Points = append(sr.Points, pt)
	}
	return nil
}

// variants resolves the candidates of one point of a selected series:
// experiment name-<variant> for each variant, its inputs numbered by
// variant (1-based). The point runs when every candidate does.
func (r *figResolver) variants(name, protocol string, variants []string, in cellid.FigureInput, needs string) ([]*stages.CellRef, stages.Status, error) {
	var refs []*stages.CellRef
	for v, suffix := range variants {
		in.Variant = v + 1
		ref, status, err := r.ref(name+"-"+suffix, protocol, "", in, needs)
		if err != nil || ref == nil {
			return nil, status, err
		}
		refs = append(refs, ref)
	}
	return refs, stages.Status{Kind: stages.StatusRun}, nil
}

// energySeries resolves a series of accuracy against energy: one point
// per inference of the experiment's energy records (each time budget of
// [spike], or the rate network priced densely or event-driven), y and x
// read from the same energy cells.
func (r *figResolver) energySeries(p, s int, sr *stages.FigSeries) error {
	sr.XKind = "energy"
	name := sr.Experiments[0]
	protocol := cmp.Or(sr.Protocol, r.m.spike.Protocol)
	infs := []string{sr.Energy}
	if sr.Energy == "spike" {
		infs = nil
		for _, t := range r.m.spike.Steps {
			infs = append(infs, "spike"+strconv.Itoa(t))
		}
		sr.ShowLabels = true
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
		sr.Points = append(sr.Points, pt)
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
