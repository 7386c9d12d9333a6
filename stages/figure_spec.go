package stages

import (
	"repro/cellid"
	"repro/numbers"
)

// A figure cell's params carry its layout (FigLayout) as canonical JSON:
// what figureData draws, every point resolved to the cells it reads.
// Package experiments declares figures ([[figure]], experiments.FigureSpec),
// checks them, and translates one into a FigLayout against a profile's
// cells (docs/declarations.md). A drawing option is therefore a field
// here, the field it comes from in experiments.FigureSpec, and one line
// of that translation. The JSON field order is part of the figure cell's
// key: a new field goes where its omitempty keeps old keys.

// FigLayout is one figure cell's layout: a [[figure]] resolved against
// the experiments of a profile.
type FigLayout struct {
	Name     string `json:"name"`
	Label    string `json:"label"`
	Caption  string `json:"caption,omitempty"`
	TeXWidth string `json:"tex_width,omitempty"` // LaTeX width of the graphic
	// Width and Height are the drawing's inches (0: the renderer's
	// default).
	Width   float64    `json:"width,omitempty"`
	Height  float64    `json:"height,omitempty"`
	Stamp   string     `json:"stamp,omitempty"`
	Profile string     `json:"profile"`
	Panels  []FigPanel `json:"panels"`
}

// FigPanel is one panel: its options as declared, and its series and lines
// resolved.
type FigPanel struct {
	Title  string    `json:"title,omitempty"`
	XLabel string    `json:"xlabel,omitempty"`
	YLabel string    `json:"ylabel,omitempty"`
	XLog   bool      `json:"xlog,omitempty"`
	Legend string    `json:"legend,omitempty"`
	YRange []float64 `json:"yrange,omitempty"`
	Needs  string    `json:"needs,omitempty"`
	// Categories name a categorical x axis (category i at x = i).
	Categories []string `json:"categories,omitempty"`
	// XTicks are the x axis' ticks when not the data's x values.
	XTicks []float64   `json:"xticks,omitempty"`
	Series []FigSeries `json:"series"`
	Lines  []FigLine   `json:"lines,omitempty"`
}

// FigSeries is one series: how it is drawn and its resolved points.
type FigSeries struct {
	Name  string `json:"name"`
	Label string `json:"label,omitempty"`
	// Select, when set, draws each point at the best of its variants
	// (FigPointRef.Variants), chosen in the figure cell by the rule
	// (best_mean: the highest seed mean of the plotted accuracy; the first
	// declared on a tie).
	Select string `json:"select,omitempty"`

	// XKind is how x is found (value, protocol, metric or energy) and
	// XName its protocol or metric.
	XKind string `json:"x_kind"`
	XName string `json:"x_name,omitempty"`

	// How it is drawn.
	Errors    string `json:"errors"`
	Resamples int    `json:"resamples,omitempty"`
	Marker    string `json:"marker,omitempty"`
	Color     int    `json:"color,omitempty"`
	Line      bool   `json:"line,omitempty"`
	Dashed    bool   `json:"dashed,omitempty"`
	Seeds     bool   `json:"seeds,omitempty"`
	Frontier  bool   `json:"frontier,omitempty"`
	// ShowLabels: each point's label is written beside it.
	ShowLabels bool    `json:"labels,omitempty"`
	Offset     float64 `json:"offset,omitempty"` // drawn x shift (side-by-side series; decades on a log axis)

	Points []FigPointRef `json:"points"`
}

// FigPointRef is one point to compute: its cells, per role.
type FigPointRef struct {
	ID         string         `json:"id"`
	Experiment string         `json:"experiment"`
	Label      string         `json:"label,omitempty"`
	X          float64        `json:"x,omitempty"` // XKind value
	Status     numbers.Status `json:"status"`      // StatusRun or StatusNotRun
	NoMean     bool           `json:"no_mean,omitempty"`
	Y          *CellRef       `json:"y,omitempty"`
	XC         *CellRef       `json:"xc,omitempty"` // XKind protocol or energy
	B          *CellRef       `json:"b,omitempty"`  // the subtrahend of a margin
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
	ID     string         `json:"id"`
	Label  string         `json:"label,omitempty"`
	Dashed bool           `json:"dashed,omitempty"`
	Color  int            `json:"color,omitempty"`
	Value  *float64       `json:"value,omitempty"`
	Status numbers.Status `json:"status"`
	Ref    *CellRef       `json:"ref,omitempty"`
}
