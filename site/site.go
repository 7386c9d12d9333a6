package site

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"repro/artifacts"
	"repro/internal/outdir"
	"repro/judge"
	"repro/numbers"
	"repro/verdict"
)

// Stats says what Build wrote.
type Stats struct {
	Files, Cards int
	Bytes        int64
}

// number is one number or plotted point of the site: where it is shown and
// what it came from.
type number struct {
	id    string
	group string // table name, or fig/<name>
	page  string // its table or figure page, relative to the site root
	where string // "table ablation, row 1 “full system”, column sequential"
	text  string // as the site prints it
	// cells are the seeds behind it, with their role (y, x, minus) for a
	// figure point; cmp a seed-paired difference.
	cells []roleCell
	cmp   *numbers.Comparison
	// rows are the verdicts on it and on its other numbers
	// (<id>/forgetting, ...), the first on the number itself if judged.
	rows []*judge.Row
	sel  *numbers.FigSelection
}

type roleCell struct {
	role string
	cell *numbers.AggCell
}

// site is the model every page is written from.
type site struct {
	in      *Input
	nums    map[string]*number
	order   []string // number IDs in page order
	byRow   map[string]*judge.Row
	files   map[string][]byte
	tableOf map[string]*numbers.Sidecar
}

// Owner is the rule of a site folder (package outdir): Build writes only
// a missing or empty folder, one holding a site it wrote (its marker,
// .repro-site, lists every file), or a site written before the marker
// (index.html, style.css and pages under cards/, figures/ and tables/ only).
var Owner = outdir.Owner{Marker: ".repro-site", Kind: "repro report site v1", Legacy: legacySiteFile}

// legacySiteFile reports whether rel is a file a site written before the
// marker holds.
func legacySiteFile(rel string) bool {
	switch rel {
	case "index.html", "style.css":
		return true
	}
	dir, name, ok := strings.Cut(rel, "/")
	return ok && !strings.Contains(name, "/") && strings.HasSuffix(name, ".html") &&
		(dir == "cards" || dir == "figures" || dir == "tables")
}

// Build writes the site for in into dir, replacing the site there: it is
// written beside dir and renamed into place. A folder that holds anything
// the site did not write is refused (Owner.Check; outdir.ErrForeign) before
// anything is written, and of the old site only the files it wrote are
// removed.
func Build(dir string, in *Input) (Stats, error) {
	if err := Owner.Check(dir); err != nil {
		return Stats{}, fmt.Errorf("site: %w", err)
	}
	s := newSite(in)
	s.files["style.css"] = []byte(styleCSS)
	s.files["index.html"] = s.index()
	for _, t := range in.Tables {
		s.files["tables/"+t.Table+".html"] = s.tablePage(t)
	}
	for _, f := range in.Figures {
		s.files["figures/"+f.Figure+".html"] = s.figurePage(f)
	}
	cards := 0
	for _, id := range s.order {
		s.files["cards/"+numbers.CardName(id)+".html"] = s.card(s.nums[id])
		cards++
	}
	st := Stats{Files: len(s.files), Cards: cards}
	for _, b := range s.files {
		st.Bytes += int64(len(b))
	}
	return st, s.write(dir)
}

