package site

import (
	"repro/judge"
	"repro/numbers"
	"repro/pipeline"
)

// Input is what a site is built from.
type Input struct {
	Profile string
	// Report is the reproduction report (nil: no verdicts are shown).
	Report  *judge.Report
	Tables  []*numbers.Sidecar
	Figures []*numbers.FigureSidecar
	// Records are the seeds' train records by "<cell ID> <result digest>"
	// (a seed without one shows its digest only).
	Records map[string]*SeedRecord
	// Defaults is the default system's configuration per learner
	// (train.learner value, e.g. "local"), with its name: a card shows a
	// seed's configuration as the lines that differ from it.
	Defaults map[string]DefaultConfig
	// FigureImages is, per figure name, the path of its rendered image
	// relative to the site root (e.g. ../figures/ksweep.png); "" or
	// absent: none is shown.
	FigureImages map[string]string
	// TableDecls are the tables' declarations in pipeline.toml by name:
	// what the sidecars do not carry (caption, column titles).
	TableDecls map[string]TableDecl
	// FigureDecls are the figures' declarations in pipeline.toml by name:
	// their panels' titles and axes, and their series' labels.
	FigureDecls map[string]FigureDecl
	// RunFlags are the flags every recompute command carries (e.g.
	// "--profile smoke"); "" for the default profile.
	RunFlags string
}

// SeedRecord is what the record of one train cell says about it.
type SeedRecord struct {
	Key          string
	StageVersion int
	Revision     string
	Dirty        bool
	Host         string
	WallSecs     float64
	// Config is the cell's resolved parameters; Data the split, stream
	// and raw data digests upstream of it ("<cell> <output> sha256:<hex>").
	Config []pipeline.Param
	Data   []string
}

// DefaultConfig is the configuration numbers are compared against.
type DefaultConfig struct {
	Name   string // e.g. "full (g16_sgd_refr_s10_w512)"
	Config []pipeline.Param
}

// TableDecl is what pipeline.toml declares of a table for its reader.
type TableDecl struct {
	Caption string   // LaTeX
	Titles  []string // LaTeX, by column (the sidecar's Column - 1)
}

// FigureDecl is what pipeline.toml declares of a figure for its reader.
type FigureDecl struct {
	// Caption is LaTeX, its references to our numbers filled from the
	// figure's sidecar as the PDF's caption has them.
	Caption string
	Panels  []PanelDecl // by the sidecar's Panel - 1
	// Series are the series' labels (LaTeX) by series name.
	Series map[string]string
}

// PanelDecl is one panel's title, axis labels (LaTeX) and axes.
type PanelDecl struct {
	Title, XLabel, YLabel string
	XLog                  bool
	Categories            []string
}
