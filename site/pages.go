package site

import (
	"fmt"
	"slices"
	"strings"

	"repro/internal/latex"
	"repro/judge"
	"repro/numbers"
	"repro/verdict"
)

// index is the site's front page: the verdict counts, the claims, the
// tables and figures, and every number that differs.
func (s *site) index() []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<h1>Reproduction (profile %s)</h1>\n", esc(s.in.Profile))
	if rs := recordRevisions(s.in.Records); rs != "" {
		fmt.Fprintf(&b, "<p class=\"meta\">seeds computed by code revision %s</p>\n", rs)
	}
	rep := s.in.Report
	if rep != nil {
		if rep.Stamp != "" {
			fmt.Fprintf(&b, "<p class=\"stamp\">%s</p>\n", esc(rep.Stamp))
		}
		fmt.Fprintf(&b, "<p class=\"summary\">%s</p>\n", esc(rep.Summary()))
		b.WriteString("<h2>Verdicts</h2>\n<table class=\"tally\"><thead><tr><th></th><th>judged</th><th>agree</th><th>differ</th><th>inconclusive</th><th>not run</th></tr></thead><tbody>\n")
		tallyRow := func(name, href string, t judge.Tally) {
			label := esc(name)
			if href != "" {
				label = fmt.Sprintf(`<a href="%s">%s</a>`, esc(href), label)
			}
			fmt.Fprintf(&b, "<tr><th>%s</th><td>%d</td><td class=\"agree\">%d</td><td class=\"differ\">%d</td><td class=\"inconclusive\">%d</td><td class=\"notrun\">%d</td></tr>\n", label, t.Judged, t.Agree, t.Differ, t.Inconclusive, t.NotRun)
		}
		tallyRow("numbers", "", rep.Numbers)
		tallyRow("claims", "#claims", rep.ClaimTally)
		for _, g := range rep.Groups {
			tallyRow(g.Group, s.groupPage(g.Group), g.Tally)
		}
		b.WriteString("</tbody></table>\n")
	}
	b.WriteString("<h2>Tables</h2>\n<ul class=\"cols\">\n")
	for _, t := range s.in.Tables {
		fmt.Fprintf(&b, "<li><a href=\"tables/%s.html\">%s</a> (%d numbers)</li>\n", esc(t.Table), esc(t.Table), len(t.Numbers)+len(t.Comparisons))
	}
	b.WriteString("</ul>\n<h2>Figures</h2>\n<ul class=\"cols\">\n")
	for _, f := range s.in.Figures {
		fmt.Fprintf(&b, "<li><a href=\"figures/%s.html\">%s</a> (%d points)</li>\n", esc(f.Figure), esc(f.Figure), len(f.Points)+len(f.Lines))
	}
	b.WriteString("</ul>\n")
	if rep != nil {
		b.WriteString("<h2 id=\"differ\">Numbers that differ</h2>\n")
		b.WriteString("<table class=\"list\"><thead><tr><th>number</th><th>ours</th><th>paper</th><th>difference, 90% interval, test</th><th>where in the paper</th></tr></thead><tbody>\n")
		nd := 0
		for i := range rep.Rows {
			r := &rep.Rows[i]
			if r.Verdict != verdict.Differs {
				continue
			}
			nd++
			fmt.Fprintf(&b, "<tr><td><a href=\"%s\">%s</a></td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
				esc(s.cardOf(r.ID, "")), esc(r.ID), esc(r.Ours), esc(r.Published), esc(judgementText(r.Judgement)), esc(source(r.Cite, r.Line)))
		}
		b.WriteString("</tbody></table>\n")
		if nd == 0 {
			b.WriteString("<p>None.</p>\n")
		}
		s.disputed(&b, rep.Disputed)
		b.WriteString("<h2 id=\"claims\">Claims</h2>\n")
		if len(rep.Claims) == 0 {
			b.WriteString("<p>None judged.</p>\n")
		} else {
			b.WriteString("<table class=\"list\"><thead><tr><th>claim</th><th>verdict</th><th>conditions</th></tr></thead><tbody>\n")
			for _, c := range rep.Claims {
				var conds []string
				for _, x := range c.Conditions {
					conds = append(conds, fmt.Sprintf("<span class=\"%s\">%s</span>: %s — %s", outcomeClass(x.Verdict), esc(x.Verdict.String()), esc(plainLabel(x.Text)), esc(plainLabel(x.Detail))))
				}
				if c.Cause != "" {
					conds = append(conds, "<span class=\"meta\">known cause: "+esc(c.Cause)+"</span>")
				}
				fmt.Fprintf(&b, "<tr><td>%s<br><span class=\"meta\">%s</span></td><td class=\"%s\">%s</td><td>%s</td></tr>\n",
					esc(plainLabel(c.Text)), esc(source(c.Cite, c.Line)), outcomeClass(c.Verdict), esc(c.Verdict.String()), strings.Join(conds, "<br>"))
			}
			b.WriteString("</tbody></table>\n")
		}
	}
	return page("Reproduction", "", b.String())
}

