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

	"repro/pipeline"
)

// RenderParams lay out one table's LaTeX (per-row slices follow the rows of
// the aggregate input).
type RenderParams struct {
	Table      string   `toml:"table"`
	Label      string   `toml:"label"`
	Caption    string   `toml:"caption"`
	Size       string   `toml:"size"`
	Header     string   `toml:"header"`
	Titles     []string `toml:"titles"`
	Bold       []string `toml:"bold"`
	ParamTitle string   `toml:"param_title"`
	Params     []string `toml:"params"` // per row, LaTeX ("" without a param column)
	Labels     []string `toml:"labels"`
	Midrule    []bool   `toml:"midrule"`
	Reference  []bool   `toml:"reference"`
	Stamp      string   `toml:"stamp"`
	Profile    string   `toml:"profile"`
	// Decimals is each cell's number of decimals (row-major); absent, one
	// for every cell, as the paper prints accuracies.
	Decimals []int `toml:"decimals,omitzero"`
	// MeanOnly marks the cells (row-major) shown without their s.d. (a
	// matrix table's entries); absent, none.
	MeanOnly []bool `toml:"mean_only,omitzero"`
	// ShowNotRun prints a cell that was not run as "not run" with a note
	// under the table giving the reason (one letter per distinct reason);
	// off, such a cell is blank, as the paper leaves the cells it did not
	// run (its captions say "blank: not run"), and the reason is only in
	// the row's comment.
	ShowNotRun bool `toml:"show_not_run,omitzero"`
}

