package experiments

import (
	"cmp"
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"repro/cellid"
	"repro/internal/dataset"
	"repro/internal/refruns"
	"repro/judge"
	"repro/pipeline"
)

// Disputed is the [disputed] section: published rows settled by more seeds
// on both codes (issue 43; docs/disputed.md). Its seeds beyond an
// experiment's own are new train cells; the paper's tables keep the seeds
// they have. Ours are the cells of one more table, built from the rows
// (Matrix.disputedTable) and wired by the tables' own path (tableOf) into
// one aggregate cell (aggregate/disputed); the authors' code's runs are
// read from ReferenceRuns, and the reproduction report judges each row
// three ways (package judge).
//
//	[disputed]
//	profiles = ["paper"]               # the profiles that run it
//	seeds = [0, 1, ..., 11]            # ours, per row
//	reference_runs = "paper/reference-runs"   # relative to pipeline.toml
//	[[disputed.row]]
//	id = "ablation/mirror/sequential"  # the published number it settles
//	label = "mirror control"
//	experiment = "mirror"
//	protocol = "sequential"
//	eval = "split4321"                 # optional: another held-out split than the
//	                                   # experiment's first (as a table column's eval)
//	minus = "..."                      # optional: experiment minus this one, paired by seed
//	reference = "g17_mirror_s10"       # optional: the authors' config (its .tsv)
//	reference_script = "run_seq"       # the authors' script that runs it: run_seq
//	                                   # (--val, scored on split 1234, the default;
//	                                   # with eval: --val --val-seed <seed>, its runs in
//	                                   # <reference>.<eval>.tsv),
//	                                   # run_seq_test (no --val: the official test set)
//	                                   # or run_mnist (the substrate ladder, the test set)
//	minus_reference = "..."            # with minus: the authors' config of the subtrahend
//	reference_note = "..."             # without reference: why not
type Disputed struct {
	Profiles      []string      `toml:"profiles"`
	Seeds         []int64       `toml:"seeds"`
	ReferenceRuns string        `toml:"reference_runs"`
	Rows          []DisputedRow `toml:"row"`

	refs map[string]*refruns.File
}

// DisputedRow is one [[disputed.row]].
type DisputedRow struct {
	ID              string `toml:"id"`
	Label           string `toml:"label"`
	Experiment      string `toml:"experiment"`
	Minus           string `toml:"minus"`
	Protocol        string `toml:"protocol"`
	Eval            string `toml:"eval"`
	Reference       string `toml:"reference"`
	ReferenceScript string `toml:"reference_script"`
	MinusReference  string `toml:"minus_reference"`
	ReferenceNote   string `toml:"reference_note"`
}