// write puts the files and the marker into a fresh directory beside dir
// and swaps it in; of the old site it removes only what that site's marker
// lists (or, for a site older than the marker, the site's own files).
func (s *site) write(dir string) error {
	parent := filepath.Dir(filepath.Clean(dir))
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(parent, "."+filepath.Base(dir)+".new-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // ours: made above, holds only what is written below
	names := make([]string, 0, len(s.files))
	for n := range s.files {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names {
		if err := artifacts.WriteFile(filepath.Join(tmp, filepath.FromSlash(n)), s.files[n], 0o644); err != nil {
			return fmt.Errorf("site %s: %w", n, err)
		}
	}
	if err := artifacts.WriteFile(filepath.Join(tmp, Owner.Marker), Owner.MarkerText(names), 0o644); err != nil {
		return fmt.Errorf("site %s: %w", Owner.Marker, err)
	}
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	// Checked again just before the swap: the folder may have changed
	// since Build checked it.
	owned, err := Owner.Owned(dir)
	if err != nil {
		return fmt.Errorf("site: %w", err)
	}
	old := tmp + ".old"
	if err := os.Rename(dir, old); err != nil && !os.IsNotExist(err) {
		return fmt.Errorf("site %s: %w", dir, err)
	}
	if err := os.Rename(tmp, dir); err != nil {
		if _, serr := os.Stat(old); serr == nil {
			os.Rename(old, dir) // put the old site back
		}
		return fmt.Errorf("site %s: %w", dir, err)
	}
	if err := Owner.RemoveOwned(old, owned); err != nil {
		return fmt.Errorf("site %s written; the previous one: %w", dir, err)
	}
	return nil
}

func newSite(in *Input) *site {
	s := &site{in: in, nums: map[string]*number{}, byRow: map[string]*judge.Row{}, files: map[string][]byte{}, tableOf: map[string]*numbers.Sidecar{}}
	add := func(n *number) {
		if s.nums[n.id] == nil {
			s.order = append(s.order, n.id)
		}
		s.nums[n.id] = n
	}
	for _, t := range in.Tables {
		s.tableOf[t.Table] = t
		for i := range t.Numbers {
			x := &t.Numbers[i]
			dec := 1
			if x.Decimals != nil {
				dec = *x.Decimals
			}
			// The sidecar's id and protocol shadow the embedded cell's.
			c := x.AggCell
			c.ID, c.Protocol = x.ID, x.Protocol
			add(&number{id: x.ID, group: t.Table, page: "tables/" + t.Table + ".html",
				where: fmt.Sprintf("table %s, row %d “%s”, column %s", t.Table, x.Row, plainLabel(x.Label), x.Protocol),
				text:  cellValue(&c, dec), cells: []roleCell{{"", &c}}})
		}
		for i := range t.Comparisons {
			c := &t.Comparisons[i]
			n := &number{id: c.ID, group: t.Table, page: "tables/" + t.Table + ".html", cmp: c,
				where: fmt.Sprintf("table %s, seed-paired difference %s − %s (%s)", t.Table, c.A, c.B, c.Protocol)}
			n.text = string(c.Status)
			if c.Status.OK() {
				n.text = fmt.Sprintf("%+.2f [%+.2f, %+.2f]", c.Diff, c.Lo, c.Hi)
			}
			for _, x := range []string{c.A, c.B} {
				if y := findCell(t, x, c.Protocol); y != nil {
					n.cells = append(n.cells, roleCell{x, y})
				}
			}
			add(n)
		}
	}
	for _, f := range in.Figures {
		for _, list := range [][]numbers.FigurePoint{f.Points, f.Lines} {
			for i := range list {
				p := &list[i]
				n := &number{id: p.ID, group: "fig/" + f.Figure, page: "figures/" + f.Figure + ".html", text: p.Text, sel: p.Selection,
					where: fmt.Sprintf("figure %s, panel %d, series %s, experiment %s", f.Figure, p.Panel, p.Series, p.Experiment), cmp: p.Diff}
				if !p.Status.Is(numbers.StatusOK) {
					n.text = p.Status.String()
				}
				for _, rc := range []roleCell{{"y", p.YCell}, {"x", p.XCell}, {"minus", p.BCell}} {
					if rc.cell != nil {
						n.cells = append(n.cells, rc)
					}
				}
				add(n)
			}
		}
	}
	if in.Report != nil {
		for i := range in.Report.Rows {
			r := &in.Report.Rows[i]
			s.byRow[r.ID] = r
			n := s.owner(r.ID)
			if n == nil {
				n = &number{id: r.ID, group: r.Group, text: r.Ours, where: plainLabel(r.Cite)}
				add(n)
			}
			if n.id == r.ID {
				n.rows = append([]*judge.Row{r}, n.rows...)
			} else {
				n.rows = append(n.rows, r)
			}
		}
	}
	return s
}

// owner is the number whose card shows the verdict on id: id itself, or
// the cell whose other number it is (<cell>/forgetting, a figure's
// <point>/a).
func (s *site) owner(id string) *number {
	for x := id; x != ""; {
		if n := s.nums[x]; n != nil {
			return n
		}
		i := strings.LastIndexByte(x, '/')
		if i < 0 {
			break
		}
		x = x[:i]
	}
	return nil
}

// findCell is the table cell of experiment (or cell ID) x under protocol.
func findCell(t *numbers.Sidecar, x, protocol string) *numbers.AggCell {
	for i := range t.Numbers {
		n := &t.Numbers[i]
		if n.ID == x || n.Experiment == x && n.Protocol == protocol {
			return &n.AggCell
		}
	}
	return nil
}

// cardHref is the link to id's card from a page dir levels below the root.
func cardHref(id string, up string) string { return up + "cards/" + numbers.CardName(id) + ".html" }

// outcomeClass is the CSS class of a verdict.
func outcomeClass(o verdict.Outcome) string {
	switch o {
	case verdict.Agrees:
		return "agree"
	case verdict.Differs:
		return "differ"
	case verdict.Inconclusive:
		return "inconclusive"
	}
	return "notrun"
}

// verdictOf is the verdict on a number itself (not on its other numbers).
func (n *number) verdictOf() (*judge.Row, bool) {
	if len(n.rows) > 0 && n.rows[0].ID == n.id {
		return n.rows[0], true
	}
	return nil, false
}

// page wraps a body in the common head and navigation; up is the path to
// the site root ("" or "../").
func page(title, up, body string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>%s</title><link rel="stylesheet" href="%sstyle.css"></head>
<body><nav><a href="%sindex.html">reproduction</a></nav>
<main>
`, esc(title), up, up)
	b.WriteString(body)
	b.WriteString("</main></body></html>\n")
	return []byte(b.String())
}

// sortedGroups is the groups in report order, then any others.
func (s *site) groupOrder() []string {
	var out []string
	seen := map[string]bool{}
	if s.in.Report != nil {
		for _, g := range s.in.Report.Groups {
			if !seen[g.Group] {
				seen[g.Group] = true
				out = append(out, g.Group)
			}
		}
	}
	for _, id := range s.order {
		if g := s.nums[id].group; !seen[g] {
			seen[g] = true
			out = append(out, g)
		}
	}
	return out
}