// disputed writes the report's table of disputed rows (none: nothing):
// per row the paper, the authors' code rerun here and ours, the three
// verdicts, and under them the notes with every seed's value.
func (s *site) disputed(b *strings.Builder, rows []judge.DisputedResult) {
	if len(rows) == 0 {
		return
	}
	b.WriteString("<h2 id=\"disputed\">Disputed rows, settled by seeds on both codes</h2>\n")
	b.WriteString("<p class=\"meta\">Each row: the paper (its seeds, as printed), the authors' code rerun here and ours at every seed of <code>[disputed]</code> in <code>pipeline.toml</code>: mean ± s.d., n, median and collapsed seeds (a seed 10 points below its column's median; \"&gt;=\": a lower bound, the median itself collapsed). Verdicts: the second minus the first, by the report's rule. docs/disputed.md reads them.</p>\n")
	b.WriteString("<table class=\"list\"><thead><tr><th>row</th><th>paper</th><th>authors' code, here</th><th>ours</th><th>verdicts</th></tr></thead><tbody>\n")
	for _, r := range rows {
		id := esc(r.ID)
		if s.owner(r.ID) != nil {
			id = fmt.Sprintf(`<a href="%s">%s</a>`, esc(s.cardOf(r.ID, "")), id)
		}
		var verdicts []string
		for _, pr := range r.Pairs {
			out := "not judged"
			if pr.Mean != nil {
				out = pr.Outcome.String()
			}
			verdicts = append(verdicts, fmt.Sprintf(`%s: <span class="%s">%s</span>`, esc(pr.Name), outcomeClass(pr.Outcome), esc(out)))
		}
		fmt.Fprintf(b, "<tr><td>%s<br><span class=\"meta\">%s</span></td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n",
			esc(plainLabel(r.Label)), id, esc(r.Paper.Text(true)), esc(r.Authors.Text(false)), esc(r.Ours.Text(false)), strings.Join(verdicts, "<br>"))
		var notes []string
		for _, n := range r.Notes() {
			notes = append(notes, esc(n))
		}
		fmt.Fprintf(b, "<tr><td colspan=\"5\"><details><summary class=\"meta\">tests, seeds</summary><p class=\"meta\">%s</p></details></td></tr>\n", strings.Join(notes, "<br>"))
	}
	b.WriteString("</tbody></table>\n")
}

// groupPage is the page of a table or figure group ("" when none).
func (s *site) groupPage(g string) string {
	if name, ok := strings.CutPrefix(g, "fig/"); ok {
		for _, f := range s.in.Figures {
			if f.Figure == name {
				return "figures/" + name + ".html"
			}
		}
		return ""
	}
	if s.tableOf[g] != nil {
		return "tables/" + g + ".html"
	}
	return ""
}

// cardOf is the link to the card that shows id (its own, or its cell's).
func (s *site) cardOf(id, up string) string {
	if n := s.owner(id); n != nil {
		return cardHref(n.id, up)
	}
	return cardHref(id, up)
}

// source names the paper's line of a published value.
func source(cite string, line int) string {
	if line > 0 {
		return fmt.Sprintf("%s (paper.tex line %d)", plainLabel(cite), line)
	}
	return plainLabel(cite)
}

// judgementText states a judgement in one line ("" when none).
func judgementText(j *verdict.Judgement) string {
	if j == nil {
		return ""
	}
	if c := j.Certificate(); c != "" {
		return c + ": " + j.String()
	}
	return j.String()
}

