package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"repro/cellid"
	"repro/internal/latex"
	"repro/numbers"
	"repro/pipeline"
)

// RenderParams lay out one table's LaTeX.
type RenderParams struct {
	Table   string `toml:"table"`
	Label   string `toml:"label"`
	Caption string `toml:"caption"`
	Size    string `toml:"size"`
	Header  string `toml:"header"`
	// Columns follow the columns of the aggregate input.
	Columns    []RenderColumn `toml:"columns"`
	ParamTitle string         `toml:"param_title"`
	// Rows follow the rows of the aggregate input.
	Rows    []RenderRow `toml:"rows"`
	Stamp   string      `toml:"stamp"`
	Profile string      `toml:"profile"`
	// ShowNotRun prints a cell that was not run as "not run" with a note
	// under the table giving the reason (one letter per distinct reason);
	// off, such a cell is blank, as the paper leaves the cells it did not
	// run (its captions say "blank: not run"), and the reason is only in
	// the row's comment.
	ShowNotRun bool `toml:"show_not_run,omitzero"`
}

// RenderColumn is one column of a rendered table.
type RenderColumn struct {
	Title string `toml:"title"`
	// Bold: the column's best mean is bold (bestRows).
	Bold bool `toml:"bold,omitzero"`
}

// RenderRow is one row of a rendered table.
type RenderRow struct {
	Label string `toml:"label"`
	// Param is the row's entry in the param column (LaTeX; "" without
	// one).
	Param   string `toml:"param,omitzero"`
	Midrule bool   `toml:"midrule,omitzero"` // a \midrule above the row
	// Reference: the row is never bold.
	Reference bool         `toml:"reference,omitzero"`
	Cells     []RenderCell `toml:"cells"`
}

// RenderCell is how one number is printed.
type RenderCell struct {
	Decimals int `toml:"decimals"`
	// MeanOnly: the mean without its s.d. (a matrix table's entries).
	MeanOnly bool `toml:"mean_only,omitzero"`
}

// check reports a layout that does not fit rec's rows and columns.
func (p *RenderParams) check(rec *numbers.AggregateRecord) error {
	if len(p.Rows) != len(rec.Rows) || len(p.Columns) != len(rec.Protocols) {
		return fmt.Errorf("render %s: %d rows and %d columns for a table of %d and %d", p.Table, len(p.Rows), len(p.Columns), len(rec.Rows), len(rec.Protocols))
	}
	for r, row := range p.Rows {
		if len(row.Cells) != len(rec.Protocols) {
			return fmt.Errorf("render %s: row %d: %d cells for %d columns", p.Table, r+1, len(row.Cells), len(rec.Protocols))
		}
	}
	return nil
}

// Render writes one table as LaTeX ("tex", booktabs) and its sidecar
// ("ids", JSON) from an aggregate cell (input "aggregate").
//
// Version history:
//
//   - 1: booktabs table and number-ID sidecar.
//   - 3: failed seeds render with their n; the sidecar carries the param
//     column (version 2 was never released).
//   - 4: the caption ends with the rule that sets the bold numbers.
//   - 5: params are lists of records (columns, rows and their cells)
//     instead of parallel slices; the outputs are byte-identical.
//   - 6: every printed number links to its card in the report site
//     (\reprocard, render_card.go); the sidecar gives each number's
//     decimals.
//   - 7: a number run on more seeds than the profile's (a settled row)
//     carries a dagger and the note under the table says how many; such
//     rows compete for bold (only rows on fewer seeds do not).
var Render = &pipeline.Stage{
	Name:      "render",
	Version:   7,
	NewParams: func() any { return &RenderParams{} },
	Run: func(ctx context.Context, rc *pipeline.RunContext) error {
		p := rc.Params.(*RenderParams)
		b, err := rc.Input("aggregate").Read(ctx, "aggregate")
		if err != nil {
			return fmt.Errorf("input aggregate: %w", err)
		}
		var rec numbers.AggregateRecord
		if err := json.Unmarshal(b, &rec); err != nil {
			return fmt.Errorf("input aggregate: %w", err)
		}
		tex, side, err := RenderTable(p, &rec)
		if err != nil {
			return err
		}
		sb, err := json.MarshalIndent(side, "", " ")
		if err != nil {
			return err
		}
		rc.Put("tex", []byte(tex))
		rc.Put("ids", append(sb, '\n'))
		return nil
	},
}

