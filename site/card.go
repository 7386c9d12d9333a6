package site

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"repro/numbers"
	"repro/pipeline"
)

// card is the page of one number: ours against the paper's with the
// verdict and its statistics, the seeds (strip plot and table), the cells,
// keys, configuration, data and code, the paper's line, and the command
// that recomputes it.
func (s *site) card(n *number) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<h1><code>%s</code></h1>\n<p class=\"meta\">%s", esc(n.id), esc(n.where))
	if n.page != "" {
		fmt.Fprintf(&b, " · <a href=\"../%s\">%s</a>", esc(n.page), esc(strings.TrimPrefix(n.group, "fig/")))
	}
	b.WriteString("</p>\n")

	// Ours, the paper's, the verdict.
	b.WriteString("<table class=\"kv\">\n")
	fmt.Fprintf(&b, "<tr><th>ours</th><td class=\"big\">%s</td></tr>\n", esc(n.text))
	for _, r := range n.rows {
		label := "paper"
		if r.ID != n.id {
			label = "paper, " + strings.TrimPrefix(r.ID, n.id+"/")
		}
		ours := ""
		if r.Ours != "" {
			ours = " (ours " + esc(r.Ours) + ")"
		}
		fmt.Fprintf(&b, "<tr><th>%s</th><td><span class=\"big\">%s</span>%s <span class=\"badge %s\">%s</span>", esc(label), esc(r.Published), ours, outcomeClass(r.Verdict), esc(r.Verdict.String()))
		if r.Judgement != nil {
			j := r.Judgement
			if c := j.Certificate(); c != "" {
				fmt.Fprintf(&b, " <span class=\"cert\">%s</span>", esc(c))
			}
			fmt.Fprintf(&b, "<br><span class=\"stats\">%s</span>", esc(j.String()))
			fmt.Fprintf(&b, "<br><span class=\"meta\">kind %s, margin ±%.3g; difference %+.3f, 90%% interval [%+.3f, %+.3f]; p %.3g, BH-adjusted %.3g</span>", j.Kind, j.Margin, j.Diff, j.Lo, j.Hi, j.P, j.PAdj)
		}
		if r.Note != "" {
			fmt.Fprintf(&b, "<br><span class=\"meta\">%s</span>", esc(r.Note))
		}
		if r.Cause != "" {
			fmt.Fprintf(&b, "<br><span class=\"meta\">known cause: %s</span>", esc(r.Cause))
		}
		if r.Restates != "" {
			fmt.Fprintf(&b, "<br><span class=\"meta\">restates %s: one comparison, judged once</span>", esc(r.Restates))
		}
		if len(r.RestatedAt) > 0 {
			fmt.Fprintf(&b, "<br><span class=\"meta\">restated at paper.tex lines %s</span>", esc(intList(r.RestatedAt)))
		}
		fmt.Fprintf(&b, "<br><span class=\"meta\">published in %s</span></td></tr>\n", esc(source(r.Cite, r.Line)))
	}
	if len(n.rows) == 0 {
		b.WriteString("<tr><th>paper</th><td>the paper publishes no value for this number</td></tr>\n")
	}
	if c := n.cmp; c != nil {
		fmt.Fprintf(&b, "<tr><th>difference</th><td>%s − %s (%s), seed-paired over %d seeds %v: ", esc(c.A), esc(c.B), esc(c.Protocol), c.N, c.Seeds)
		if c.Status.OK() {
			fmt.Fprintf(&b, "%+.3f, 95%% bootstrap interval [%+.3f, %+.3f]", c.Diff, c.Lo, c.Hi)
		} else {
			b.WriteString(esc(string(c.Status)))
		}
		b.WriteString("</td></tr>\n")
	}
	if sel := n.sel; sel != nil {
		var cands []string
		for _, c := range sel.Candidates {
			if !c.Status.Is(numbers.StatusOK) {
				cands = append(cands, c.Experiment+" "+c.Status.String())
				continue
			}
			cands = append(cands, fmt.Sprintf("%s %.2f ± %.2f (%d seeds)", c.Experiment, c.Mean, c.SD, c.N))
		}
		fmt.Fprintf(&b, "<tr><th>selected</th><td>%s by %s, of %s</td></tr>\n", esc(sel.Chosen), esc(sel.Rule), esc(strings.Join(cands, "; ")))
	}
	b.WriteString("</table>\n")

	// The seeds of each cell behind it.
	var pub *float64
	if r, ok := n.verdictOf(); ok && r.Judgement != nil && !r.Judgement.Paired && len(n.cells) > 0 && n.cmp == nil {
		p := n.cells[0].cell.Acc.Mean - r.Judgement.Diff
		pub = &p
	}
	revs := map[string]bool{}
	for i, rc := range n.cells {
		s.seeds(&b, rc, pubIf(i == 0, pub), revs)
	}
	if len(revs) > 0 {
		var rs []string
		for r := range revs {
			rs = append(rs, r)
		}
		slices.Sort(rs)
		fmt.Fprintf(&b, "<h2>Code</h2>\n<p>computed by revision %s</p>\n", "<code>"+strings.Join(rs, "</code>, <code>")+"</code>")
	} else if len(n.cells) > 0 {
		fmt.Fprintf(&b, "<h2>Code</h2>\n<p>%s</p>\n", noRecord(n))
	}
	if cmd := s.rerun(n); cmd != "" {
		fmt.Fprintf(&b, "<h2>Recompute</h2>\n<pre>%s</pre>\n", esc(cmd))
	}
	fmt.Fprintf(&b, "<p class=\"meta\">provenance in the terminal: <code>repro why %s</code></p>\n", esc(n.id))
	return page(n.id, "../", b.String())
}

