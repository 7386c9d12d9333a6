package stages

import (
	"fmt"
	"maps"
	"slices"

	"github.com/BurntSushi/toml"

	"repro/core"
	"repro/core/backprop"
	"repro/pipeline"
)

// dataSource says which cells produce a dataset name's inputs.
type dataSource struct {
	release string // download/prepare dataset: mnist, cifar10, cifar100
	v1      bool   // the V1 feature front-end on top of prepare
}

var datasets = map[string]dataSource{
	"mnist":     {release: "mnist"},
	"cifar10":   {release: "cifar10"},
	"cifar10f":  {release: "cifar10", v1: true},
	"cifar100":  {release: "cifar100"},
	"cifar100f": {release: "cifar100", v1: true},
}

// builder memoises the shared cells (data, splits, streams) of a graph.
type builder struct {
	cells []*pipeline.Cell
	byID  map[string]*pipeline.Cell
}

func (b *builder) cell(id string, st *pipeline.Stage, params any, inputs ...pipeline.CellInput) *pipeline.Cell {
	if c, ok := b.byID[id]; ok {
		return c
	}
	c := &pipeline.Cell{ID: id, Stage: st, Params: params, Inputs: inputs}
	b.byID[id] = c
	b.cells = append(b.cells, c)
	return c
}

func (b *builder) prepare(release string) *pipeline.Cell {
	dl := b.cell("download/"+release, Download, &DownloadParams{Dataset: release})
	return b.cell("prepare/"+release, Prepare, &PrepareParams{Dataset: release}, pipeline.CellInput{Name: "download", Cell: dl})
}

func (b *builder) data(ds string) *pipeline.Cell {
	src := datasets[ds]
	prep := b.prepare(src.release)
	if !src.v1 {
		return prep
	}
	p := V1.NewParams().(*V1Params)
	p.Dataset = src.release
	return b.cell("v1/"+src.release, V1, p, pipeline.CellInput{Name: "prepare", Cell: prep})
}

// stream returns the streams cell of a dataset, protocol and evaluation set
// (splitSeed 0 means the official test set).
func (b *builder) stream(ds, protocol string, splitSeed int64) *pipeline.Cell {
	src := datasets[ds]
	prep := b.prepare(src.release)
	sp := "sequential"
	if protocol == "static" {
		sp = "static"
	}
	if splitSeed == 0 {
		return b.cell(fmt.Sprintf("streams/%s-%s-test", src.release, sp), Streams,
			&StreamsParams{Dataset: src.release, Protocol: sp, Eval: "test"}, pipeline.CellInput{Name: "prepare", Cell: prep})
	}
	params := Split.NewParams().(*SplitParams)
	params.Dataset, params.Seed = src.release, splitSeed
	split := b.cell(fmt.Sprintf("split/%s-%d", src.release, splitSeed), Split, params, pipeline.CellInput{Name: "prepare", Cell: prep})
	return b.cell(fmt.Sprintf("streams/%s-%s-split%d", src.release, sp, splitSeed), Streams,
		&StreamsParams{Dataset: src.release, Protocol: sp, Eval: "heldout"},
		pipeline.CellInput{Name: "prepare", Cell: prep}, pipeline.CellInput{Name: "split", Cell: split})
}