// cellText renders one table cell: --- (not applicable), blank (not run,
// or "empty": a cell the layout leaves blank, as above a matrix's diagonal), $m\pm s$, bold when best, with n when it differs from the
// row's expected seed count.
func cellText(c *numbers.AggCell, bold bool, decimals int, meanOnly bool) string {
	switch {
	case c.Status.Kind == numbers.StatusNA:
		return "---"
	case c.Status.Kind == numbers.StatusMissing:
		return `{\scriptsize($n{=}0$)}`
	case c.Status.Kind != numbers.StatusOK:
		return ""
	}
	body := numbers.Fixed(c.Acc.Mean, decimals)
	if c.N > 1 && !meanOnly {
		body += `\pm` + numbers.Fixed(c.Acc.SD, decimals)
	}
	if bold {
		body = `\mathbf{` + body + `}`
	}
	s := "$" + body + "$"
	if c.N != c.Expected {
		s += fmt.Sprintf(`\,{\scriptsize($n{=}%d$)}`, c.N)
	}
	return s
}

// bestRows returns, per bold column, the rows whose displayed mean equals
// the best displayed mean among the competing rows: not a reference row,
// every expected seed present, and the table's default seed count (rows run
// on fewer seeds by design are shown but do not compete).
func bestRows(p *RenderParams, rec *numbers.AggregateRecord) map[[2]int]bool {
	out := map[[2]int]bool{}
	for c, col := range p.Columns {
		if !col.Bold {
			continue
		}
		shown := func(r int) float64 {
			v, _ := strconv.ParseFloat(numbers.Fixed(rec.Rows[r][c].Acc.Mean, p.Rows[r].Cells[c].Decimals), 64)
			return v
		}
		best := math.Inf(-1)
		var cand []int
		for r := range rec.Rows {
			x := &rec.Rows[r][c]
			if p.Rows[r].Reference || x.Status.Kind != numbers.StatusOK || x.N != x.Expected || x.N < rec.DefaultSeeds {
				continue
			}
			cand = append(cand, r)
			best = math.Max(best, shown(r))
		}
		for _, r := range cand {
			if shown(r) == best {
				out[[2]int{r, c}] = true
			}
		}
	}
	return out
}

// boldRule is the caption's sentence stating bestRows's rule, for the
// columns that have bold values ("" when none has).
func boldRule(p *RenderParams, rec *numbers.AggregateRecord) string {
	var cols []string
	for _, col := range p.Columns {
		if col.Bold {
			cols = append(cols, "`"+col.Title+"'")
		}
	}
	if len(cols) == 0 {
		return ""
	}
	excluded := fmt.Sprintf("rows run on fewer than %d seeds", rec.DefaultSeeds)
	if slices.ContainsFunc(p.Rows, func(r RenderRow) bool { return r.Reference }) {
		excluded += " and the reference rows"
	}
	where := "column " + cols[0]
	if len(cols) > 1 {
		where = "columns " + strings.Join(cols[:len(cols)-1], ", ") + " and " + cols[len(cols)-1]
	}
	return fmt.Sprintf(" Bold: the best mean (as printed) in the %s; %s are never bold.", where, excluded)
}

