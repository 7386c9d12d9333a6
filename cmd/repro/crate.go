package main

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"repro/artifacts"
	"repro/cellid"
	"repro/crate"
	"repro/experiments"
	"repro/internal/buildstamp"
	"repro/internal/dataset"
	"repro/internal/refruns"
	"repro/judge"
	"repro/numbers"
	"repro/pipeline"
	"repro/stages"
)

// crateCopyLimit is the default size above which a rendered file is
// referenced by its digest instead of copied. Every committed file of the
// paper is below it today (the largest, a figure PDF, is under 1 MB); a
// compiled main.pdf with its fonts is a few MB.
const crateCopyLimit = 8 << 20

func cmdCrate() *command {
	var g globalFlags
	fs := newFlags("crate", &g)
	out := new(string)
	nonEmptyVar(fs, out, "out", "ro-crate", "write the crate into this `directory` (absent, empty, or a crate written before)")
	limit := fs.Int64("copy-limit", crateCopyLimit, "copy rendered files up to this many `bytes`; larger ones are referenced by digest")
	return &command{
		name: "crate", usage: "[--profile P] [--out DIR] [--copy-limit BYTES]",
		short: "write the reproduction as an RO-Crate (Provenance Run Crate) from the ledger",
		long: `Crate writes the reproduction as a research object other tools read: an
RO-Crate 1.1 conforming to the Workflow Run RO-Crate profiles (Process,
Workflow and Provenance Run Crate 0.5). pipeline.toml is the workflow (its
README the description), each stage a step and its tool at its version,
every record of the profile's cells an action with its input and output
files (SHA-256), its configuration, times, commit, host, CPU and kernel
path; the data releases at their canonical URLs; the rendered paper; every
number of the paper with its seeds' records, the published value and the
verdict; the authors' reference runs with their scripts' commits;
CITATION.cff. It reads the records as 'repro why' does (the store, then the
ledger: on a fresh clone, the ledger alone) and the committed files, and
computes nothing. The folder gets a marker file, so that a second run
replaces a crate it wrote and refuses any other non-empty folder.
docs/crate.md says how to deposit it and what it answers.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) != 0 {
				return usageErr("crate takes no arguments")
			}
			if *limit < 0 {
				return usageErr("--copy-limit %d: want 0 or more bytes", *limit)
			}
			start := time.Now()
			w, p, err := openPlan(e, &g)
			if err != nil {
				return err
			}
			in, err := crateInput(ctx, w, p, *limit)
			if err != nil {
				return err
			}
			c, err := crate.Build(in)
			if err != nil {
				return err
			}
			st, err := crate.Write(*out, c)
			if err != nil {
				return err
			}
			printCrate(e, *out, in, c, st, time.Since(start))
			return nil
		},
	}
}

// printCrate says what the crate holds: its size, what stays referenced by
// digest, and its entities by type.
func printCrate(e *env, dir string, in *crate.Input, c *crate.Crate, st crate.Stats, took time.Duration) {
	var byDigest int
	var digestBytes int64
	for _, f := range in.Outputs {
		if f.Path == "" {
			byDigest++
			digestBytes += f.Size
		}
	}
	counts := map[string]int{}
	for _, ent := range c.Graph {
		switch t := ent["@type"].(type) {
		case string:
			counts[t]++
		case []string:
			counts[strings.Join(t, "+")]++
		}
	}
	types := make([]string, 0, len(counts))
	for t := range counts {
		types = append(types, t)
	}
	slices.SortFunc(types, func(a, b string) int {
		if counts[a] != counts[b] {
			return counts[b] - counts[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, t := range types {
		parts = append(parts, fmt.Sprintf("%d %s", counts[t], t))
	}
	fmt.Fprintf(e.stdout, "crate %s: %d files, %.1f MB (%s %.1f MB); %d entities: %s\n",
		dir, st.Files, float64(st.Bytes)/1e6, crate.MetadataFile, float64(st.MetadataBytes)/1e6, len(c.Graph), strings.Join(parts, ", "))
	fmt.Fprintf(e.stdout, "%d records, %d numbers (%d judged), %d data releases; %d rendered files copied, %d referenced by digest (%.1f MB); %.1f s\n",
		len(in.Records), len(in.Numbers), judged(in.Numbers), len(in.Releases), len(in.Outputs)-byDigest, byDigest, float64(digestBytes)/1e6, took.Seconds())
	if in.License == nil {
		fmt.Fprintf(e.stdout, "no LICENSE file: the crate states no license\n")
	}
}

func judged(ns []crate.Number) int {
	n := 0
	for _, x := range ns {
		if x.Verdict != "" && x.Verdict != "not run" {
			n++
		}
	}
	return n
}

// crateInput gathers what the crate says from the plan, the records (as
// repro why reads them) and the committed files.
func crateInput(ctx context.Context, w *workspace, p *pipeline.Plan, limit int64) (*crate.Input, error) {
	dir := w.cfg.Dir
	stamp := buildstamp.Binary()
	in := &crate.Input{Profile: w.profile, Revision: stamp.Revision}
	if stamp.Dirty {
		in.Revision += " (dirty work tree, changes " + stamp.Diff + ")"
	}
	var err error
	fileAt := func(path, cratePath, desc string) (*crate.File, error) {
		return crateFile(dir, path, cratePath, desc, -1)
	}
	if in.Workflow, err = fileAt(w.cfg.Path, crate.WorkflowID, "the workflow: every cell of the paper declared in one file"); err != nil {
		return nil, err
	}
	readme := filepath.Join(dir, "README.md")
	if in.README, err = fileAt(readme, "README.md", "the project's README"); err != nil {
		return nil, err
	}
	b, err := os.ReadFile(readme)
	if err != nil {
		return nil, err
	}
	in.Name, in.Description = readmeTitle(string(b), w.profile)
	in.WorkflowDescription = string(b)
	if in.Citation, err = fileAt(filepath.Join(dir, "CITATION.cff"), "CITATION.cff", "how to cite the project and the paper"); err != nil {
		return nil, err
	}
	for _, name := range []string{"LICENSE", "LICENSE.md", "LICENSE.txt", "COPYING"} {
		if fileExists(filepath.Join(dir, name)) {
			if in.License, err = fileAt(filepath.Join(dir, name), name, "the project's license"); err != nil {
				return nil, err
			}
			break
		}
	}

	// The records: every cell of the plan that has one, the numbers'
	// seeds, and everything upstream of them.
	recs := map[artifacts.Key]*artifacts.Manifest{}
	var queue []artifacts.Key
	add := func(m *artifacts.Manifest) {
		if m != nil && recs[m.Key] == nil {
			recs[m.Key] = m
			queue = append(queue, m.Key)
		}
	}
	for _, pc := range p.Cells {
		add(pc.Manifest)
	}
	nums, err := crateNumbers(w, p)
	if err != nil {
		return nil, err
	}
	for _, n := range nums {
		for _, s := range n.seeds {
			add(s)
		}
	}
	for len(queue) > 0 {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		m := recs[queue[0]]
		queue = queue[1:]
		for _, inp := range m.Inputs {
			up, _, err := w.manifest(inp.Key)
			if err != nil && !errors.Is(err, artifacts.ErrNotFound) {
				return nil, fmt.Errorf("cell %s: input %s: %w", m.CellID, inp.Name, err)
			}
			add(up)
		}
	}
	for _, m := range recs {
		in.Records = append(in.Records, m)
		if end := m.Provenance.End; end.After(in.Published) {
			in.Published = end
		}
	}
	slices.SortFunc(in.Records, func(a, b *artifacts.Manifest) int {
		return cmp.Or(strings.Compare(a.CellID, b.CellID), strings.Compare(a.Key.String(), b.Key.String()))
	})
	for _, n := range nums {
		in.Numbers = append(in.Numbers, n.Number)
	}

	if in.Releases, err = crateReleases(w); err != nil {
		return nil, err
	}
	if in.Outputs, err = crateOutputs(w, limit); err != nil {
		return nil, err
	}
	if in.ReferenceRuns, err = crateReferenceRuns(w); err != nil {
		return nil, err
	}
	// A disputed row's authors' rerun points at its file.
	refFiles := map[string]string{}
	for _, r := range in.ReferenceRuns {
		refFiles[filepath.Base(r.File.Path)] = r.File.SHA256
	}
	for i := range in.Numbers {
		n := &in.Numbers[i]
		if f := refFiles[n.ReferenceFile]; f != "" {
			n.ReferenceFile = f
		} else {
			n.ReferenceFile = ""
		}
	}
	return in, nil
}

// crateFile describes the file at path as the crate's cratePath; a file
// larger than limit (limit >= 0) keeps no path: it is referenced by digest.
func crateFile(dir, path, cratePath, desc string, limit int64) (*crate.File, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(b)
	f := &crate.File{Path: cratePath, Source: path, Name: filepath.ToSlash(relTo(dir, path)), Description: desc,
		EncodingFormat: mediaType(path), SHA256: hex.EncodeToString(sum[:]), Size: int64(len(b))}
	if limit >= 0 && f.Size > limit {
		f.Path, f.Source = "", ""
	}
	return f, nil
}

func relTo(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}

// mediaType is a file's media type by its extension ("" when unknown).
func mediaType(path string) string {
	switch ext := filepath.Ext(path); ext {
	case ".tex":
		return "text/x-tex"
	case ".toml":
		return "application/toml"
	case ".md":
		return "text/markdown"
	case ".cff":
		return "application/yaml"
	case ".tsv":
		return "text/tab-separated-values"
	default:
		t, _, _ := strings.Cut(mime.TypeByExtension(ext), ";")
		return t
	}
}

var titleRe = regexp.MustCompile(`"([^"]+)"`)

