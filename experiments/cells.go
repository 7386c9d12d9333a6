package experiments

import (
	"fmt"
	"strings"

	"repro/cellid"
	"repro/judge"
	"repro/pipeline"
	"repro/stages"
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
	// releases are the matrix's declared releases (Matrix.releases).
	releases map[string][]string
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
	dl := b.cell(cellid.Download(release), stages.Download, &stages.DownloadParams{Dataset: release, Members: b.releases[release]})
	return b.cell(cellid.Prepare(release), stages.Prepare, &stages.PrepareParams{Dataset: release}, pipeline.CellInput{Name: "download", Cell: dl})
}

func (b *builder) data(ds string) *pipeline.Cell {
	src := datasets[ds]
	prep := b.prepare(src.release)
	if !src.v1 {
		return prep
	}
	p := stages.V1.NewParams().(*stages.V1Params)
	p.Dataset = src.release
	return b.cell(cellid.V1(src.release), stages.V1, p, pipeline.CellInput{Name: "prepare", Cell: prep})
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
		return b.cell(cellid.Streams(src.release, sp, 0), stages.Streams,
			&stages.StreamsParams{Dataset: src.release, Protocol: sp, Eval: "test"}, pipeline.CellInput{Name: "prepare", Cell: prep})
	}
	params := stages.Split.NewParams().(*stages.SplitParams)
	params.Dataset, params.Seed = src.release, splitSeed
	split := b.cell(cellid.Split(src.release, splitSeed), stages.Split, params, pipeline.CellInput{Name: "prepare", Cell: prep})
	return b.cell(cellid.Streams(src.release, sp, splitSeed), stages.Streams,
		&stages.StreamsParams{Dataset: src.release, Protocol: sp, Eval: "heldout"},
		pipeline.CellInput{Name: "prepare", Cell: prep}, pipeline.CellInput{Name: "split", Cell: split})
}

// Build turns the matrix into the DAG of cells of one profile: the
// synthetic cells if the file has any, every experiment's data and train
// cells, the cells of the stages' sections on top of them (sections: the
// spike and energy cells of [spike]), every table's aggregate and render
// cells with the reproduction report on top (and the cells it reads of the
// sections with report cells: [disputed]), and every figure's cell.
func (m *Matrix) Build(profile string) (*pipeline.Graph, error) {
	var cells []*pipeline.Cell
	if m.synth != nil {
		cs, err := stages.SynthCells(m.synth)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", m.cfg.Path, err)
		}
		cells = append(cells, cs...)
	}
	if len(m.Experiments) > 0 {
		name, prof, err := m.Profile(profile)
		if err != nil {
			return nil, err
		}
		b := &builder{byID: map[string]*pipeline.Cell{}, releases: m.releases}
		if err := m.trainCells(b, name, prof); err != nil {
			return nil, err
		}
		for _, s := range sections {
			if s.cells == nil {
				continue
			}
			if err := s.cells(m, b, name, prof); err != nil {
				return nil, err
			}
		}
		cs, err := m.tableCells(b, name, prof)
		if err != nil {
			return nil, err
		}
		fs, err := m.figureCells(name, prof, b.byID)
		if err != nil {
			return nil, err
		}
		judgeFigures(cs, fs)
		cells = append(append(append(cells, b.cells...), cs...), fs...)
	}
	return pipeline.NewGraph(cells)
}

// reportCells adds the cells of the sections the reproduction cell rep
// reads (section.report), in order, and returns those that sit beside it.
func (m *Matrix) reportCells(b *builder, profile string, prof *Profile, rep *pipeline.Cell) ([]*pipeline.Cell, error) {
	var out []*pipeline.Cell
	for _, s := range sections {
		if s.report == nil {
			continue
		}
		c, err := s.report(m, b, profile, prof, rep)
		if err != nil {
			return nil, err
		}
		if c != nil {
			out = append(out, c)
		}
	}
	return out, nil
}

// trainCell returns the train cell of one experiment, protocol, evaluation
// set and seed, adding it (and its data cells) when the experiment's own
// matrix does not have it.
func (m *Matrix) trainCell(b *builder, profile string, e *Experiment, protocol string, split, seed int64) *pipeline.Cell {
	id := cellid.Train{Experiment: e.Name, Protocol: protocol, Eval: cellid.EvalOf(split), Seed: seed}.String()
	if c, ok := b.byID[id]; ok {
		return c
	}
	p := clone(e.params[profile][protocol])
	p.Seed = seed
	stream := b.stream(e.Dataset, protocol, split)
	data := b.data(e.Dataset)
	c := b.cell(id, stages.Train, p, pipeline.CellInput{Name: "data", Cell: data}, pipeline.CellInput{Name: "stream", Cell: stream})
	c.Mem = trainMem(p, e.Dataset)
	return c
}

// extraTrainCell is the train cell of a run an experiment does not make
// itself that a table with seeds of its own reads (the disputed rows'):
// one a table already reads (tab:val's second split), else a new cell that
// keeps a diverged run as a result (allow_diverged, in these new keys
// only), so that a collapse to non-finite weights counts as a collapse
// instead of failing the cell.
func (m *Matrix) extraTrainCell(b *builder, profile string, e *Experiment, protocol string, split, seed int64) *pipeline.Cell {
	id := cellid.Train{Experiment: e.Name, Protocol: protocol, Eval: cellid.EvalOf(split), Seed: seed}.String()
	if c, ok := b.byID[id]; ok {
		return c
	}
	p := clone(e.params[profile][protocol])
	p.Seed = seed
	p.AllowDiverged = true
	c := b.cell(id, stages.Train, p, pipeline.CellInput{Name: "data", Cell: b.data(e.Dataset)}, pipeline.CellInput{Name: "stream", Cell: b.stream(e.Dataset, protocol, split)})
	c.Mem = trainMem(p, e.Dataset)
	return c
}

// trainCells adds the cells of every experiment of the profile: its data
// cells, and one train cell per protocol, evaluation split and seed.
func (m *Matrix) trainCells(b *builder, profile string, prof *Profile) error {
	for _, e := range m.Experiments {
		if !e.inProfile(profile) {
			continue
		}
		for _, protocol := range e.Protocols {
			for _, split := range e.splits(prof) {
				for _, seed := range e.seeds(prof) {
					m.trainCell(b, profile, e, protocol, split, seed)
				}
			}
		}
	}
	return nil
}

// judgeFigures makes every figure cell an input of the reproduction cell
// (among cs), so that the figures' points are judged like the tables'
// numbers.
func judgeFigures(cs, figs []*pipeline.Cell) {
	for _, c := range cs {
		rp, ok := c.Params.(*judge.Params)
		if !ok || c.ID != cellid.Reproduction {
			continue
		}
		for _, f := range figs {
			name := "fig:" + strings.TrimPrefix(f.ID, "figure/")
			c.Inputs = append(c.Inputs, pipeline.CellInput{Name: name, Cell: f})
			rp.Figures = append(rp.Figures, name)
		}
	}
}
