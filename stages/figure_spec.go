package stages

import "repro/experiments/cellid"

// A figure has one data type from declaration to drawing: pipeline.toml's
// [[figure]] decodes into FigLayout (the toml tags), package experiments
// checks it and resolves it against a profile's cells (filling the fields
// tagged toml:"-"), and the figure cell's params carry it as JSON (the json
// tags) to figureData, which draws it. A series or panel option is
// therefore one field here with both tags (json:"-" when only the
// resolver reads it), its check in experiments.loadFigures and its use in
// the drawing; nothing copies options from one shape into another.
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

// FigLayout is one figure: as declared ([[figure]]) and, once resolved
// against the experiments of a profile, the figure cell's layout.
type FigLayout struct {
	Name     string    `toml:"name" json:"name"`
	Label    string    `toml:"label" json:"label"`
	Caption  string    `toml:"caption" json:"caption,omitempty"`
	TeXWidth string    `toml:"width" json:"tex_width,omitempty"` // LaTeX width of the graphic
	Size     []float64 `toml:"size" json:"-"`                    // declared [Width, Height]
	// Width and Height are the drawing's inches (0: the renderer's
	// default), from Size.
	Width   float64    `toml:"-" json:"width,omitempty"`
	Height  float64    `toml:"-" json:"height,omitempty"`
	Stamp   string     `toml:"-" json:"stamp,omitempty"`
	Profile string     `toml:"-" json:"profile"`
	Panels  []FigPanel `toml:"panel" json:"panels"`
}

// FigPanel is one panel: its options are the same declared and resolved.
type FigPanel struct {
	Title  string    `toml:"title" json:"title,omitempty"`
	XLabel string    `toml:"xlabel" json:"xlabel,omitempty"`
	YLabel string    `toml:"ylabel" json:"ylabel,omitempty"`
	XLog   bool      `toml:"xlog" json:"xlog,omitempty"`
	Legend string    `toml:"legend" json:"legend,omitempty"`
	YRange []float64 `toml:"yrange" json:"yrange,omitempty"`
	Needs  string    `toml:"needs" json:"needs,omitempty"`
	// Categories name a categorical x axis (category i at x = i).
	Categories []string `toml:"categories" json:"categories,omitempty"`
	// XTicks are the x axis' ticks when not the data's x values.
	XTicks []float64   `toml:"xticks" json:"xticks,omitempty"`
	Series []FigSeries `toml:"series" json:"series"`
	Lines  []FigLine   `toml:"line" json:"lines,omitempty"`
}

// FigSeries is one series: what it plots (declared only: the resolver
// turns it into Points), how it is drawn (declared and carried), and its
// resolved points.
type FigSeries struct {
	Name  string `toml:"name" json:"name"`
	Label string `toml:"label" json:"label,omitempty"`

	// What is plotted; the resolver reads these.
	Experiments []string  `toml:"experiments" json:"-"`
	Protocol    string    `toml:"protocol" json:"-"`
	X           string    `toml:"x" json:"-"`
	Xs          []float64 `toml:"xs" json:"-"`
	Energy      string    `toml:"energy" json:"-"`
	Minus       []string  `toml:"minus" json:"-"`
	PointLabels []string  `toml:"labels" json:"-"`
	NoMean      []string  `toml:"no_mean" json:"-"`
	Needs       string    `toml:"needs" json:"-"`
	// Select, when set, draws each point at the best of its variants:
	// experiment <experiments[i]>-<variant> for every variant (the other
	// settings of one configuration, such as its learning rates), chosen
	// in the figure cell by the rule (best_mean: the highest seed mean of
	// the plotted accuracy; the first declared on a tie).
	Select   string   `toml:"select" json:"select,omitempty"`
	Variants []string `toml:"variants" json:"-"`

	// XKind is how x is found (value, protocol, metric or energy) and
	// XName its protocol or metric.
	XKind string `toml:"-" json:"x_kind"`
	XName string `toml:"-" json:"x_name,omitempty"`

	// How it is drawn.
	Errors    string `toml:"errors" json:"errors"`
	Resamples int    `toml:"resamples" json:"resamples,omitempty"`
	Marker    string `toml:"marker" json:"marker,omitempty"`
	Color     int    `toml:"color" json:"color,omitempty"`
	Line      bool   `toml:"line" json:"line,omitempty"`
	Dashed    bool   `toml:"dashed" json:"dashed,omitempty"`
	Seeds     bool   `toml:"seeds" json:"seeds,omitempty"`
	Frontier  bool   `toml:"frontier" json:"frontier,omitempty"`
	// ShowLabels: each point's label is written beside it.
	ShowLabels bool    `toml:"-" json:"labels,omitempty"`
	Offset     float64 `toml:"offset" json:"offset,omitempty"` // drawn x shift (side-by-side series; decades on a log axis)

	Points []FigPointRef `toml:"-" json:"points"`
}

// FigPointRef is one point to compute: its cells, per role.
type FigPointRef struct {
	ID         string   `json:"id"`
	Experiment string   `json:"experiment"`
	Label      string   `json:"label,omitempty"`
	X          float64  `json:"x,omitempty"` // XKind value
	Status     Status   `json:"status"`      // StatusRun or StatusNotRun
	NoMean     bool     `json:"no_mean,omitempty"`
	Y          *CellRef `json:"y,omitempty"`
	XC         *CellRef `json:"xc,omitempty"` // XKind protocol or energy
	B          *CellRef `json:"b,omitempty"`  // the subtrahend of a margin
	// Variants are the candidates of a point of a Select series (Y is
	// then nil: the figure cell picks one).
	Variants []*CellRef `json:"variants,omitempty"`
}

// CellRef names the train cells of one experiment and protocol and the
// figure cell's inputs that carry them (Input + seed index).
type CellRef struct {
	Experiment string `json:"experiment"`
	Protocol   string `json:"protocol"`
	Prefix     string `json:"prefix"` // train cell IDs are <prefix>/seed<s>
	Seeds      string `json:"seeds"`  // space-separated
	// Metric, when set, is what the cells are read for instead of the
	// final accuracy: an energy metric (energy.acc@spike8, energy.nj@dense)
	// of energy cells, whose IDs the prefix then gives.
	Metric string `json:"metric,omitempty"`
	// Input names the figure cell's inputs that carry the cells (with
	// the seed index set per seed).
	Input cellid.FigureInput `json:"input"`
}

// FigLine is one horizontal reference line: at an experiment's mean or at
// a value.
type FigLine struct {
	Experiment string `toml:"experiment" json:"-"`
	Protocol   string `toml:"protocol" json:"-"`

	ID     string   `toml:"-" json:"id"`
	Label  string   `toml:"label" json:"label,omitempty"`
	Dashed bool     `toml:"dashed" json:"dashed,omitempty"`
	Color  int      `toml:"color" json:"color,omitempty"`
	Value  *float64 `toml:"value" json:"value,omitempty"`
	Status Status   `toml:"-" json:"status"`
	Ref    *CellRef `toml:"-" json:"ref,omitempty"`
}