// readmeTitle is the crate's name and description from the README's first
// paragraph (which names the paper in quotes).
func readmeTitle(readme, profile string) (name, desc string) {
	var para []string
	for _, line := range strings.Split(readme, "\n") {
		switch {
		case strings.HasPrefix(line, "#"):
		case strings.TrimSpace(line) == "" && len(para) > 0:
			desc = strings.Join(para, " ")
			if m := titleRe.FindStringSubmatch(desc); m != nil {
				return fmt.Sprintf("Reproduction of %q (repro, profile %s)", m[1], profile), desc
			}
			return fmt.Sprintf("repro reproduction (profile %s)", profile), desc
		case strings.TrimSpace(line) != "":
			para = append(para, strings.TrimSpace(line))
		}
	}
	return fmt.Sprintf("repro reproduction (profile %s)", profile), strings.Join(para, " ")
}

// crateNumber is a number and the records of its seeds.
type crateNumber struct {
	crate.Number
	seeds []*artifacts.Manifest
}

// crateNumbers are the numbers of the committed tables and figures and the
// paper's published numbers, each with the records of its seeds as repro
// why finds them (numberSeed), the paper's value and the verdict of the
// committed reproduction report.
func crateNumbers(w *workspace, p *pipeline.Plan) ([]crateNumber, error) {
	type source struct {
		group    string
		cells    []*numbers.AggCell
		producer string // the cell that wrote it
		text     string
	}
	srcs := map[string]*source{}
	var order []string
	put := func(id string, s *source) {
		if srcs[id] == nil {
			order = append(order, id)
		}
		srcs[id] = s
	}
	for _, t := range w.tableNames() {
		sc, err := experiments.ReadTableSidecar(w.idsPath(t))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		byExp := map[string]*numbers.AggCell{}
		for i := range sc.Numbers {
			n := &sc.Numbers[i]
			put(n.ID, &source{group: t, cells: []*numbers.AggCell{&n.AggCell}, producer: cellid.Render(t), text: plainCell(n)})
			byExp[n.Experiment+"/"+n.Protocol] = &n.AggCell
		}
		for _, c := range sc.Comparisons {
			var cells []*numbers.AggCell
			for _, x := range []string{c.A, c.B} {
				if a := byExp[x+"/"+c.Protocol]; a != nil {
					cells = append(cells, a)
				}
			}
			text := string(c.Status)
			if c.Status.OK() {
				text = fmt.Sprintf("%+.1f [%+.1f, %+.1f]", c.Diff, c.Lo, c.Hi)
			}
			put(c.ID, &source{group: t, cells: cells, producer: cellid.Render(t), text: text})
		}
	}
	for _, f := range w.figureNames() {
		sc, err := experiments.ReadFigureSidecar(w.figurePath(f, "ids.json"))
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, err
		}
		for _, pt := range append(slices.Clone(sc.Points), sc.Lines...) {
			var cells []*numbers.AggCell
			for _, c := range []*numbers.AggCell{pt.YCell, pt.XCell, pt.BCell} {
				if c != nil {
					cells = append(cells, c)
				}
			}
			put(pt.ID, &source{group: "fig/" + f, cells: cells, producer: cellid.Figure(f), text: pt.Text})
		}
	}
	rows := map[string]*judge.Row{}
	var disputed map[string]*judge.DisputedResult
	if rep, _, err := committedReport(w); err == nil {
		for i := range rep.Rows {
			r := &rep.Rows[i]
			rows[r.ID] = r
			if srcs[r.ID] == nil {
				order = append(order, r.ID)
			}
		}
		disputed = map[string]*judge.DisputedResult{}
		for i := range rep.Disputed {
			disputed[rep.Disputed[i].ID] = &rep.Disputed[i]
		}
	} else if w.graph.Cell(cellid.Reproduction) != nil {
		return nil, fmt.Errorf("reproduction report: %w", err)
	}

	var out []crateNumber
	for _, id := range order {
		s, r := srcs[id], rows[id]
		if s == nil {
			// A published number of a cell's other statistic
			// (<id>/forgetting, /replay_updates, /synops_frac,
			// /collapsed) has the seeds of its cell.
			if i := strings.LastIndex(id, "/"); i > 0 {
				s = srcs[id[:i]]
			}
		}
		n := crateNumber{Number: crate.Number{ID: id}}
		if s != nil {
			n.Group, n.Ours = s.group, s.text
			if pc := p.Cell(s.producer); pc != nil && pc.Manifest != nil {
				n.Producer = pc.Manifest.Key
			}
			for _, c := range s.cells {
				if c.Status.Kind != numbers.StatusOK {
					continue
				}
				for i, tc := range c.TrainCells {
					if i >= len(c.Results) || i >= len(c.Seeds) {
						break
					}
					m := numberSeed(w, p, tc, c.Results[i])
					if m == nil {
						continue
					}
					n.seeds = append(n.seeds, m)
					n.Seeds = append(n.Seeds, crate.Seed{Seed: c.Seeds[i], Key: m.Key, Result: c.Results[i]})
				}
			}
		}
		if r != nil {
			n.Group = r.Group
			n.Ours, n.Published, n.Verdict, n.Cite = cmp.Or(r.Ours, n.Ours), r.Published, r.Verdict.String(), r.Cite
			if r.Line > 0 {
				n.Cite += fmt.Sprintf(" (paper.tex line %d)", r.Line)
			}
			var why []string
			if r.Judgement != nil {
				why = append(why, r.Judgement.String())
			}
			why = append(why, r.Note, r.Cause)
			n.Judgement = strings.Join(slices.DeleteFunc(why, func(s string) bool { return s == "" }), "; ")
		}
		if d := disputed[id]; d != nil && d.Reference != "" && d.Authors.Mean != nil {
			n.Authors = fmt.Sprintf("%.2f ± %.2f (n=%d)", *d.Authors.Mean, *d.Authors.SD, d.Authors.N)
			split := ""
			if d.RefValSeed != 0 {
				split = fmt.Sprintf("split%d", d.RefValSeed)
			}
			n.ReferenceFile = refruns.FileName(d.Reference, split)
		}
		out = append(out, n)
	}
	return out, nil
}