// loadDisputed decodes and checks [disputed] and reads the reference runs
// its rows name. It runs after the experiments are loaded.
func (m *Matrix) loadDisputed() error {
	cfg := m.cfg
	sec, ok := cfg.Section("disputed")
	if !ok {
		return nil
	}
	d := &Disputed{refs: map[string]*refruns.File{}}
	if err := cfg.DecodeAt(sec, d, "disputed"); err != nil {
		return err
	}
	bad := func(key, format string, args ...any) error {
		l := cfg.KeyLine(key)
		if l == 0 {
			l = cfg.KeyLine("disputed")
		}
		return cfg.ErrAt(l, key, format, args...)
	}
	for _, p := range d.Profiles {
		if _, ok := m.Profiles[p]; !ok {
			return bad("disputed.profiles", "no profile %q", p)
		}
	}
	if len(d.Seeds) == 0 {
		return bad("disputed.seeds", "missing or empty")
	}
	if err := checkSeeds(cfg, "disputed.seeds", d.Seeds, 0, "a run seed must be >= 0"); err != nil {
		return err
	}
	if d.ReferenceRuns == "" {
		return bad("disputed.reference_runs", "missing")
	}
	dir := d.ReferenceRuns
	if !filepath.IsAbs(dir) {
		dir = filepath.Join(cfg.Dir, dir)
	}
	ids := map[string]bool{}
	for i, r := range d.Rows {
		at := fmt.Sprintf("disputed.row[%d]", i)
		switch {
		case r.ID == "":
			return bad(at+".id", "missing")
		case ids[r.ID]:
			return bad(at+".id", "%q twice", r.ID)
		case r.Label == "":
			return bad(at+".label", "missing")
		}
		ids[r.ID] = true
		if r.Eval != "" {
			if split, err := cellid.ParseEval(r.Eval); err != nil || split == 0 {
				return bad(at+".eval", "%q: want split<seed>, a held-out split (a row on the test set is an experiment with eval = \"test\")", r.Eval)
			}
		}
		for _, x := range []struct{ key, name string }{{"experiment", r.Experiment}, {"minus", r.Minus}} {
			if x.name == "" && x.key == "minus" {
				continue
			}
			e := m.byName[x.name]
			switch {
			case e == nil:
				return bad(at+"."+x.key, "no experiment %q", x.name)
			case !slices.Contains(e.Protocols, r.Protocol):
				return bad(at+".protocol", "experiment %s has no protocol %q", x.name, r.Protocol)
			}
			for _, p := range d.Profiles {
				if !e.inProfile(p) {
					return bad(at+"."+x.key, "experiment %s is not in profile %s", x.name, p)
				}
			}
			if r.Eval != "" && e.Eval == "test" {
				return bad(at+".eval", "experiment %s evaluates on the test set only (eval = \"test\"), not %q", x.name, r.Eval)
			}
		}
		if (r.Minus == "") != (r.MinusReference == "") && r.Reference != "" {
			return bad(at+".minus_reference", "a difference row names the authors' configs of both operands (or neither)")
		}
		if r.Reference == "" && r.ReferenceNote == "" {
			return bad(at+".reference_note", "a row without the authors' runs says why")
		}
		script, ok := referenceScripts[cmp.Or(r.ReferenceScript, "run_seq")]
		eval := cmp.Or(r.Eval, m.byName[r.Experiment].Eval)
		if eval != "test" {
			eval = "heldout"
		}
		switch {
		case !ok:
			return bad(at+".reference_script", "%q: want run_seq, run_seq_test or run_mnist", r.ReferenceScript)
		case r.Reference == "" && r.ReferenceScript != "":
			return bad(at+".reference_script", "a row without reference runs no script of the authors'")
		case r.Reference != "" && eval != script.eval:
			return bad(at+".reference_script", "the authors' %s runs score %s; experiment %s evaluates on %q",
				cmp.Or(r.ReferenceScript, "run_seq"), script.set, r.Experiment, m.byName[r.Experiment].Eval)
		}
		columns, split := script.columns, r.refSplit()
		for _, x := range []struct{ key, config string }{{"reference", r.Reference}, {"minus_reference", r.MinusReference}} {
			name := refruns.FileName(x.config, split)
			if x.config == "" || d.refs[name] != nil {
				continue
			}
			f, err := refruns.Load(dir, x.config, split)
			if err != nil {
				return bad(at+"."+x.key, "%v", err)
			}
			if strings.TrimSuffix(f.Columns, refruns.MachineColumn) != columns { // with or without machines
				return bad(at+".reference_script", "%s holds runs of another script (columns %q, want %q)",
					filepath.Join(dir, name), f.Columns, columns)
			}
			d.refs[name] = f
		}
	}
	m.disputed = d
	return nil
}

// refSplit is the held-out split the row's reference runs scored when it is
// not the authors' usual one (--val, split 1234): its eval ("" else). The
// runs are run_seq.py's --val --val-seed <seed>, in a file of their own
// (refruns.FileName).
func (r DisputedRow) refSplit() string {
	if r.Eval == cellid.EvalOf(dataset.SplitSeed1) {
		return ""
	}
	return r.Eval
}

// referenceScripts are the authors' scripts a row's runs may come from
// (reference_script; run_seq when it is empty): the column line of their
// files and the evaluation set they score (an experiment's eval).
var referenceScripts = map[string]struct{ columns, eval, set string }{
	"run_seq":      {refruns.SeqColumns, "heldout", "the held-out split (--val)"},
	"run_seq_test": {refruns.SeqColumns, "test", "the official test set (no --val)"},
	"run_mnist":    {refruns.TestColumns, "test", "the official test set"},
}

// inProfile reports whether the section runs under a profile.
func (d *Disputed) inProfile(profile string) bool {
	return d != nil && slices.Contains(d.Profiles, profile)
}

