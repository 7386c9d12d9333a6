package site

import (
	"html"
	"strconv"

	"repro/internal/latex"
	"repro/numbers"
)

// esc escapes s for HTML text and attribute values.
func esc(s string) string { return html.EscapeString(s) }

// plainLabel turns a row label, caption or quote written in LaTeX or in
// the ASCII of published.toml into plain text for display (the one
// converter, package latex: 91.5 ± 0.5, 3·10⁻⁴, Table “accmatrix”): the
// prose of the paper's labels, never a number the site computes with
// (those come typed from the sidecars).
func plainLabel(s string) string { return latex.ToText(s) }

// cellValue is a table or figure cell as the site prints it: mean ± s.d.
// at the table's decimals, or what stands for a number that is not there.
func cellValue(c *numbers.AggCell, decimals int) string {
	switch {
	case c == nil:
		return ""
	case c.Status.Is(numbers.StatusNA):
		return "—"
	case c.Status.Is(numbers.StatusMissing):
		return "n=0"
	case !c.Status.Is(numbers.StatusOK):
		return "not run"
	}
	s := numbers.Fixed(c.Acc.Mean, decimals)
	if c.N > 1 {
		s += " ± " + numbers.Fixed(c.Acc.SD, decimals)
	}
	if c.N != c.Expected {
		s += " (n=" + strconv.Itoa(c.N) + ")"
	}
	return s
}

// short is the first 12 hex digits of a key or digest.
func short(h string) string {
	if len(h) > 12 {
		return h[:12]
	}
	return h
}