// tablePage lays a table out as in the paper: its rows and columns, every
// number a link to its card, coloured by its verdict.
func (s *site) tablePage(t *numbers.Sidecar) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<h1>Table %s</h1>\n<p class=\"meta\">from <code>%s</code>, profile %s</p>\n", esc(t.Table), esc(t.Source), esc(t.Profile))
	if t.Stamp != "" {
		fmt.Fprintf(&b, "<p class=\"stamp\">%s</p>\n", esc(t.Stamp))
	}
	cols := map[int]string{}
	maxCol := 0
	for _, n := range t.Numbers {
		cols[n.Column] = n.Protocol
		maxCol = max(maxCol, n.Column)
	}
	decl := s.in.TableDecls[t.Table]
	if decl.Caption != "" {
		fmt.Fprintf(&b, "<p class=\"caption\">%s</p>\n", latex.ToHTML(decl.Caption))
	}
	b.WriteString("<table class=\"paper\"><thead><tr><th></th>")
	if t.ParamTitle != "" {
		fmt.Fprintf(&b, "<th>%s</th>", esc(plainLabel(t.ParamTitle)))
	}
	for c := 1; c <= maxCol; c++ {
		title := strings.ReplaceAll(cols[c], "_", " ") // a protocol ID in words
		if c-1 < len(decl.Titles) && decl.Titles[c-1] != "" {
			title = plainLabel(decl.Titles[c-1])
		}
		fmt.Fprintf(&b, "<th>%s</th>", esc(title))
	}
	b.WriteString("</tr></thead><tbody>\n")
	row := 0
	for i := range t.Numbers {
		n := &t.Numbers[i]
		if n.Row != row {
			if row != 0 {
				b.WriteString("</tr>\n")
			}
			row = n.Row
			fmt.Fprintf(&b, "<tr><th class=\"label\">%s</th>", esc(plainLabel(n.Label)))
			if t.ParamTitle != "" {
				fmt.Fprintf(&b, "<td>%s</td>", esc(plainLabel(n.Param)))
			}
		}
		num := s.nums[n.ID]
		cls := "notrun"
		if r, ok := num.verdictOf(); ok {
			cls = outcomeClass(r.Verdict)
		} else if n.Status.Is(numbers.StatusOK) {
			cls = "unjudged"
		}
		fmt.Fprintf(&b, "<td class=\"%s\"><a href=\"%s\" title=\"%s\">%s</a></td>", cls, esc(cardHref(n.ID, "../")), esc(n.ID), esc(num.text))
	}
	if row != 0 {
		b.WriteString("</tr>\n")
	}
	b.WriteString("</tbody></table>\n")
	b.WriteString(tableLegend)
	if len(t.Comparisons) > 0 {
		b.WriteString("<h2>Seed-paired differences</h2>\n<ul>\n")
		for i := range t.Comparisons {
			c := &t.Comparisons[i]
			fmt.Fprintf(&b, "<li><a href=\"%s\">%s</a>: %s</li>\n", esc(cardHref(c.ID, "../")), esc(c.ID), esc(s.nums[c.ID].text))
		}
		b.WriteString("</ul>\n")
	}
	b.WriteString(legend)
	return page("Table "+t.Table, "../", b.String())
}

// tableLegend says what a table's cells show, as the PDF's captions do.
const tableLegend = `<p class="legend">Each value: mean ± s.d. over the seeds, at the paper's decimals; (n=k): fewer seeds than planned (the card names the missing ones); —: the paper's table has no value there; not run: not computed here (the card says why); blank: not in the table's layout.</p>
`

const legend = `<p class="legend">Verdict: <span class="agree">agrees</span> <span class="differ">differs</span> <span class="inconclusive">inconclusive</span> <span class="unjudged">not in the paper</span> <span class="notrun">not run</span>. Every number opens its card.</p>
`