// paperCells builds the cells of every experiment of the profile: its data
// cells, and one train cell per protocol, evaluation split and seed.
func paperCells(cfg *pipeline.Config, profile string) ([]*pipeline.Cell, error) {
	if len(cfg.Experiments) == 0 {
		return nil, nil
	}
	_, prof, err := cfg.Profile(profile)
	if err != nil {
		return nil, err
	}
	// Decode every profile's overrides, used or not, so that a typo in any
	// of them is reported whatever profile runs.
	for _, name := range slices.Sorted(maps.Keys(cfg.Profiles)) {
		pr := cfg.Profiles[name]
		lc, bc, tp := core.DefaultLocalConfig(), backprop.DefaultConfig(), TrainParams{}
		for _, d := range []struct {
			p   toml.Primitive
			dst any
		}{{pr.Local, &lc}, {pr.BP, &bc}, {pr.Train, &tp}} {
			if err := cfg.Decode(d.p, d.dst); err != nil {
				return nil, err
			}
		}
	}
	b := &builder{byID: map[string]*pipeline.Cell{}}
	for _, e := range cfg.Experiments {
		if len(e.Profiles) > 0 && !slices.Contains(e.Profiles, profile) {
			// Not in this profile; still decoded, to report typos.
			for _, protocol := range e.Protocols {
				if _, err := trainParams(cfg, prof, e, protocol); err != nil {
					return nil, err
				}
			}
			continue
		}
		if _, ok := datasets[e.Dataset]; !ok {
			return nil, fmt.Errorf("%s:%d: experiment %s.dataset: %q is not one of mnist, cifar10, cifar10f, cifar100, cifar100f", cfg.Path, e.Line(), e.Name, e.Dataset)
		}
		seeds := prof.Seeds
		if e.MaxSeeds > 0 && e.MaxSeeds < len(seeds) {
			seeds = seeds[:e.MaxSeeds]
		}
		splits := prof.SplitSeeds
		evalName := func(s int64) string { return fmt.Sprintf("split%d", s) }
		if e.Eval == "test" {
			splits = []int64{0}
			evalName = func(int64) string { return "test" }
		}
		for _, protocol := range e.Protocols {
			base, err := trainParams(cfg, prof, e, protocol)
			if err != nil {
				return nil, err
			}
			for _, split := range splits {
				stream := b.stream(e.Dataset, protocol, split)
				data := b.data(e.Dataset)
				for _, seed := range seeds {
					p := base.clone()
					p.Seed = seed
					id := fmt.Sprintf("train/%s/%s/%s/seed%d", e.Name, protocol, evalName(split), seed)
					if _, dup := b.byID[id]; dup {
						return nil, fmt.Errorf("%s:%d: experiment %s: cell %s defined twice", cfg.Path, e.Line(), e.Name, id)
					}
					b.cell(id, Train, p, pipeline.CellInput{Name: "data", Cell: data}, pipeline.CellInput{Name: "stream", Cell: stream})
				}
			}
		}
	}
	return b.cells, nil
}

// trainParams resolves an experiment's train params for one protocol:
// stage defaults, then the experiment's learner table, then the protocol
// (single pass: one epoch; static: one task of every class), then the
// profile's overrides.
func trainParams(cfg *pipeline.Config, prof *pipeline.Profile, e *pipeline.Experiment, protocol string) (*TrainParams, error) {
	p := Train.NewParams().(*TrainParams)
	p.Learner, p.Protocol = e.Learner, protocol
	switch e.Learner {
	case "local":
		lc := core.DefaultLocalConfig()
		if e.Preset != "" {
			var err error
			if lc, err = core.LocalPreset(e.Preset); err != nil {
				return nil, fmt.Errorf("%s:%d: experiment %s.preset: %w", cfg.Path, e.Line(), e.Name, err)
			}
		}
		if err := cfg.Decode(e.Local, &lc); err != nil {
			return nil, err
		}
		if protocol == "single_pass" {
			lc.Epochs = 1
		}
		lc.Static = protocol == "static"
		if err := cfg.Decode(prof.Local, &lc); err != nil {
			return nil, err
		}
		p.Local = &lc
	case "bp":
		bc := backprop.DefaultConfig()
		if e.Preset != "" {
			var ok bool
			if bc, ok = backprop.Preset(e.Preset); !ok {
				return nil, fmt.Errorf("%s:%d: experiment %s.preset: unknown backprop config %q", cfg.Path, e.Line(), e.Name, e.Preset)
			}
		}
		if err := cfg.Decode(e.BP, &bc); err != nil {
			return nil, err
		}
		if protocol == "single_pass" {
			bc.Epochs = 1
		}
		if err := cfg.Decode(prof.BP, &bc); err != nil {
			return nil, err
		}
		p.BP = &bc
	}
	if err := cfg.Decode(prof.Train, p); err != nil {
		return nil, err
	}
	return p, nil
}

// clone copies p deeply enough that per-seed cells share no mutable state.
func (p *TrainParams) clone() *TrainParams {
	c := *p
	if p.Local != nil {
		l := *p.Local
		c.Local = &l
	}
	if p.BP != nil {
		bb := *p.BP
		c.BP = &bb
	}
	return &c
}