// crateReleases are the data releases of the profile's download cells.
func crateReleases(w *workspace) ([]crate.Release, error) {
	var out []crate.Release
	for _, c := range w.graph.Cells {
		dp, ok := c.Params.(*stages.DownloadParams)
		if c.Stage.Name != stages.Download.Name || !ok {
			continue
		}
		rel, err := dataset.ReleaseFor(dp.Dataset)
		if err != nil {
			return nil, fmt.Errorf("cell %s: %w", c.ID, err)
		}
		r := crate.Release{Dataset: dp.Dataset}
		if len(dp.Members) > 0 {
			// A declared release: its members' digests, read from a
			// mirror only (no URL).
			r.Dataset += " (declared members)"
			for _, m := range dp.Members {
				name, sum, _ := strings.Cut(m, " ")
				r.Members = append(r.Members, crate.ReleaseFile{Name: name, SHA256: strings.TrimSpace(sum)})
			}
			out = append(out, r)
			continue
		}
		for _, f := range rel.Files {
			r.Files = append(r.Files, crate.ReleaseFile{Name: f.Name, URLs: f.URLs, SHA256: f.SHA256, Size: f.Size})
		}
		if a := rel.Archive; a != nil {
			r.Files = append(r.Files, crate.ReleaseFile{Name: a.Name, URLs: a.URLs, SHA256: a.SHA256, Size: a.Size})
			for _, m := range rel.Members {
				r.Members = append(r.Members, crate.ReleaseFile{Name: m.Name, SHA256: m.SHA256})
			}
		}
		out = append(out, r)
	}
	return out, nil
}