// figurePage draws a figure's panels as SVG, every point a link to its
// card, above the list of its points and the paper's rendering.
func (s *site) figurePage(f *numbers.FigureSidecar) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<h1>Figure %s</h1>\n<p class=\"meta\">%s, from <code>%s</code>, profile %s</p>\n", esc(f.Figure), esc(f.Label), esc(f.Source), esc(f.Profile))
	if f.Stamp != "" {
		fmt.Fprintf(&b, "<p class=\"stamp\">%s</p>\n", esc(f.Stamp))
	}
	all := append(slices.Clone(f.Points), f.Lines...)
	var series []string
	var panels []int
	for _, p := range all {
		if !slices.Contains(series, p.Series) {
			series = append(series, p.Series)
		}
		if !slices.Contains(panels, p.Panel) {
			panels = append(panels, p.Panel)
		}
	}
	slices.Sort(panels)
	decl := s.in.FigureDecls[f.Figure]
	if decl.Caption != "" {
		fmt.Fprintf(&b, "<p class=\"caption\">%s</p>\n", latex.ToHTML(decl.Caption))
	}
	seriesLabel := func(name string) string {
		if l := decl.Series[name]; l != "" {
			return plainLabel(l)
		}
		return name
	}
	nLines := len(f.Points)
	for _, pn := range panels {
		var pts []plotPoint
		var here []int
		isLine := map[int]bool{}
		for i, p := range all {
			if p.Panel != pn || !p.Status.Is(numbers.StatusOK) || p.Hidden {
				continue
			}
			si := slices.Index(series, p.Series)
			pts = append(pts, plotPoint{href: cardHref(p.ID, "../"), title: p.ID + " = " + p.Text,
				x: p.X, y: p.Y, ylo: p.YLo, yhi: p.YHi, series: si, line: i >= nLines})
			if !slices.Contains(here, si) {
				here = append(here, si)
			}
			isLine[si] = i >= nLines
		}
		if len(pts) == 0 {
			continue
		}
		ax := panelAxes{title: fmt.Sprintf("Panel %d", pn)}
		if pn >= 1 && pn <= len(decl.Panels) {
			d := decl.Panels[pn-1]
			ax = panelAxes{title: plainLabel(d.Title), xlabel: plainLabel(d.XLabel), ylabel: plainLabel(d.YLabel), xlog: d.XLog}
			for _, c := range d.Categories {
				ax.categories = append(ax.categories, plainLabel(c))
			}
			if ax.title == "" {
				ax.title = fmt.Sprintf("Panel %d", pn)
			}
		}
		b.WriteString("<figure class=\"panel\">")
		b.WriteString(plotPanel(pts, ax))
		// A legend per panel: the series this panel draws.
		b.WriteString("<figcaption class=\"legend\">")
		for _, si := range here {
			fmt.Fprintf(&b, "<span>%s %s</span> ", legendSwatch(si, isLine[si]), esc(seriesLabel(series[si])))
		}
		b.WriteString("</figcaption></figure>\n")
	}
	b.WriteString("<p class=\"meta\">Bars: the error bars the paper's figure draws; dashed: reference lines. Every marker opens its number's card.</p>\n")
	if img := s.in.FigureImages[f.Figure]; img != "" {
		fmt.Fprintf(&b, "<details><summary>as rendered for the paper</summary><img src=\"../%s\" alt=\"figure %s\" width=\"600\"></details>\n", esc(img), esc(f.Figure))
	}
	b.WriteString("<table class=\"list\"><thead><tr><th>point</th><th>panel</th><th>series</th><th>x</th><th>value</th></tr></thead><tbody>\n")
	for _, p := range all {
		num := s.nums[p.ID]
		cls := "notrun"
		if r, ok := num.verdictOf(); ok {
			cls = outcomeClass(r.Verdict)
		} else if p.Status.Is(numbers.StatusOK) {
			cls = "unjudged"
		}
		fmt.Fprintf(&b, "<tr><td><a href=\"%s\">%s</a></td><td>%d</td><td>%s</td><td>%s</td><td class=\"%s\">%s</td></tr>\n",
			esc(cardHref(p.ID, "../")), esc(p.ID), p.Panel, esc(p.Series), fmtG(p.X), cls, esc(num.text))
	}
	b.WriteString("</tbody></table>\n")
	b.WriteString(legend)
	return page("Figure "+f.Figure, "../", b.String())
}

// recordRevisions is the code revisions the seeds' records name, each with
// its count of records, most first, as HTML ("" for none). It is what the
// site's numbers were computed from, a function of the store and the
// ledger: never the revision of the binary that renders the site, which
// would change a committed page with every commit (a fresh clone's make
// paper would leave paper/site modified).
func recordRevisions(recs map[string]*SeedRecord) string {
	n := map[string]int{}
	for _, r := range recs {
		rev := r.Revision
		if rev == "" {
			rev = "unknown"
		}
		if len(rev) > 12 {
			rev = rev[:12]
		}
		if r.Dirty {
			rev += "+dirty"
		}
		n[rev]++
	}
	revs := make([]string, 0, len(n))
	for r := range n {
		revs = append(revs, r)
	}
	slices.SortFunc(revs, func(a, b string) int {
		if n[a] != n[b] {
			return n[b] - n[a]
		}
		return strings.Compare(a, b)
	})
	var parts []string
	for _, r := range revs {
		parts = append(parts, fmt.Sprintf("<code>%s</code> (%d)", esc(r), n[r]))
	}
	return strings.Join(parts, ", ")
}