// RenderTable renders rec with layout p: the .tex text and its sidecar.
func RenderTable(p *RenderParams, rec *numbers.AggregateRecord) (string, *numbers.Sidecar, error) {
	if err := p.check(rec); err != nil {
		return "", nil, err
	}
	side := &numbers.Sidecar{Table: p.Table, Profile: p.Profile, Stamp: p.Stamp, Source: cellid.Aggregate(rec.Table), ParamTitle: p.ParamTitle, Comparisons: rec.Comparisons}
	var b strings.Builder
	p.writeHead(&b, rec)
	notes, more := p.writeRows(&b, rec, side)
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	more.write(&b)
	if len(notes.why) > 0 {
		var parts []string
		for i, why := range notes.why {
			parts = append(parts, fmt.Sprintf("$^{%s}$\\,%s", notes.letter(i), latex.Escape(why)))
		}
		fmt.Fprintf(&b, "\\par\\smallskip{\\scriptsize Not run: %s.\\par}\n", strings.Join(parts, "; "))
	}
	for _, c := range rec.Comparisons {
		if c.Status.OK() {
			fmt.Fprintf(&b, "%% %s: %s - %s (%s, %d paired seeds): %s [%s, %s]\n", c.ID, c.A, c.B, c.Protocol, c.N, numbers.Signed(c.Diff, 1), numbers.Signed(c.Lo, 1), numbers.Signed(c.Hi, 1))
		} else {
			fmt.Fprintf(&b, "%% %s: %s - %s (%s): %s\n", c.ID, c.A, c.B, c.Protocol, c.Status)
		}
	}
	b.WriteString("\\end{table}\n")
	return b.String(), side, nil
}

// writeHead writes the table's opening comment, caption, label, stamp and
// the tabular's head row.
func (p *RenderParams) writeHead(b *strings.Builder, rec *numbers.AggregateRecord) {
	fmt.Fprintf(b, "%% %s.tex: generated by repro (render/%s, profile %s) from aggregate/%s. Do not edit:\n", p.Table, p.Table, p.Profile, rec.Table)
	fmt.Fprintf(b, "%% change pipeline.toml and run `make paper`. Each row's comment gives its number IDs;\n")
	fmt.Fprintf(b, "%% `repro why paper/tables/%s.tex:<row>:<column>` or `repro why <ID>` traces a number.\n", p.Table)
	b.WriteString(cardFallback)
	b.WriteString("\\begin{table}[t]\n\\centering\n")
	fmt.Fprintf(b, "\\caption{%s%s}\n", p.Caption, boldRule(p, rec))
	if p.Label != "" {
		fmt.Fprintf(b, "\\label{%s}\n", p.Label)
	}
	if p.Stamp != "" {
		fmt.Fprintf(b, "\\fbox{\\parbox{0.95\\linewidth}{\\centering\\footnotesize\\textbf{%s}}}\\par\\medskip\n", latex.Escape(p.Stamp))
	}
	if p.Size != "" {
		b.WriteString(p.Size + "\n")
	}
	cols := "l"
	head := []string{p.Header}
	if p.ParamTitle != "" {
		cols += "c"
		head = append(head, p.ParamTitle)
	}
	cols += strings.Repeat("c", len(p.Columns))
	for _, c := range p.Columns {
		head = append(head, c.Title)
	}
	fmt.Fprintf(b, "\\begin{tabular}{@{}%s@{}}\n\\toprule\n", cols)
	b.WriteString(strings.Join(head, " & ") + ` \\` + "\n\\midrule\n")
}

