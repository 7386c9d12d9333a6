package stages

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"repro/experiments/cellid"
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
func (p *RenderParams) check(rec *AggregateRecord) error {
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
var Render = &pipeline.Stage{
	Name:      "render",
	Version:   5,
	NewParams: func() any { return &RenderParams{} },
	Run: func(ctx context.Context, rc *pipeline.RunContext) error {
		p := rc.Params.(*RenderParams)
		b, err := rc.Input("aggregate").Read(ctx, "aggregate")
		if err != nil {
			return fmt.Errorf("input aggregate: %w", err)
		}
		var rec AggregateRecord
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

// fmt1 formats x with one decimal, without a negative zero.
func fmt1(x float64) string { return fmtN(x, 1) }

// fmtN formats x with d decimals, without a negative zero.
func fmtN(x float64, d int) string {
	s := strconv.FormatFloat(x, 'f', d, 64)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	return s
}

// signed1 formats x with one decimal and a sign: +0.5, -7.0.
func signed1(x float64) string {
	s := fmt1(x)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// cellText renders one table cell: --- (not applicable), blank (not run,
// or "empty": a cell the layout leaves blank, as above a matrix's diagonal), $m\pm s$, bold when best, with n when it differs from the
// row's expected seed count.
func cellText(c *AggCell, bold bool, decimals int, meanOnly bool) string {
	switch {
	case c.Status == "n/a":
		return "---"
	case strings.HasPrefix(c.Status, "missing"):
		return `{\scriptsize($n{=}0$)}`
	case c.Status != "ok":
		return ""
	}
	body := fmtN(c.Acc.Mean, decimals)
	if c.N > 1 && !meanOnly {
		body += `\pm` + fmtN(c.Acc.SD, decimals)
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
func bestRows(p *RenderParams, rec *AggregateRecord) map[[2]int]bool {
	out := map[[2]int]bool{}
	for c, col := range p.Columns {
		if !col.Bold {
			continue
		}
		shown := func(r int) float64 {
			v, _ := strconv.ParseFloat(fmtN(rec.Rows[r][c].Acc.Mean, p.Rows[r].Cells[c].Decimals), 64)
			return v
		}
		best := math.Inf(-1)
		var cand []int
		for r := range rec.Rows {
			x := &rec.Rows[r][c]
			if p.Rows[r].Reference || x.Status != "ok" || x.N != x.Expected || x.N != rec.DefaultSeeds {
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
func boldRule(p *RenderParams, rec *AggregateRecord) string {
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
func RenderTable(p *RenderParams, rec *AggregateRecord) (string, *Sidecar, error) {
	if err := p.check(rec); err != nil {
		return "", nil, err
	}
	side := &Sidecar{Table: p.Table, Profile: p.Profile, Stamp: p.Stamp, Source: cellid.Aggregate(rec.Table), ParamTitle: p.ParamTitle, Comparisons: rec.Comparisons}
	var b strings.Builder
	p.writeHead(&b, rec)
	notes := p.writeRows(&b, rec, side)
	b.WriteString("\\bottomrule\n\\end{tabular}\n")
	if len(notes.why) > 0 {
		var parts []string
		for i, why := range notes.why {
			parts = append(parts, fmt.Sprintf("$^{%s}$\\,%s", notes.letter(i), latexEscape(why)))
		}
		fmt.Fprintf(&b, "\\par\\smallskip{\\scriptsize Not run: %s.\\par}\n", strings.Join(parts, "; "))
	}
	for _, c := range rec.Comparisons {
		if c.Status == "ok" {
			fmt.Fprintf(&b, "%% %s: %s - %s (%s, %d paired seeds): %s [%s, %s]\n", c.ID, c.A, c.B, c.Protocol, c.N, signed1(c.Diff), signed1(c.Lo), signed1(c.Hi))
		} else {
			fmt.Fprintf(&b, "%% %s: %s - %s (%s): %s\n", c.ID, c.A, c.B, c.Protocol, c.Status)
		}
	}
	b.WriteString("\\end{table}\n")
	return b.String(), side, nil
}

// writeHead writes the table's opening comment, caption, label, stamp and
// the tabular's head row.
func (p *RenderParams) writeHead(b *strings.Builder, rec *AggregateRecord) {
	fmt.Fprintf(b, "%% %s.tex: generated by repro (render/%s, profile %s) from aggregate/%s. Do not edit:\n", p.Table, p.Table, p.Profile, rec.Table)
	fmt.Fprintf(b, "%% change pipeline.toml and run `make paper`. Each row's comment gives its number IDs;\n")
	fmt.Fprintf(b, "%% `repro why paper/tables/%s.tex:<row>:<column>` or `repro why <ID>` traces a number.\n", p.Table)
	b.WriteString("\\begin{table}[t]\n\\centering\n")
	fmt.Fprintf(b, "\\caption{%s%s}\n", p.Caption, boldRule(p, rec))
	if p.Label != "" {
		fmt.Fprintf(b, "\\label{%s}\n", p.Label)
	}
	if p.Stamp != "" {
		fmt.Fprintf(b, "\\fbox{\\parbox{0.95\\linewidth}{\\centering\\footnotesize\\textbf{%s}}}\\par\\medskip\n", latexEscape(p.Stamp))
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
func (p *RenderParams) writeRows(b *strings.Builder, rec *AggregateRecord, side *Sidecar) *notRunNotes {
	best := bestRows(p, rec)
	notes := &notRunNotes{}
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
			if why, ok := strings.CutPrefix(x.Status, "not run: "); ok && p.ShowNotRun {
				txt = `{\scriptsize not run$^{` + notes.mark(why) + `}$}`
			}
			fields = append(fields, txt)
			side.Numbers = append(side.Numbers, NumberRef{ID: x.ID, Row: r + 1, Column: c + 1, Label: layout.Label, Protocol: x.Protocol, Param: param, Text: txt, AggCell: x})
			ids = append(ids, x.ID+rowNote(&x))
		}
		line := strings.TrimRight(strings.Join(fields, " & "), " ")
		fmt.Fprintf(b, "%s \\\\ %% row %d: %s\n", line, r+1, strings.Join(ids, ", "))
	}
	return notes
}

// rowNote is what a row's comment says of a number beside its ID: the
// seeds it lacks, or why it has no value.
func rowNote(x *AggCell) string {
	switch {
	case x.Status == "ok" && len(x.Missing) > 0:
		return fmt.Sprintf(" (n=%d of %d; missing seeds %v)", x.N, x.Expected, x.Missing)
	case x.Status != "ok" && x.Status != "n/a" && x.Status != "empty":
		return " (" + x.Status + ")"
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

// latexEscape escapes the characters LaTeX treats specially in text.
func latexEscape(s string) string {
	r := strings.NewReplacer(`\`, `\textbackslash{}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`, `_`, `\_`, `{`, `\{`, `}`, `\}`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`)
	return r.Replace(s)
}

// ReproductionParams are the paper's published values (in the published
// files' order) and the tables they are compared with.
type ReproductionParams struct {
	Tables  []string         `toml:"tables"` // input names: the tables' aggregate cells
	Values  []PublishedValue `toml:"values"`
	Stamp   string           `toml:"stamp"`
	Profile string           `toml:"profile"`
	// Claims are the orderings the paper claims.
	Claims []Claim `toml:"claims,omitzero"`
}

// ClaimResult is one claimed ordering checked against our numbers.
type ClaimResult struct {
	ID   string `json:"id"`
	Text string `json:"text"`
	Cite string `json:"cite"`
	// Verdict is "holds", "fails" or "not computed: <why>"; Detail gives
	// each condition with our numbers.
	Verdict string `json:"verdict"`
	Detail  string `json:"detail"`
}

// ReproRow is one number of the reproduction report.
type ReproRow struct {
	ID        string  `json:"id"`
	Cite      string  `json:"cite,omitempty"`
	Published string  `json:"published"` // "" when the paper has no value
	Ours      string  `json:"ours"`      // "" when not computed
	Diff      float64 `json:"diff"`
	HasDiff   bool    `json:"has_diff"`
	// Within is "yes" when ours agrees with the published value within the
	// seed noise, "no" when not, "" when there is nothing to compare.
	Within string `json:"within"`
	Note   string `json:"note,omitempty"`
}

// ReproReport is the "report" output of the reproduction cell.
type ReproReport struct {
	Profile string     `json:"profile"`
	Stamp   string     `json:"stamp,omitempty"`
	Rows    []ReproRow `json:"rows"`
	// Compared counts the numbers with a published value and ours, Within
	// those that agree within the noise, NotRun the published numbers we
	// have no value for.
	Compared int `json:"compared"`
	Within   int `json:"within"`
	NotRun   int `json:"not_run"`
	// WideSD counts the compared cells whose s.d. over seeds is more than
	// twice the paper's (each judged with the paper's s.d. and flagged).
	WideSD int `json:"wide_sd,omitempty"`
	// Claims are the paper's stated orderings, each holds / fails.
	Claims     []ClaimResult `json:"claims,omitempty"`
	ClaimsHeld int           `json:"claims_held,omitempty"`

	// spread is each rendered ok number's s.d. over its seeds and their
	// count, for the values judged with another number's noise.
	spread map[string]AggCell
}

// roundingSlack is half the last published digit: the paper prints %.1f.
const roundingSlack = 0.05

// WithinNoise reports whether our mean (sd so over no seeds) agrees with a
// published mean (sd sp over np seeds): |diff| <= 1.96 se + 0.05, where se is
// the standard error of the difference of the two means and 0.05 the
// published rounding.
func WithinNoise(ours, so float64, no int, pub, sp float64, np int) bool {
	v := 0.0
	if no > 0 {
		v += so * so / float64(no)
	}
	if np > 0 && sp > 0 {
		v += sp * sp / float64(np)
	}
	return math.Abs(ours-pub) <= 1.96*math.Sqrt(v)+roundingSlack+1e-9
}

// Reproduction compares every number of the tables (inputs: one aggregate
// cell per table, named by the table) with the paper's published values.
// Outputs: "tex" (paper/reproduction.tex) and "report" (JSON ReproReport).
//
// Version history:
//
//   - 1: every number against its published value.
//   - 2: a citation column; intervals spaced in math mode.
//   - 3: notes and sources in a wrapped column; numbers blank in the paper
//     and not run here are left out; the counts are JSON fields.
//   - 6: each note on its own line under its number, kept on its page
//     (versions 4 and 5 were never released).
//   - 7: the report's citations read as LaTeX: "tab:x" is a \ref, an
//     opening quote is a real one.
//   - 8: a cell whose s.d. over seeds is more than twice the paper's is
//     judged with the paper's s.d. and flagged.
//   - 9: params are lists of records (published values, claims) instead of
//     parallel slices; the outputs are byte-identical.
//   - 10: a single published run naming noise_from is judged with the s.d.
//     of that number over our seeds (one run's noise on each side) instead
//     of none.
//   - 11: the verdict summary (ReproReport.Summary) opens the section.
var Reproduction = &pipeline.Stage{
	Name:      "reproduction",
	Version:   11,
	NewParams: func() any { return &ReproductionParams{} },
	Run: func(ctx context.Context, rc *pipeline.RunContext) error {
		p := rc.Params.(*ReproductionParams)
		var recs []*AggregateRecord
		for _, t := range p.Tables {
			b, err := rc.Input(t).Read(ctx, "aggregate")
			if err != nil {
				return fmt.Errorf("input %s: %w", t, err)
			}
			rec := &AggregateRecord{}
			if err := json.Unmarshal(b, rec); err != nil {
				return fmt.Errorf("input %s: %w", t, err)
			}
			recs = append(recs, rec)
		}
		rep, err := Reproduce(p, recs)
		if err != nil {
			return err
		}
		b, err := json.MarshalIndent(rep, "", " ")
		if err != nil {
			return err
		}
		rc.Put("tex", []byte(ReproductionTeX(rep)))
		rc.Put("report", append(b, '\n'))
		return nil
	},
}

// Reproduce lists every number of recs against the published values.
func Reproduce(p *ReproductionParams, recs []*AggregateRecord) (*ReproReport, error) {
	pub := make(map[string]*PublishedValue, len(p.Values))
	for i := range p.Values {
		pub[p.Values[i].ID] = &p.Values[i]
	}
	used := map[string]bool{}
	rep := &ReproReport{Profile: p.Profile, Stamp: p.Stamp, spread: map[string]AggCell{}}
	for _, rec := range recs {
		for _, row := range rec.Rows {
			for _, c := range row {
				if c.Status == "ok" {
					rep.spread[c.ID] = c
				}
			}
		}
	}
	for _, rec := range recs {
		for _, row := range rec.Rows {
			for _, c := range row {
				if c.Status == "n/a" || c.Status == "empty" {
					continue
				}
				rep.addCell(c, pub[c.ID])
				used[c.ID] = true
			}
		}
		for _, c := range rec.Comparisons {
			rep.addComparison(c, pub[c.ID])
			used[c.ID] = true
		}
	}
	for _, v := range p.Values {
		if !used[v.ID] {
			rep.Rows = append(rep.Rows, ReproRow{ID: v.ID, Cite: v.Cite, Published: fmt1(v.Mean), Note: "published, but no table renders this ID"})
		}
	}
	rep.checkClaims(p, recs)
	return rep, nil
}

// addCell adds the row of table cell c (one that applies), judged against its published
// value v (nil when the paper has none).
func (rep *ReproReport) addCell(c AggCell, v *PublishedValue) {
	r := ReproRow{ID: c.ID}
	if v != nil {
		r.Cite = v.Cite
		r.Published = fmt1(v.Mean)
		if v.SD != nil && *v.SD >= 0 {
			r.Published += " ± " + fmt1(*v.SD)
		}
	}
	if c.Status != "ok" {
		// Blank in the paper and here: nothing to report.
		if v == nil && strings.HasPrefix(c.Status, "not run") {
			return
		}
		r.Note = c.Status
		if v != nil {
			rep.NotRun++
		}
		rep.Rows = append(rep.Rows, r)
		return
	}
	r.Ours = fmt1(c.Acc.Mean) + " ± " + fmt1(c.Acc.SD)
	if c.N != c.Expected {
		r.Note = fmt.Sprintf("n=%d of %d (missing seeds %v)", c.N, c.Expected, c.Missing)
	}
	if v != nil {
		rep.judge(&r, c, v)
	}
	rep.Rows = append(rep.Rows, r)
}

// addComparison adds the row of a paired difference c, judged against its
// published value v (nil when the paper has none).
func (rep *ReproReport) addComparison(c Comparison, v *PublishedValue) {
	r := ReproRow{ID: c.ID}
	if v != nil {
		r.Cite = v.Cite
		r.Published = signed1(v.Mean)
		if v.Lo != nil {
			r.Published += " [" + signed1(*v.Lo) + ", " + signed1(*v.Hi) + "]"
		}
	}
	if c.Status != "ok" {
		r.Note = c.Status
		if v != nil {
			rep.NotRun++
		}
		rep.Rows = append(rep.Rows, r)
		return
	}
	r.Ours = fmt.Sprintf("%s [%s, %s]", signed1(c.Diff), signed1(c.Lo), signed1(c.Hi))
	r.Note = fmt.Sprintf("%s - %s, %s, %d paired seeds", c.A, c.B, c.Protocol, c.N)
	if v != nil {
		// A stated difference agrees when the published estimate
		// lies in our paired interval (widened by its rounding).
		r.Diff, r.HasDiff = c.Diff-v.Mean, true
		r.Within = "no"
		if v.Mean >= c.Lo-roundingSlack && v.Mean <= c.Hi+roundingSlack {
			r.Within = "yes"
			rep.Within++
		}
		rep.Compared++
	}
	rep.Rows = append(rep.Rows, r)
}

// judge compares the ok cell c with its published value v, filling r's
// difference and verdict and counting it in rep.
func (rep *ReproReport) judge(r *ReproRow, c AggCell, v *PublishedValue) {
	np := v.N
	if np == 0 {
		np = c.Expected
	}
	sp := -1.0 // not published
	if v.SD != nil {
		sp = *v.SD
	}
	r.Diff, r.HasDiff = c.Acc.Mean-v.Mean, true
	r.Within = "no"
	// A number must not agree only because our seeds
	// spread widely: above twice the paper's s.d., ours is
	// judged with the paper's s.d. in its place, and flagged.
	so := c.Acc.SD
	if ref, ok := rep.spread[v.NoiseFrom]; v.NoiseFrom != "" && c.N == 1 {
		// One run against one published run: each carries one run's
		// seed noise, estimated by the s.d. of the same configuration
		// over our seeds.
		if ok && ref.N > 1 {
			so, sp, np = ref.Acc.SD, ref.Acc.SD, 1
			r.Note = strings.TrimPrefix(r.Note+"; ", "; ") + fmt.Sprintf("a single run: judged with the s.d. %s of %s over %d seeds, on both sides", fmt1(so), v.NoiseFrom, ref.N)
		} else {
			r.Note = strings.TrimPrefix(r.Note+"; ", "; ") + fmt.Sprintf("a single run: %s has no spread here to judge it with", v.NoiseFrom)
		}
	}
	if sp > 0 && c.N > 1 && so > 2*sp {
		so = sp
		rep.WideSD++
		r.Note = strings.TrimPrefix(r.Note+"; ", "; ") + fmt.Sprintf("our s.d. %s is more than twice the paper's %s (judged with the paper's)", fmt1(c.Acc.SD), fmt1(sp))
	}
	if WithinNoise(c.Acc.Mean, so, c.N, v.Mean, math.Max(sp, 0), np) {
		r.Within = "yes"
		rep.Within++
	}
	rep.Compared++
}

// checkClaims judges every claim of p on the ok cells' means of recs.
func (rep *ReproReport) checkClaims(p *ReproductionParams, recs []*AggregateRecord) {
	means := map[string]float64{}
	for _, rec := range recs {
		for _, row := range rec.Rows {
			for _, c := range row {
				if c.Status == "ok" {
					means[c.ID] = c.Acc.Mean
				}
			}
		}
	}
	for _, c := range p.Claims {
		cr := checkClaim(means, c.Holds)
		cr.ID, cr.Text, cr.Cite = c.ID, c.Text, c.Cite
		if cr.Verdict == "holds" {
			rep.ClaimsHeld++
		}
		rep.Claims = append(rep.Claims, cr)
	}
}

// checkClaim evaluates a claim's conditions on our means (at the rounding
// the tables print: equal to one decimal satisfies >= and <=).
func checkClaim(means map[string]float64, holds []string) ClaimResult {
	cr := ClaimResult{Verdict: "holds"}
	var parts []string
	operand := func(s string) (float64, string, bool) {
		if v, ok := means[s]; ok {
			return v, s, true
		}
		if v, err := strconv.ParseFloat(s, 64); err == nil {
			return v, "", true
		}
		return 0, s, false
	}
	for _, h := range holds {
		a, op, b, err := parseCondition(h)
		if err != nil {
			return ClaimResult{Verdict: "not computed: " + err.Error()}
		}
		x, xn, okx := operand(a)
		y, yn, oky := operand(b)
		if !okx || !oky {
			missing := xn
			if okx {
				missing = yn
			}
			cr.Verdict = "not computed: " + missing + " has no value here"
			parts = append(parts, h)
			continue
		}
		xr, _ := strconv.ParseFloat(fmt1(x), 64)
		yr, _ := strconv.ParseFloat(fmt1(y), 64)
		ok := map[string]bool{">=": xr >= yr, "<=": xr <= yr, ">": xr > yr, "<": xr < yr}[op]
		if !ok && cr.Verdict == "holds" {
			cr.Verdict = "fails"
		}
		name := func(n string, v float64) string {
			if n == "" {
				return fmt1(v)
			}
			return fmt.Sprintf("%s %s", n, fmt1(v))
		}
		parts = append(parts, fmt.Sprintf("%s %s %s", name(xn, x), op, name(yn, y)))
	}
	cr.Detail = strings.Join(parts, "; ")
	return cr
}

// ReproductionTeX renders the report as a longtable.
func ReproductionTeX(rep *ReproReport) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%% reproduction.tex: generated by repro (reproduction, profile %s). Do not edit.\n", rep.Profile)
	b.WriteString("\\section*{Reproduction report}\n")
	fmt.Fprintf(&b, "\\noindent\\textbf{%s.}\\par\\medskip\n", latexEscape(rep.Summary()))
	if rep.Stamp != "" {
		fmt.Fprintf(&b, "\\noindent\\fbox{\\parbox{0.97\\linewidth}{\\centering\\textbf{%s}}}\\par\\medskip\n", latexEscape(rep.Stamp))
	}
	fmt.Fprintf(&b, "\\noindent Profile \\texttt{%s}. For every number: the paper's published value, ours, the difference (ours $-$ published) and whether it lies within the seed noise ", latexEscape(rep.Profile))
	b.WriteString("(table cells: $|d| \\le 1.96\\sqrt{s_o^2/n_o + s_p^2/n_p} + 0.05$; stated differences: the published estimate inside our seed-paired 95\\% bootstrap interval $\\pm0.05$). ")
	if rep.WideSD > 0 {
		fmt.Fprintf(&b, " %d cell(s) have an s.d. over seeds more than twice the paper's: each is judged with the paper's s.d. instead, so that a wide spread alone never counts as agreement.", rep.WideSD)
	}
	b.WriteString("\n\n")
	b.WriteString("{\\scriptsize\n\\begin{longtable}{@{}lllrl@{}}\n\\toprule\nID & published & ours & diff. & within \\\\\n\\quad\\textit{note; source of the published value} &&&& \\\\\n\\midrule\n\\endhead\n")
	for _, r := range rep.Rows {
		d := ""
		if r.HasDiff {
			d = "$" + signed1(r.Diff) + "$"
		}
		var notes []string
		if r.Note != "" {
			notes = append(notes, texQuotes(latexEscape(r.Note)))
		}
		if r.Cite != "" {
			notes = append(notes, citeTeX(r.Cite))
		}
		end := `\\`
		if len(notes) > 0 {
			end = `\\*` // longtable: no page break before the note
		}
		fmt.Fprintf(&b, "\\texttt{%s} & %s & %s & %s & %s %s\n", latexEscape(r.ID), texPM(r.Published), texPM(r.Ours), d, r.Within, end)
		if len(notes) > 0 {
			fmt.Fprintf(&b, "\\multicolumn{5}{@{\\quad}p{0.92\\linewidth}@{}}{\\textit{%s}} \\\\[2pt]\n", strings.Join(notes, "; "))
		}
	}
	b.WriteString("\\bottomrule\n\\end{longtable}}\n")
	if len(rep.Claims) > 0 {
		fmt.Fprintf(&b, "\n\\subsection*{Orderings the paper claims}\n\\noindent %d of %d hold on our numbers (means at one decimal).\n\\begin{itemize}\n", rep.ClaimsHeld, len(rep.Claims))
		for _, c := range rep.Claims {
			fmt.Fprintf(&b, "\\item \\textbf{%s}: %s (\\texttt{%s}; %s). {\\footnotesize %s}\n", latexEscape(c.Verdict), texQuotes(latexEscape(c.Text)), latexEscape(c.ID), citeTeX(c.Cite), latexEscape(c.Detail))
		}
		b.WriteString("\\end{itemize}\n")
	}
	return b.String()
}

// tableLabel is a table's LaTeX label in a published value's citation.
var tableLabel = regexp.MustCompile(`(?:Table )?\b(tab:[A-Za-z0-9:.-]+)`)

// citeTeX renders a citation of published.toml ("Table tab:ablation, row 1
// 'full system'") as LaTeX: each label a reference (Table~\ref{tab:ablation}),
// the rest escaped, opening quotes turned.
func citeTeX(s string) string {
	var b strings.Builder
	last := 0
	for _, m := range tableLabel.FindAllStringSubmatchIndex(s, -1) {
		b.WriteString(latexEscape(s[last:m[0]]))
		fmt.Fprintf(&b, `Table~\ref{%s}`, s[m[2]:m[3]])
		last = m[1]
	}
	b.WriteString(latexEscape(s[last:]))
	return texQuotes(b.String())
}

// texQuotes turns a straight single quote that opens a quotation (at the
// start, or after a space or parenthesis) into LaTeX's opening quote; the
// others (closing quotes, apostrophes) are right as they are.
func texQuotes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\'' && (i == 0 || strings.IndexByte(" ({", s[i-1]) >= 0) {
			b.WriteByte('`')
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

func texPM(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(s, " ± ", `\pm`)
	s = strings.ReplaceAll(s, " [", `\ [`)
	return "$" + strings.ReplaceAll(s, ", ", `,\ `) + "$"
}