// decimals is the number of decimals of cell (r, c).
func (p *RenderParams) decimals(r, c, nc int) int {
	if p.Decimals == nil {
		return 1
	}
	return p.Decimals[r*nc+c]
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
var Render = &pipeline.Stage{
	Name:      "render",
	Version:   4,
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
	for c, protocol := range rec.Protocols {
		if !contains(p.Bold, protocol) {
			continue
		}
		best := math.Inf(-1)
		var cand []int
		for r := range rec.Rows {
			x := &rec.Rows[r][c]
			if r < len(p.Reference) && p.Reference[r] || x.Status != "ok" || x.N != x.Expected || x.N != rec.DefaultSeeds {
				continue
			}
			v, _ := strconv.ParseFloat(fmtN(x.Acc.Mean, p.decimals(r, c, len(rec.Protocols))), 64)
			cand = append(cand, r)
			best = math.Max(best, v)
		}
		for _, r := range cand {
			if v, _ := strconv.ParseFloat(fmtN(rec.Rows[r][c].Acc.Mean, p.decimals(r, c, len(rec.Protocols))), 64); v == best {
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
	for c, protocol := range rec.Protocols {
		if contains(p.Bold, protocol) && c < len(p.Titles) {
			cols = append(cols, "`"+p.Titles[c]+"'")
		}
	}
	if len(cols) == 0 {
		return ""
	}
	excluded := fmt.Sprintf("rows run on fewer than %d seeds", rec.DefaultSeeds)
	if slices.Contains(p.Reference, true) {
		excluded += " and the reference rows"
	}
	where := "column " + cols[0]
	if len(cols) > 1 {
		where = "columns " + strings.Join(cols[:len(cols)-1], ", ") + " and " + cols[len(cols)-1]
	}
	return fmt.Sprintf(" Bold: the best mean (as printed) in the %s; %s are never bold.", where, excluded)
}

func contains(xs []string, s string) bool {
	for _, x := range xs {
		if x == s {
			return true
		}
	}
	return false
}

// RenderTable renders rec with layout p: the .tex text and its sidecar. It
// is one body because it walks the render params' parallel per-cell slices
// (decimals, mean-only, labels, titles) in step with the LaTeX it writes.
func RenderTable(p *RenderParams, rec *AggregateRecord) (string, *Sidecar, error) {
	if p.Decimals != nil && len(p.Decimals) != len(rec.Rows)*len(rec.Protocols) {
		return "", nil, fmt.Errorf("render %s: %d decimals for %d cells", p.Table, len(p.Decimals), len(rec.Rows)*len(rec.Protocols))
	}
	if p.MeanOnly != nil && len(p.MeanOnly) != len(rec.Rows)*len(rec.Protocols) {
		return "", nil, fmt.Errorf("render %s: %d mean_only flags for %d cells", p.Table, len(p.MeanOnly), len(rec.Rows)*len(rec.Protocols))
	}
	if len(p.Labels) != len(rec.Rows) || len(p.Titles) != len(rec.Protocols) {
		return "", nil, fmt.Errorf("render %s: %d labels for %d rows, %d titles for %d columns", p.Table, len(p.Labels), len(rec.Rows), len(p.Titles), len(rec.Protocols))
	}
	hasParam := p.ParamTitle != ""
	side := &Sidecar{Table: p.Table, Profile: p.Profile, Stamp: p.Stamp, Source: "aggregate/" + rec.Table, ParamTitle: p.ParamTitle, Comparisons: rec.Comparisons}
	best := bestRows(p, rec)
	var notes notRunNotes
	var b strings.Builder
	fmt.Fprintf(&b, "%% %s.tex: generated by repro (render/%s, profile %s) from aggregate/%s. Do not edit:\n", p.Table, p.Table, p.Profile, rec.Table)
	fmt.Fprintf(&b, "%% change pipeline.toml and run `make paper`. Each row's comment gives its number IDs;\n")
	fmt.Fprintf(&b, "%% `repro why paper/tables/%s.tex:<row>:<column>` or `repro why <ID>` traces a number.\n", p.Table)
	b.WriteString("\\begin{table}[t]\n\\centering\n")
	fmt.Fprintf(&b, "\\caption{%s%s}\n", p.Caption, boldRule(p, rec))
	if p.Label != "" {
		fmt.Fprintf(&b, "\\label{%s}\n", p.Label)
	}
	if p.Stamp != "" {
		fmt.Fprintf(&b, "\\fbox{\\parbox{0.95\\linewidth}{\\centering\\footnotesize\\textbf{%s}}}\\par\\medskip\n", latexEscape(p.Stamp))
	}
	if p.Size != "" {
		b.WriteString(p.Size + "\n")
	}
	cols := "l"
	if hasParam {
		cols += "c"
	}
	cols += strings.Repeat("c", len(rec.Protocols))
	fmt.Fprintf(&b, "\\begin{tabular}{@{}%s@{}}\n\\toprule\n", cols)
	head := []string{p.Header}
	if hasParam {
		head = append(head, p.ParamTitle)
	}
	head = append(head, p.Titles...)
	b.WriteString(strings.Join(head, " & ") + ` \\` + "\n\\midrule\n")
	for r, row := range rec.Rows {
		if r < len(p.Midrule) && p.Midrule[r] && r > 0 {
			b.WriteString("\\midrule\n")
		}
		fields := []string{p.Labels[r]}
		param := ""
		if hasParam {
			if r < len(p.Params) {
				param = p.Params[r]
			}
			fields = append(fields, param)
		}
		var ids []string
		for c := range row {
			x := row[c]
			txt := cellText(&x, best[[2]int{r, c}], p.decimals(r, c, len(row)), p.MeanOnly != nil && p.MeanOnly[r*len(row)+c])
			if why, ok := strings.CutPrefix(x.Status, "not run: "); ok && p.ShowNotRun {
				txt = `{\scriptsize not run$^{` + notes.mark(why) + `}$}`
			}
			fields = append(fields, txt)
			side.Numbers = append(side.Numbers, NumberRef{ID: x.ID, Row: r + 1, Column: c + 1, Label: p.Labels[r], Protocol: x.Protocol, Param: param, Text: txt, AggCell: x})
			note := ""
			switch {
			case x.Status == "ok" && len(x.Missing) > 0:
				note = fmt.Sprintf(" (n=%d of %d; missing seeds %v)", x.N, x.Expected, x.Missing)
			case x.Status != "ok" && x.Status != "n/a" && x.Status != "empty":
				note = " (" + x.Status + ")"
			}
			ids = append(ids, x.ID+note)
		}
		line := strings.TrimRight(strings.Join(fields, " & "), " ")
		fmt.Fprintf(&b, "%s \\\\ %% row %d: %s\n", line, r+1, strings.Join(ids, ", "))
	}
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

// ReproductionParams are the paper's published values (parallel slices, in
// the published file's order) and the tables they are compared with.
type ReproductionParams struct {
	Tables  []string  `toml:"tables"` // input names: the tables' aggregate cells
	IDs     []string  `toml:"ids"`
	Means   []float64 `toml:"means"`
	SDs     []float64 `toml:"sds"` // -1: not published
	Ns      []int     `toml:"ns"`  // 0: the row's expected seed count
	CI      []bool    `toml:"ci"`
	Los     []float64 `toml:"los"`
	His     []float64 `toml:"his"`
	Cites   []string  `toml:"cites"`
	Stamp   string    `toml:"stamp"`
	Profile string    `toml:"profile"`
	// The orderings the paper claims (parallel slices; ClaimHolds is each
	// claim's conditions joined by "; "). Absent when none is declared.
	ClaimIDs   []string `toml:"claim_ids,omitzero"`
	ClaimTexts []string `toml:"claim_texts,omitzero"`
	ClaimCites []string `toml:"claim_cites,omitzero"`
	ClaimHolds []string `toml:"claim_holds,omitzero"`
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
var Reproduction = &pipeline.Stage{
	Name:      "reproduction",
	Version:   8,
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
	n := len(p.IDs)
	if len(p.Means) != n || len(p.SDs) != n || len(p.Ns) != n || len(p.CI) != n || len(p.Los) != n || len(p.His) != n || len(p.Cites) != n {
		return nil, fmt.Errorf("reproduction: published slices of unequal length")
	}
	pub := make(map[string]int, n)
	for i, id := range p.IDs {
		pub[id] = i
	}
	used := map[string]bool{}
	rep := &ReproReport{Profile: p.Profile, Stamp: p.Stamp}
	for _, rec := range recs {
		for _, row := range rec.Rows {
			for _, c := range row {
				if c.Status == "n/a" || c.Status == "empty" {
					continue
				}
				r := ReproRow{ID: c.ID}
				i, has := pub[c.ID]
				if has {
					used[c.ID] = true
					r.Cite = p.Cites[i]
					r.Published = fmt1(p.Means[i])
					if p.SDs[i] >= 0 {
						r.Published += " ± " + fmt1(p.SDs[i])
					}
				}
				if c.Status != "ok" {
					// Blank in the paper and here: nothing to report.
					if !has && strings.HasPrefix(c.Status, "not run") {
						continue
					}
					r.Note = c.Status
					if has {
						rep.NotRun++
					}
					rep.Rows = append(rep.Rows, r)
					continue
				}
				r.Ours = fmt1(c.Acc.Mean) + " ± " + fmt1(c.Acc.SD)
				if c.N != c.Expected {
					r.Note = fmt.Sprintf("n=%d of %d (missing seeds %v)", c.N, c.Expected, c.Missing)
				}
				if has {
					rep.judge(&r, c, p, i)
				}
				rep.Rows = append(rep.Rows, r)
			}
		}
		for _, c := range rec.Comparisons {
			rep.addComparison(c, p, pub, used)
		}
	}
	for i, id := range p.IDs {
		if !used[id] {
			rep.Rows = append(rep.Rows, ReproRow{ID: id, Cite: p.Cites[i], Published: fmt1(p.Means[i]), Note: "published, but no table renders this ID"})
		}
	}
	rep.checkClaims(p, recs)
	return rep, nil
}

// addComparison adds the row of a paired difference c, judged against p's
// published number when pub has its ID (marked in used).
func (rep *ReproReport) addComparison(c Comparison, p *ReproductionParams, pub map[string]int, used map[string]bool) {
	r := ReproRow{ID: c.ID}
	i, has := pub[c.ID]
	if has {
		used[c.ID] = true
		r.Cite = p.Cites[i]
		r.Published = signed1(p.Means[i])
		if p.CI[i] {
			r.Published += " [" + signed1(p.Los[i]) + ", " + signed1(p.His[i]) + "]"
		}
	}
	if c.Status != "ok" {
		r.Note = c.Status
		if has {
			rep.NotRun++
		}
		rep.Rows = append(rep.Rows, r)
		return
	}
	r.Ours = fmt.Sprintf("%s [%s, %s]", signed1(c.Diff), signed1(c.Lo), signed1(c.Hi))
	r.Note = fmt.Sprintf("%s - %s, %s, %d paired seeds", c.A, c.B, c.Protocol, c.N)
	if has {
		// A stated difference agrees when the published estimate
		// lies in our paired interval (widened by its rounding).
		r.Diff, r.HasDiff = c.Diff-p.Means[i], true
		r.Within = "no"
		if p.Means[i] >= c.Lo-roundingSlack && p.Means[i] <= c.Hi+roundingSlack {
			r.Within = "yes"
			rep.Within++
		}
		rep.Compared++
	}
	rep.Rows = append(rep.Rows, r)
}

// judge compares the ok cell c with published number i of p, filling r's
// difference and verdict and counting it in rep.
func (rep *ReproReport) judge(r *ReproRow, c AggCell, p *ReproductionParams, i int) {
	np := p.Ns[i]
	if np == 0 {
		np = c.Expected
	}
	r.Diff, r.HasDiff = c.Acc.Mean-p.Means[i], true
	r.Within = "no"
	// A number must not agree only because our seeds
	// spread widely: above twice the paper's s.d., ours is
	// judged with the paper's s.d. in its place, and flagged.
	so := c.Acc.SD
	if sp := p.SDs[i]; sp > 0 && c.N > 1 && so > 2*sp {
		so = sp
		rep.WideSD++
		r.Note = strings.TrimPrefix(r.Note+"; ", "; ") + fmt.Sprintf("our s.d. %s is more than twice the paper's %s (judged with the paper's)", fmt1(c.Acc.SD), fmt1(sp))
	}
	if WithinNoise(c.Acc.Mean, so, c.N, p.Means[i], math.Max(p.SDs[i], 0), np) {
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
	for i, id := range p.ClaimIDs {
		cr := checkClaim(means, p.ClaimHolds[i])
		cr.ID, cr.Text, cr.Cite = id, p.ClaimTexts[i], p.ClaimCites[i]
		if cr.Verdict == "holds" {
			rep.ClaimsHeld++
		}
		rep.Claims = append(rep.Claims, cr)
	}
}

// checkClaim evaluates a claim's conditions ("; "-joined) on our means (at
// the rounding the tables print: equal to one decimal satisfies >= and <=).
func checkClaim(means map[string]float64, holds string) ClaimResult {
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
	for _, h := range strings.Split(holds, "; ") {
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
	if rep.Stamp != "" {
		fmt.Fprintf(&b, "\\noindent\\fbox{\\parbox{0.97\\linewidth}{\\centering\\textbf{%s}}}\\par\\medskip\n", latexEscape(rep.Stamp))
	}
	fmt.Fprintf(&b, "\\noindent Profile \\texttt{%s}. For every number: the paper's published value, ours, the difference (ours $-$ published) and whether it lies within the seed noise ", latexEscape(rep.Profile))
	b.WriteString("(table cells: $|d| \\le 1.96\\sqrt{s_o^2/n_o + s_p^2/n_p} + 0.05$; stated differences: the published estimate inside our seed-paired 95\\% bootstrap interval $\\pm0.05$). ")
	fmt.Fprintf(&b, "%d numbers compared, %d within the noise, %d not run.", rep.Compared, rep.Within, rep.NotRun)
	if len(rep.Claims) > 0 {
		fmt.Fprintf(&b, " %d of %d claimed orderings hold.", rep.ClaimsHeld, len(rep.Claims))
	}
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