// writeRows writes the table's data rows, each with a comment naming its
// number IDs, adds every number to side, and returns the reasons of the
// cells shown as not run.
func (p *RenderParams) writeRows(b *strings.Builder, rec *numbers.AggregateRecord, side *numbers.Sidecar) (*notRunNotes, *moreSeeds) {
	best := bestRows(p, rec)
	notes := &notRunNotes{}
	more := &moreSeeds{}
	for r, row := range rec.Rows {
		layout := p.Rows[r]
		if layout.Midrule && r > 0 {
			b.WriteString("\\midrule\n")
		}
		fields := []string{layout.Label}
		param := ""
		if p.ParamTitle != "" {
			param = layout.Param
			fields = append(fields, param)
		}
		var ids []string
		for c, x := range row {
			txt := cellText(&x, best[[2]int{r, c}], layout.Cells[c].Decimals, layout.Cells[c].MeanOnly)
			if x.Status.Kind == numbers.StatusNotRun && x.Status.Why != "" && p.ShowNotRun {
				txt = `{\scriptsize not run$^{` + notes.mark(x.Status.Why) + `}$}`
			}
			fields = append(fields, cardLink(&x, txt)+more.mark(&x, rec.DefaultSeeds))
			dec := layout.Cells[c].Decimals
			side.Numbers = append(side.Numbers, numbers.NumberRef{ID: x.ID, Row: r + 1, Column: c + 1, Label: layout.Label, Protocol: x.Protocol, Param: param, Text: txt, Decimals: &dec, AggCell: x})
			ids = append(ids, x.ID+rowNote(&x))
		}
		line := strings.TrimRight(strings.Join(fields, " & "), " ")
		fmt.Fprintf(b, "%s \\\\ %% row %d: %s\n", line, r+1, strings.Join(ids, ", "))
	}
	return notes, more
}

// moreSeeds marks the numbers run on more seeds than the profile's: the
// settled rows (an experiment marked settle, docs/verdicts.md), which a
// reader must not take for the caption's count. One mark per count.
type moreSeeds struct{ counts []int }

// daggers are the marks, in order of first use.
var daggers = []string{`\dagger`, `\ddagger`, `\dagger\dagger`, `\ddagger\ddagger`}

// mark returns the mark of x's seed count ("" when it is not above def).
func (m *moreSeeds) mark(x *numbers.AggCell, def int) string {
	if x.Status.Kind != numbers.StatusOK || def == 0 || x.N <= def {
		return ""
	}
	i := slices.Index(m.counts, x.N)
	if i < 0 {
		i = len(m.counts)
		m.counts = append(m.counts, x.N)
	}
	return "$^{" + daggers[min(i, len(daggers)-1)] + "}$"
}

// write adds the note that says what each mark means.
func (m *moreSeeds) write(b *strings.Builder) {
	if len(m.counts) == 0 {
		return
	}
	var parts []string
	for i, n := range m.counts {
		parts = append(parts, fmt.Sprintf("$^{%s}$\\,%d seeds", daggers[min(i, len(daggers)-1)], n))
	}
	fmt.Fprintf(b, "\\par\\smallskip{\\scriptsize %s: a number the verdict's estimate says that many of our seeds settle (docs/verdicts.md).\\par}\n", strings.Join(parts, "; "))
}

// rowNote is what a row's comment says of a number beside its ID: the
// seeds it lacks, or why it has no value.
func rowNote(x *numbers.AggCell) string {
	switch {
	case x.Status.Kind == numbers.StatusOK && len(x.Missing) > 0:
		return fmt.Sprintf(" (n=%d of %d; missing seeds %v)", x.N, x.Expected, x.Missing)
	case x.Status.Kind != numbers.StatusOK && x.Status.Kind != numbers.StatusNA && x.Status.Kind != numbers.StatusEmpty:
		return " (" + x.Status.String() + ")"
	}
	return ""
}

// notRunNotes numbers the distinct reasons of a table's not-run cells.
type notRunNotes struct{ why []string }

// mark returns the letter of why, adding it when new.
func (n *notRunNotes) mark(why string) string {
	i := slices.Index(n.why, why)
	if i < 0 {
		i = len(n.why)
		n.why = append(n.why, why)
	}
	return n.letter(i)
}

// letter is the mark of the i-th reason: a ... z, then a1, b1, ...
func (n *notRunNotes) letter(i int) string {
	s := string(rune('a' + i%26))
	if i >= 26 {
		s += strconv.Itoa(i / 26)
	}
	return s
}