func pubIf(ok bool, p *float64) *float64 {
	if ok {
		return p
	}
	return nil
}

// seeds writes one cell's seeds: the strip plot, then per seed its value,
// train cell, result digest, key and revision, then the configuration's
// difference from the default system and the data digests.
func (s *site) seeds(b *strings.Builder, rc roleCell, pub *float64, revs map[string]bool) {
	c := rc.cell
	title := "Seeds"
	if rc.role != "" {
		title = "Seeds of " + rc.role
	}
	what := "final accuracy ×100"
	if c.Metric != "" && c.Metric != "acc" {
		what = c.Metric
	}
	fmt.Fprintf(b, "<h2>%s</h2>\n<p>experiment <code>%s</code>, protocol %s: %s", esc(title), esc(c.Experiment), esc(c.Protocol), esc(what))
	if !c.Status.Is(numbers.StatusOK) {
		fmt.Fprintf(b, " — %s</p>\n", esc(c.Status.String()))
		return
	}
	fmt.Fprintf(b, ", mean %.4f, s.d. %.4f over n = %d of %d seeds", c.Acc.Mean, c.Acc.SD, c.N, c.Expected)
	if len(c.Missing) > 0 {
		fmt.Fprintf(b, "; <strong>missing seeds %v</strong>", c.Missing)
	}
	b.WriteString("</p>\n")
	b.WriteString(stripPlot(c.Seeds, c.Values, c.Acc.Mean, c.Acc.SD, pub))
	b.WriteString("\n<table class=\"list seeds\"><thead><tr><th>seed</th><th>value</th><th>train cell</th><th>result</th><th>key</th><th>revision</th></tr></thead><tbody>\n")
	var first *SeedRecord
	var data []string
	for i, id := range c.TrainCells {
		var rec *SeedRecord
		digest := ""
		if i < len(c.Results) {
			digest = c.Results[i]
			rec = s.in.Records[id+" "+digest]
		}
		seed, val := "", ""
		if i < len(c.Seeds) {
			seed = fmt.Sprint(c.Seeds[i])
		}
		if i < len(c.Values) {
			val = fmt.Sprintf("%.4f", c.Values[i])
		}
		key, rev := "—", "no record"
		if rec != nil {
			key, rev = short(rec.Key), short(rec.Revision)
			if rec.Dirty {
				rev += " (dirty)"
			}
			revs[rec.Revision] = true
			if first == nil {
				first = rec
			}
			for _, d := range rec.Data {
				if !slices.Contains(data, d) {
					data = append(data, d)
				}
			}
		}
		fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td><code>%s</code></td><td><code title=\"sha256:%s\">%s</code></td><td><code>%s</code></td><td><code>%s</code></td></tr>\n",
			seed, val, esc(id), esc(digest), esc(short(digest)), esc(key), esc(rev))
	}
	b.WriteString("</tbody></table>\n")
	if first != nil {
		s.configDiff(b, first)
	}
	if len(data) > 0 {
		b.WriteString("<details><summary>data digests</summary><ul class=\"mono\">\n")
		for _, d := range data {
			fmt.Fprintf(b, "<li>%s</li>\n", esc(d))
		}
		b.WriteString("</ul></details>\n")
	}
}

