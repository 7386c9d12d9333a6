package numbers

import "slices"

// NumberRef is one rendered number, as the sidecar ("ids" output) lists it:
// where it is in the table and what it came from.
type NumberRef struct {
	ID       string `json:"id"`
	Row      int    `json:"row"`    // 1-based, data rows of the table
	Column   int    `json:"column"` // 1-based, protocol columns
	Label    string `json:"label"`
	Protocol string `json:"protocol"`
	Param    string `json:"param,omitempty"` // the row's param column (LaTeX)
	Text     string `json:"text"`            // the LaTeX cell
	// Decimals is how many decimals the cell prints (nil in sidecars
	// before render version 6).
	Decimals *int `json:"decimals,omitempty"`
	AggCell
}

// Sidecar is the "ids" output of a render cell: every number of the
// rendered table with its provenance (train cells and result digests).
type Sidecar struct {
	Table       string       `json:"table"`
	Profile     string       `json:"profile"`
	Stamp       string       `json:"stamp,omitempty"`
	Source      string       `json:"source"` // the aggregate cell
	ParamTitle  string       `json:"param_title,omitempty"`
	Numbers     []NumberRef  `json:"numbers"`
	Comparisons []Comparison `json:"comparisons"`
}

// FigurePoint is one plotted point as the sidecar lists it: where it is
// drawn and what it came from.
type FigurePoint struct {
	ID         string `json:"id"` // fig/<figure>/<series>/<x>
	Panel      int    `json:"panel"`
	Series     string `json:"series"`
	Label      string `json:"label,omitempty"`
	Experiment string `json:"experiment"`
	// Status is StatusOK, StatusNotRun or StatusMissing.
	Status Status  `json:"status"`
	X      float64 `json:"x"`
	Y      float64 `json:"y"`
	// Errors is how the bars were computed (sd, bootstrap, none); YLo/YHi
	// (XLo/XHi) are the drawn bounds.
	Errors   string  `json:"errors"`
	YLo      float64 `json:"y_lo"`
	YHi      float64 `json:"y_hi"`
	XLo      float64 `json:"x_lo,omitempty"`
	XHi      float64 `json:"x_hi,omitempty"`
	Text     string  `json:"text"` // the point as the report states it, e.g. "91.7 ± 0.4"
	Hidden   bool    `json:"hidden,omitempty"`
	Dominant *bool   `json:"non_dominated,omitempty"`
	// YCell is the plotted accuracy's seeds; XCell the x axis' (an
	// accuracy under another protocol); BCell the subtrahend of a margin,
	// whose seed-paired difference is Diff.
	YCell *AggCell    `json:"y_cell,omitempty"`
	XCell *AggCell    `json:"x_cell,omitempty"`
	BCell *AggCell    `json:"b_cell,omitempty"`
	Diff  *Comparison `json:"diff,omitempty"`
	// Selection, for a point drawn at the best of its variants, is how
	// the plotted experiment (YCell) was chosen.
	Selection *FigSelection `json:"selection,omitempty"`
}

// FigSelection records the choice of a point drawn at the best of its
// variants (FigSeries.Select).
type FigSelection struct {
	Rule       string         `json:"rule"` // best_mean
	Chosen     string         `json:"chosen"`
	Candidates []FigCandidate `json:"candidates"`
}

// FigCandidate is one variant a point was chosen from: its plotted
// accuracy's seed mean and s.d. over N seeds.
type FigCandidate struct {
	Experiment string  `json:"experiment"`
	Status     Status  `json:"status"`
	N          int     `json:"n"`
	Mean       float64 `json:"mean"`
	SD         float64 `json:"sd"`
}

// FigureSidecar is the "ids" output of a figure cell.
type FigureSidecar struct {
	Figure  string        `json:"figure"`
	Label   string        `json:"label"`
	Profile string        `json:"profile"`
	Stamp   string        `json:"stamp,omitempty"`
	Source  string        `json:"source"` // the figure cell
	Points  []FigurePoint `json:"points"`
	Lines   []FigurePoint `json:"lines,omitempty"`
}

// FigureRecord is a figure's numbers as an aggregate record of one row per
// point: its y cell, its x cell when the x axis is a measured number
// (<point>/x), and a margin point's seed-paired difference as a
// comparison (the minuend and subtrahend cells as <point>/a and
// <point>/minus, so the pairs can be rebuilt).
func FigureRecord(side *FigureSidecar) *AggregateRecord {
	rec := &AggregateRecord{Table: "fig/" + side.Figure}
	for _, pt := range append(slices.Clone(side.Points), side.Lines...) {
		var row []AggCell
		if pt.Diff != nil && pt.YCell != nil && pt.BCell != nil {
			a := *pt.YCell
			a.ID = pt.ID + "/a"
			row = append(row, a, *pt.BCell)
			c := *pt.Diff
			c.A, c.B = a.ID, pt.BCell.ID
			rec.Comparisons = append(rec.Comparisons, c)
		} else if pt.YCell != nil {
			row = append(row, *pt.YCell)
		}
		if pt.XCell != nil {
			row = append(row, *pt.XCell)
		}
		if len(row) > 0 {
			rec.Rows = append(rec.Rows, row)
		}
	}
	return rec
}
