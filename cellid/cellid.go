// Package cellid names the cells of the paper's DAG and the inputs of its
// aggregate and figure cells, and parses back the names other packages
// read (ParseEval, ParseInput, FigureOf, TableOf), so that no other package
// formats or splits an ID by hand. The names are part of the store's refs
// and of every sidecar, so they never change for an existing cell.
package cellid

import (
	"fmt"
	"strconv"
	"strings"
)

// Train identifies one training run: train/<experiment>/<protocol>/<eval>/seed<seed>.
type Train struct {
	Experiment string
	Protocol   string
	// Eval is the evaluation set: "split<seed>" (a held-out tenth) or
	// "test" (the official test set, the development set); see EvalOf.
	Eval string
	Seed int64
}

// Prefix is the ID without its seed: what every seed of one table cell
// shares.
func (t Train) Prefix() string {
	return "train/" + t.Experiment + "/" + t.Protocol + "/" + t.Eval
}

// String is the cell ID.
func (t Train) String() string { return WithSeed(t.Prefix(), t.Seed) }

// ParseTrain is the inverse of Train.String; false when id is not a train
// cell's ID.
func ParseTrain(id string) (Train, bool) {
	parts := strings.Split(id, "/")
	if len(parts) != 5 || parts[0] != "train" {
		return Train{}, false
	}
	seed, err := strconv.ParseInt(strings.TrimPrefix(parts[4], "seed"), 10, 64)
	t := Train{Experiment: parts[1], Protocol: parts[2], Eval: parts[3], Seed: seed}
	if err != nil || t.String() != id {
		return Train{}, false
	}
	return t, true
}

// WithSeed is the train cell ID of one seed under a Prefix.
func WithSeed(prefix string, seed int64) string {
	return prefix + "/seed" + strconv.FormatInt(seed, 10)
}

// EvalOf names an evaluation set: split seed 0 is the official test set
// ("test"), any other the held-out tenth of that split ("split1234").
func EvalOf(splitSeed int64) string {
	if splitSeed == 0 {
		return "test"
	}
	return "split" + strconv.FormatInt(splitSeed, 10)
}

// ParseEval is the inverse of EvalOf (split seeds are positive).
func ParseEval(s string) (int64, error) {
	if s == "test" {
		return 0, nil
	}
	n, err := strconv.ParseInt(strings.TrimPrefix(s, "split"), 10, 64)
	if err != nil || !strings.HasPrefix(s, "split") || n <= 0 || EvalOf(n) != s {
		return 0, fmt.Errorf("evaluation set %q: want test or split<seed>", s)
	}
	return n, nil
}

// Download, Prepare and V1 name the per-release data cells.
func Download(release string) string { return "download/" + release }
func Prepare(release string) string  { return "prepare/" + release }
func V1(release string) string       { return "v1/" + release }

// Split names the held-out split of a release by its seed.
func Split(release string, seed int64) string {
	return fmt.Sprintf("split/%s-%d", release, seed)
}

// Streams names the streams cell of a release, stream protocol
// ("sequential" or "static") and evaluation set (EvalOf).
func Streams(release, protocol string, splitSeed int64) string {
	return fmt.Sprintf("streams/%s-%s-%s", release, protocol, EvalOf(splitSeed))
}

// Aggregate and Render name a table's cells; Reproduction is the report.
func Aggregate(table string) string { return "aggregate/" + table }
func Render(table string) string    { return "render/" + table }

const Reproduction = "reproduction"

// Figure names a figure's cell.
func Figure(name string) string { return "figure/" + name }

// FigureOf is the inverse of Figure.
func FigureOf(id string) (string, bool) {
	f, ok := strings.CutPrefix(id, "figure/")
	return f, ok && f != ""
}

// FigureInput is one input of a figure cell: seed index Seed of the cells
// in role Role (y: the plotted accuracy, x: the accuracy on the x axis, b:
// the subtrahend of a margin) of point Point of series Series of panel
// Panel; a reference line's cells are role r of its index in Point, Series
// -1. Variant, when positive, is the 1-based candidate of a point drawn
// at the best of its variants (role y).
type FigureInput struct {
	Panel, Series, Point int
	Variant              int `json:",omitempty"` // (zero: older layouts keep their bytes)
	Role                 byte
	Seed                 int
}

// String is the input name: p<panel>s<series>i<point><role><seed>,
// p<panel>s<series>i<point>v<variant><role><seed> for a variant, or
// p<panel>l<line>r<seed> for a reference line.
func (in FigureInput) String() string {
	switch {
	case in.Series < 0:
		return fmt.Sprintf("p%dl%dr%d", in.Panel, in.Point, in.Seed)
	case in.Variant > 0:
		return fmt.Sprintf("p%ds%di%dv%d%c%d", in.Panel, in.Series, in.Point, in.Variant, in.Role, in.Seed)
	}
	return fmt.Sprintf("p%ds%di%d%c%d", in.Panel, in.Series, in.Point, in.Role, in.Seed)
}

// TableOf is the inverse of Aggregate and Render: the table a cell ID
// names, and whether it is one of those.
func TableOf(id string) (string, bool) {
	for _, p := range []string{"aggregate/", "render/"} {
		if t, ok := strings.CutPrefix(id, p); ok && t != "" {
			return t, true
		}
	}
	return "", false
}

// Input is one input of an aggregate cell: seed index Seed of the table
// cell at row Row, column Col (all 0-based).
type Input struct{ Row, Col, Seed int }

// String is the input name, rXXcYsZ.
func (in Input) String() string { return fmt.Sprintf("r%02dc%ds%d", in.Row, in.Col, in.Seed) }

// ParseInput is the inverse of Input.String.
func ParseInput(s string) (Input, error) {
	var in Input
	if _, err := fmt.Sscanf(s, "r%02dc%ds%d", &in.Row, &in.Col, &in.Seed); err != nil || in.String() != s {
		return Input{}, fmt.Errorf("aggregate input %q: want rXXcYsZ", s)
	}
	return in, nil
}

// Spike identifies one rate-to-spike conversion of a train cell's network
// at a time budget: spike/<experiment>/<protocol>/<eval>/seed<seed>/t<steps>.
type Spike struct {
	Train Train
	Steps int
}

// String is the cell ID.
func (s Spike) String() string {
	return "spike" + strings.TrimPrefix(s.Train.String(), "train") + "/t" + strconv.Itoa(s.Steps)
}

// Energy names the energy cell of a train cell's network:
// energy/<experiment>/<protocol>/<eval>/seed<seed>.
func Energy(t Train) string { return "energy" + strings.TrimPrefix(t.String(), "train") }

// EnergyPrefix is the energy cells' counterpart of a Train Prefix: what the
// energy cells of every seed of one network share.
func EnergyPrefix(trainPrefix string) string {
	return "energy" + strings.TrimPrefix(trainPrefix, "train")
}