// configDiff writes a seed's configuration as the lines that differ from
// its learner's default system (train.seed left out: each seed has its
// own), with the whole configuration folded below.
func (s *site) configDiff(b *strings.Builder, rec *SeedRecord) {
	learner := ""
	for _, p := range rec.Config {
		if p.Name == "train.learner" {
			learner = strings.Trim(p.Value, `"`)
		}
	}
	def, ok := s.in.Defaults[learner]
	if ok {
		lines := diffParams(def.Config, rec.Config)
		fmt.Fprintf(b, "<p>configuration against the default system <code>%s</code>:</p>\n", esc(def.Name))
		if len(lines) == 0 {
			b.WriteString("<p class=\"meta\">the default system itself (but the seed)</p>\n")
		} else {
			b.WriteString("<pre class=\"diff\">")
			for _, l := range lines {
				fmt.Fprintf(b, "<span class=\"%s\">%s</span>\n", map[byte]string{'-': "del", '+': "add"}[l[0]], esc(l))
			}
			b.WriteString("</pre>\n")
		}
	}
	b.WriteString("<details><summary>full configuration</summary><pre>")
	for _, p := range rec.Config {
		fmt.Fprintf(b, "%s = %s\n", esc(p.Name), esc(p.Value))
	}
	b.WriteString("</pre></details>\n")
}

// diffParams lists "- name = default" and "+ name = value" for every
// parameter that differs (train.seed and train.protocol excepted).
func diffParams(def, got []pipeline.Param) []string {
	dm, gm := map[string]string{}, map[string]string{}
	var names []string
	for _, p := range def {
		dm[p.Name] = p.Value
		names = append(names, p.Name)
	}
	for _, p := range got {
		gm[p.Name] = p.Value
		if _, ok := dm[p.Name]; !ok {
			names = append(names, p.Name)
		}
	}
	slices.Sort(names)
	var out []string
	for _, n := range names {
		if n == "train.seed" || n == "train.protocol" {
			continue
		}
		d, dok := dm[n]
		g, gok := gm[n]
		if dok && gok && d == g {
			continue
		}
		if dok {
			out = append(out, "- "+n+" = "+d)
		}
		if gok {
			out = append(out, "+ "+n+" = "+g)
		}
	}
	return out
}

// rerun is the command that recomputes a number and checks it: repro
// verify --recompute of its seeds' train cells (by experiment, protocol
// and split) computes each seed again, whether the store or only the
// ledger holds it, and compares the result's digest with its record's.
// (repro run --only would recompute nothing where the ledger holds the
// records: a fresh clone says "nothing to do".)
func (s *site) rerun(n *number) string {
	type group struct {
		glob  string
		seeds int
	}
	var gs []group
	for _, rc := range n.cells {
		for _, id := range rc.cell.TrainCells {
			parts := strings.SplitN(id, "/", 5)
			if len(parts) < 4 {
				continue
			}
			g := strings.Join(parts[:4], "/")
			k := slices.IndexFunc(gs, func(x group) bool { return x.glob == g })
			if k < 0 {
				gs = append(gs, group{glob: g})
				k = len(gs) - 1
			}
			gs[k].seeds++
		}
	}
	if len(gs) == 0 {
		return ""
	}
	flags := ""
	if s.in.RunFlags != "" {
		flags = " " + s.in.RunFlags
	}
	var lines []string
	for _, g := range gs {
		lines = append(lines, fmt.Sprintf("repro verify%s --recompute %s    # recompute its %s, compare each result with its record", flags, g.glob, plural(g.seeds, "seed")))
	}
	return strings.Join(lines, "\n")
}

// intList joins line numbers with commas.
func intList(xs []int) string {
	var ss []string
	for _, x := range xs {
		ss = append(ss, strconv.Itoa(x))
	}
	return strings.Join(ss, ", ")
}

// plural is "1 seed", "3 seeds".
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// noRecord says, as HTML, why a number's card names no seed record: the
// cause its cells give for not being computed (a release absent where the
// tables were rendered blocks its download cell and everything after it),
// or, for cells that were computed, that this store and ledger lack the
// records (repro pull fetches the ledger's).
func noRecord(n *number) string {
	for _, rc := range n.cells {
		st := rc.cell.Status
		switch {
		case st.Is(numbers.StatusOK):
			continue
		case st.Is(numbers.StatusNA):
			return "not applicable: the paper's table has no value here (\"---\"), so nothing is computed for it."
		case st.Is(numbers.StatusEmpty):
			return "blank by the table's layout: nothing is computed for it."
		}
		text := st.String()
		if blocker, ok := strings.CutPrefix(text, "not run: blocked by "); ok {
			why := "a cell that failed where these tables were rendered"
			if rel, ok := strings.CutPrefix(blocker, "download/"); ok {
				why = "the " + rel + " release was not on the data mirror, and there was no network, where these tables were rendered"
			}
			return fmt.Sprintf("not computed: its seeds wait for <code>%s</code>, %s; so no seed has a record. A machine with the release computes them: <code>repro run</code>.", esc(blocker), esc(why))
		}
		return fmt.Sprintf("not computed (%s), so no seed has a record.", esc(text))
	}
	return "no record of these seeds is in the store or the ledger: <code>repro pull</code> fetches the ledger's records of them."
}