// crateOutputs are the rendered paper's committed files (tables, figures,
// the site, and the files at the paper directory's top: the reproduction
// report, main.tex, main.pdf when compiled), as the crate's paper/… files.
// The ledger is described record by record and the reference runs as
// runs; another profile's paper directory is not this one's.
func crateOutputs(w *workspace, limit int64) ([]*crate.File, error) {
	root := w.paperPath()
	var out []*crate.File
	add := func(path string) error {
		f, err := crateFile(w.cfg.Dir, path, filepath.ToSlash(relTo(w.cfg.Dir, path)), outputRole(relTo(root, path)), limit)
		if err == nil {
			out = append(out, f)
		}
		return err
	}
	top, err := os.ReadDir(root)
	if err != nil {
		return nil, err
	}
	for _, d := range top {
		if d.Type().IsRegular() && !strings.HasPrefix(d.Name(), ".") {
			if err := add(filepath.Join(root, d.Name())); err != nil {
				return nil, err
			}
		}
	}
	for _, sub := range []string{tablesSubdir, figuresSubdir, siteSubdir} {
		err := filepath.WalkDir(filepath.Join(root, sub), func(path string, d fs.DirEntry, err error) error {
			if errors.Is(err, fs.ErrNotExist) && path == filepath.Join(root, sub) {
				return filepath.SkipDir
			}
			if err != nil || d.IsDir() || strings.HasPrefix(d.Name(), ".") || !d.Type().IsRegular() {
				return err
			}
			return add(path)
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// outputRole says what a rendered file of the paper is.
func outputRole(r string) string {
	r = filepath.ToSlash(r)
	switch {
	case strings.HasPrefix(r, tablesSubdir+"/") && strings.HasSuffix(r, ".ids.json"):
		return "a table's sidecar: every number's ID, cells, seeds and result digests"
	case strings.HasPrefix(r, tablesSubdir+"/"):
		return "a regenerated table (LaTeX)"
	case strings.HasPrefix(r, figuresSubdir+"/") && strings.HasSuffix(r, ".ids.json"):
		return "a figure's sidecar: every point's ID, cells, seeds and result digests"
	case strings.HasPrefix(r, figuresSubdir+"/"):
		return "a regenerated figure"
	case strings.HasPrefix(r, siteSubdir+"/"):
		return "the report site (repro report): a card for every number"
	case r == reproductionTo:
		return "the reproduction report: every published number and claim against ours, with its verdict"
	case r == disputedTo:
		return "ours for the disputed rows, at twelve seeds"
	case r == "published.toml":
		return "the paper's published values, each with its line in the paper"
	case r == "main.tex":
		return "the regenerated paper's LaTeX"
	case r == "main.pdf":
		return "the regenerated paper (PDF)"
	}
	return "a file of the regenerated paper"
}

// crateReferenceRuns are the committed files of the authors' code's runs.
func crateReferenceRuns(w *workspace) ([]crate.ReferenceRun, error) {
	dir := filepath.Join(w.cfg.Dir, paperDir, "reference-runs")
	paths, err := filepath.Glob(filepath.Join(dir, "*.tsv"))
	if err != nil {
		return nil, err
	}
	slices.Sort(paths)
	var out []crate.ReferenceRun
	for _, path := range paths {
		fh, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		rf, err := refruns.Parse(path, fh)
		fh.Close()
		if err != nil {
			return nil, err
		}
		f, err := crateFile(w.cfg.Dir, path, filepath.ToSlash(relTo(w.cfg.Dir, path)), "the authors' code's per-seed results of "+rf.Config+" (make reference-runs)", -1)
		if err != nil {
			return nil, err
		}
		script := "run_seq.py"
		if rf.Columns == refruns.TestColumns {
			script = "run_mnist.py"
		}
		r := crate.ReferenceRun{Config: rf.Config, Command: rf.Command, Reference: rf.Reference, Split: rf.Split, Source: rf.Source, Script: script, File: f}
		for _, run := range rf.Runs {
			r.Seeds = append(r.Seeds, run.Seed)
		}
		out = append(out, r)
	}
	return out, nil
}