// disputedCells adds the disputed rows' aggregate cell, a table's like
// every other (disputedTable, tableOf: its train cells at every seed of
// [disputed], new cells for the seeds the experiments do not run), and
// wires it and the rows into the reproduction cell rep.
func (m *Matrix) disputedCells(b *builder, profile string, prof *Profile, rep *pipeline.Cell) (*pipeline.Cell, error) {
	d := m.disputed
	if !d.inProfile(profile) || rep == nil {
		return nil, nil
	}
	agg, _, err := m.tableOf(b, profile, prof, m.disputedTable(prof))
	if err != nil {
		return nil, err
	}
	rp := rep.Params.(*judge.Params)
	for _, r := range d.Rows {
		row := judge.DisputedRow{ID: r.ID, Label: r.Label, Experiment: r.Experiment, Minus: r.Minus, Protocol: r.Protocol, RefNote: r.ReferenceNote,
			RowSeeds: len(m.byName[r.Experiment].seeds(prof))}
		if c := m.disputedColumn(prof, r.Experiment, r); c.ID != r.Protocol {
			row.Column = c.ID
		}
		if r.Reference != "" {
			row.Reference = r.Reference
			row.RefScript = cmp.Or(r.ReferenceScript, "run_seq")
			split := r.refSplit()
			if split != "" {
				row.RefValSeed, _ = cellid.ParseEval(split)
			}
			a := d.refs[refruns.FileName(r.Reference, split)]
			if r.Minus == "" {
				for _, run := range a.Runs {
					row.RefSeeds = append(row.RefSeeds, run.Seed)
					row.RefAcc = append(row.RefAcc, run.FinalAcc)
				}
			} else {
				row.Reference += " - " + r.MinusReference
				row.RefSeeds, row.RefAcc = refDiffs(a, d.refs[refruns.FileName(r.MinusReference, split)])
			}
			if len(row.RefAcc) == 0 {
				row.RefNote = "no seed of the authors' runs finished yet"
			}
		}
		rp.Disputed = append(rp.Disputed, row)
	}
	rep.Inputs = append(rep.Inputs, pipeline.CellInput{Name: judge.DisputedInput, Cell: agg})
	return agg, nil
}

// disputedTable is the disputed rows' cells as a table (named
// judge.DisputedTable; its aggregate alone enters the graph): a row per
// experiment a disputed row reads (its experiment and the one its
// difference subtracts), a column per protocol and split they read
// (disputedColumn), every cell at the seeds of [disputed]; a combination
// no disputed row reads is blank. loadDisputed has checked
// every experiment, protocol and split it selects.
func (m *Matrix) disputedTable(prof *Profile) *TableSpec {
	t := &TableSpec{Name: judge.DisputedTable, seeds: m.disputed.Seeds}
	read := map[[2]string]bool{} // experiment, column
	for _, r := range m.disputed.Rows {
		for _, x := range []string{r.Experiment, r.Minus} {
			if x == "" {
				continue
			}
			if t.rowOf(x) < 0 {
				t.Rows = append(t.Rows, TableRow{Selection: Selection{Experiment: x}})
			}
			c := m.disputedColumn(prof, x, r)
			if t.columnOf(c.ID) < 0 {
				t.Column = append(t.Column, c)
			}
			read[[2]string{x, c.ID}] = true
		}
	}
	for i := range t.Rows {
		for _, c := range t.Column {
			if !read[[2]string{t.Rows[i].Experiment, c.ID}] {
				t.Rows[i].blank = append(t.Rows[i].blank, c.ID)
			}
		}
	}
	return t
}

// disputedColumn is the column of the disputed table holding experiment
// name's cells for row r: its protocol on the experiment's first split
// (named by the protocol), or on the row's own split (named
// "<protocol>-split<seed>").
func (m *Matrix) disputedColumn(prof *Profile, name string, r DisputedRow) TableColumn {
	split, _ := cellid.ParseEval(r.Eval) // checked by loadDisputed
	if r.Eval == "" || split == m.byName[name].splits(prof)[0] {
		return TableColumn{ID: r.Protocol, Selection: Selection{Protocol: r.Protocol}}
	}
	return TableColumn{ID: r.Protocol + "-" + r.Eval, Selection: Selection{Protocol: r.Protocol, Eval: r.Eval}}
}

// refDiffs is a - b of the authors' runs, seed by seed, over the seeds
// both have.
func refDiffs(a, b *refruns.File) ([]int64, []float64) {
	var seeds []int64
	var d []float64
	for _, x := range a.Runs {
		for _, y := range b.Runs {
			if x.Seed == y.Seed {
				seeds = append(seeds, x.Seed)
				d = append(d, x.FinalAcc-y.FinalAcc)
			}
		}
	}
	return seeds, d
}
