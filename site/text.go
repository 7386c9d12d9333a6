package site

import (
	"html"
	"strconv"
	"strings"

	"repro/stages"
)

// esc escapes s for HTML text and attribute values.
func esc(s string) string { return html.EscapeString(s) }

// plainLabel turns a row label or caption written in LaTeX into plain
// text for display: the prose of the paper's labels, never a number the
// site computes with (those come typed from the sidecars).
func plainLabel(s string) string {
	r := strings.NewReplacer(
		`\pm`, "±", `$+$`, "+", `$-$`, "−", `\%`, "%", `\,`, " ", `\ `, " ", `~`, " ",
		`---`, "—", `--`, "–", `\times`, "×", `\le`, "≤", `\ge`, "≥", `\to`, "→",
		`\eta`, "η", `\beta`, "β", `\gamma`, "γ", `\kappa`, "κ", `\lambda`, "λ", `\alpha`, "α", `\theta`, "θ", `\rho`, "ρ", `\tau`, "τ", `\sigma`, "σ", `\mu`, "μ", `\delta`, "δ",
		`\kwta`, "k-WTA", `\&`, "&", `\_`, "_",
	)
	s = r.Replace(s)
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch c {
		case '$', '{', '}':
			continue
		case '\\':
			// Drop a command name (\textbf, \emph, \scriptsize...): its
			// argument, if any, stays as text.
			j := i + 1
			for j < len(s) && (s[j] >= 'a' && s[j] <= 'z' || s[j] >= 'A' && s[j] <= 'Z') {
				j++
			}
			i = j - 1
			continue
		case '^', '_':
			if i+1 < len(s) && s[i+1] == '{' {
				continue
			}
		}
		b.WriteByte(c)
	}
	return strings.Join(strings.Fields(b.String()), " ")
}

// fmtN formats x with d decimals, without a negative zero.
func fmtN(x float64, d int) string {
	s := strconv.FormatFloat(x, 'f', d, 64)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	return s
}

// cellValue is a table or figure cell as the site prints it: mean ± s.d.
// at the table's decimals, or what stands for a number that is not there.
func cellValue(c *stages.AggCell, decimals int) string {
	switch {
	case c == nil:
		return ""
	case c.Status.Is(stages.StatusNA):
		return "—"
	case c.Status.Is(stages.StatusMissing):
		return "n=0"
	case !c.Status.Is(stages.StatusOK):
		return "not run"
	}
	s := fmtN(c.Acc.Mean, decimals)
	if c.N > 1 {
		s += " ± " + fmtN(c.Acc.SD, decimals)
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
