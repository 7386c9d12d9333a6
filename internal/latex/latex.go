// Package latex is the one way from the paper's text to what a reader sees.
// Its input is a string as pipeline.toml and paper/published.toml hold
// them: LaTeX (`$3{\cdot}10^{-4}$`, `\textbf{full system}`, `Eq.~\ref{eq:mask}`)
// and the ASCII transcription of the paper's quotes (`91.5 +- 0.5`,
// `1.35 x 10^5`, `lambda = mu = 3e-4`, `M_off`, `Table tab:accmatrix`). It
// parses both into one sequence of pieces (text, symbols, superscripts,
// subscripts, cross-references) and writes that sequence for each target:
//
//   - ToText: Unicode plain text, for the terminal (91.5 ± 0.5, 1.35 × 10⁵,
//     λ = μ = 3·10⁻⁴, Table “accmatrix”);
//   - ToHTML: escaped HTML, with <sup> and <sub>;
//   - ToPDFQuote: LaTeX source that pdflatex with the paper's preamble sets
//     as the same text ($\pm$, $\times 10^{5}$, Table~\ref{tab:accmatrix}
//     where the document has the label).
//
// A cross-reference to a label the document lacks (the paper's appendices)
// is written as its kind and name (App. “probes”), never as a raw label.
//
// Escape is the other way in: our own plain text (IDs, reasons, stamps,
// verdicts) escaped for LaTeX, for the tables, captions and the report.
package latex

import (
	"html"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// kind is what a piece is.
type kind int

const (
	text kind = iota // literal text
	sym              // a symbol: Unicode for text and HTML, a math command for LaTeX
	sup              // a superscript of its parts
	sub              // a subscript of its parts
	ref              // a cross-reference: word (Table) and label (tab:x)
	nbsp             // a tie (LaTeX ~): a space that does not break
)

type piece struct {
	kind  kind
	s     string  // text; sym's Unicode; ref's word
	tex   string  // sym's LaTeX command (math mode); ref's label
	parts []piece // sup and sub
}

// symbols are the LaTeX commands the paper's text uses, with Unicode.
var symbols = map[string]string{
	"pm": "±", "times": "×", "cdot": "·", "le": "≤", "leq": "≤", "ge": "≥", "geq": "≥",
	"to": "→", "rightarrow": "→", "leftarrow": "←", "approx": "≈", "sim": "∼", "infty": "∞",
	"ll": "≪", "gg": "≫", "neq": "≠", "ne": "≠", "in": "∈", "propto": "∝", "ldots": "…", "dots": "…",
	"alpha": "α", "beta": "β", "gamma": "γ", "delta": "δ", "Delta": "Δ", "epsilon": "ε", "varepsilon": "ε",
	"eta": "η", "theta": "θ", "kappa": "κ", "lambda": "λ", "mu": "μ", "nu": "ν", "pi": "π",
	"rho": "ρ", "sigma": "σ", "tau": "τ", "phi": "φ", "chi": "χ", "psi": "ψ", "omega": "ω",
}

// unicodeSymbols maps Unicode symbols found in the input to their LaTeX.
var unicodeSymbols = func() map[rune]string {
	m := map[rune]string{'−': "-"}
	for cmd, u := range symbols {
		r, _ := utf8.DecodeRuneInString(u)
		if _, ok := m[r]; !ok || len(cmd) < len(m[r]) {
			m[r] = cmd
		}
	}
	return m
}()

// literal commands are written as their text in every target.
var literal = map[string]string{
	"%": "%", "&": "&", "_": "_", "#": "#", "$": "$", "{": "{", "}": "}",
	",": " ", " ": " ", ";": " ", ":": " ", "!": "", "quad": " ", "qquad": " ",
	"kwta": "k-WTA", "textendash": "–", "textemdash": "—", "%%": "%",
}

// binaryOps are the symbols LaTeX sets with space around them in math.
var binaryOps = map[string]bool{"±": true, "×": true, "→": true, "≤": true, "≥": true, "≈": true}

// refWords are the words a cross-reference follows, by label prefix.
var refRe = regexp.MustCompile(`^(Tables?|Figs?\.|Figures?|App\.|Appendix|Eqs?\.|Equations?|Sec\.|Section|Alg\.)[~ ]+(\\ref\{)?((?:tab|fig|app|eq|sec|alg):[A-Za-z0-9_.-]*[A-Za-z0-9])\}?`)

// bareLabelRe is a label written without its word ("(tab:val)").
var bareLabelRe = regexp.MustCompile(`^(tab|fig|app|eq|sec|alg):[A-Za-z0-9_.-]*[A-Za-z0-9]`)

var labelWords = map[string]string{"tab": "Table", "fig": "Fig.", "app": "App.", "eq": "Eq.", "sec": "Sec.", "alg": "Alg."}

// eNumRe is a number in e-notation (3e-4, 1.5e3).
var eNumRe = regexp.MustCompile(`^(\d+(?:\.\d+)?)[eE]([-+]?\d+)\b`)

// timesTenRe is the ASCII "x 10^" of a number in the paper's notation.
var timesTenRe = regexp.MustCompile(`^ ?[x*] ?10\^`)

// greekWordRe is a Greek letter spelt out in the ASCII quotes, as a
// symbol: followed by "=", "_" or ",".
var greekWordRe = regexp.MustCompile(`^(lambda|mu|eta|kappa|tau|sigma|theta|rho|alpha|beta|gamma|delta|epsilon)(\s*(=|_|,|\)))`)

// parse reads s into pieces.
func parse(s string) []piece {
	var out []piece
	var buf strings.Builder
	flush := func() {
		if buf.Len() > 0 {
			out = append(out, piece{kind: text, s: buf.String()})
			buf.Reset()
		}
	}
	add := func(p piece) { flush(); out = append(out, p) }
	math := false
	for i := 0; i < len(s); {
		rest := s[i:]
		prevLetter := i > 0 && isWordByte(s[i-1])
		switch {
		case rest[0] == '$':
			math = !math
			i++
		case rest[0] == '\\':
			j := i + 1
			for j < len(s) && isLetter(s[j]) {
				j++
			}
			if j == i+1 && j < len(s) { // \%, \, and the like
				j++
			}
			name := s[i+1 : j]
			i = j
			switch {
			case symbols[name] != "":
				u := symbols[name]
				if math && binaryOps[u] {
					u = " " + u + " " // LaTeX spaces a binary operator in math
				}
				add(piece{kind: sym, s: u, tex: `\` + name})
			case name == "ref" || name == "eqref" || name == "autoref":
				arg, n := group(s[i:])
				i += n
				add(refPiece("", arg))
			case name == "cite" || name == "label":
				_, n := group(s[i:])
				i += n
			case name == "\\":
				buf.WriteByte(' ')
			default:
				if l, ok := literal[name]; ok {
					buf.WriteString(l)
				}
				// Any other command (\textbf, \emph, \mathrm, \scriptsize):
				// dropped, its argument stays as text.
			}
		case rest[0] == '{' || rest[0] == '}':
			i++
		case rest[0] == '^' || rest[0] == '_' && (math || isSubscriptable(s, i)):
			k := sup
			if rest[0] == '_' {
				k = sub
			}
			arg, n := script(s[i+1:])
			i += 1 + n
			add(piece{kind: k, parts: parse(arg)})
		case rest[0] == '~':
			switch {
			case strings.HasPrefix(rest, "~="):
				add(piece{kind: sym, s: "≈", tex: `\approx`})
				i += 2
			case len(rest) > 1 && (rest[1] >= '0' && rest[1] <= '9' || rest[1] == '.'):
				add(piece{kind: sym, s: "∼", tex: `\sim`})
				i++
			default:
				add(piece{kind: nbsp})
				i++
			}
		case strings.HasPrefix(rest, "+-") || strings.HasPrefix(rest, "+/-"):
			add(piece{kind: sym, s: "±", tex: `\pm`})
			i += 2
			if strings.HasPrefix(rest, "+/-") {
				i++
			}
		case strings.HasPrefix(rest, "->"):
			add(piece{kind: sym, s: "→", tex: `\to`})
			i += 2
		case strings.HasPrefix(rest, "<=") && !math:
			add(piece{kind: sym, s: "≤", tex: `\le`})
			i += 2
		case strings.HasPrefix(rest, ">=") && !math:
			add(piece{kind: sym, s: "≥", tex: `\ge`})
			i += 2
		case strings.HasPrefix(rest, "---"):
			buf.WriteString("—")
			i += 3
		case strings.HasPrefix(rest, "--") && !strings.HasPrefix(rest, "-->"):
			buf.WriteString("–")
			i += 2
		case strings.HasPrefix(rest, "``"):
			buf.WriteString("“")
			i += 2
		case strings.HasPrefix(rest, "''"):
			buf.WriteString("”")
			i += 2
		case !prevLetter && refRe.MatchString(rest):
			m := refRe.FindStringSubmatch(rest)
			add(refPiece(m[1], m[3]))
			i += len(m[0])
		case !prevLetter && bareLabelRe.MatchString(rest):
			m := bareLabelRe.FindString(rest)
			add(refPiece("", m))
			i += len(m)
		case i > 0 && s[i-1] >= '0' && s[i-1] <= '9' && timesTenRe.MatchString(rest):
			m := timesTenRe.FindString(rest)
			add(piece{kind: sym, s: " × ", tex: `\times`})
			buf.WriteString("10")
			i += len(m) - 1 // the ^ is read next, as a superscript
		case !prevLetter && eNumRe.MatchString(rest):
			m := eNumRe.FindStringSubmatch(rest)
			exp := strings.TrimPrefix(m[2], "+")
			if m[1] != "1" {
				buf.WriteString(m[1])
				add(piece{kind: sym, s: "·", tex: `\cdot`})
			}
			buf.WriteString("10")
			add(piece{kind: sup, parts: []piece{{kind: text, s: exp}}})
			i += len(m[0])
		case !prevLetter && !math && greekWordRe.MatchString(rest):
			m := greekWordRe.FindStringSubmatch(rest)
			add(piece{kind: sym, s: symbols[m[1]], tex: `\` + m[1]})
			i += len(m[1])
		default:
			r, n := utf8.DecodeRuneInString(rest)
			if cmd, ok := unicodeSymbols[r]; ok && r != '−' {
				add(piece{kind: sym, s: string(r), tex: `\` + cmd})
			} else if r == '−' {
				buf.WriteString("−")
			} else {
				buf.WriteString(rest[:n])
			}
			i += n
		}
	}
	flush()
	return out
}

func refPiece(word, label string) piece {
	if word == "" {
		word = labelWords[strings.SplitN(label, ":", 2)[0]]
	}
	return piece{kind: ref, s: word, tex: label}
}

func isLetter(c byte) bool   { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isWordByte(c byte) bool { return isLetter(c) || c >= '0' && c <= '9' || c == '_' || c == '/' }

// isSubscriptable reports whether the _ at s[i], outside math, is a
// subscript: after a lone capital letter (M_off), not inside a word or an
// identifier (single_pass).
func isSubscriptable(s string, i int) bool {
	return i > 0 && s[i-1] >= 'A' && s[i-1] <= 'Z' && (i == 1 || !isWordByte(s[i-2])) && i+1 < len(s) && (isLetter(s[i+1]) || s[i+1] == '{')
}

// group reads a {braced} argument (after optional spaces); n is the bytes
// it took.
func group(s string) (arg string, n int) {
	t := strings.TrimLeft(s, " ")
	n = len(s) - len(t)
	if !strings.HasPrefix(t, "{") {
		return "", n
	}
	depth := 0
	for i := 0; i < len(t); i++ {
		switch t[i] {
		case '{':
			depth++
		case '}':
			depth--
			if depth == 0 {
				return t[1:i], n + i + 1
			}
		}
	}
	return t[1:], len(s)
}

// script reads the argument of ^ or _: a group, a signed number, a word
// (ASCII: M_off) or one character.
func script(s string) (arg string, n int) {
	if strings.HasPrefix(s, "{") {
		return group(s)
	}
	if strings.HasPrefix(s, "\\") {
		j := 1
		for j < len(s) && isLetter(s[j]) {
			j++
		}
		return s[:j], j
	}
	j := 0
	if j < len(s) && (s[j] == '-' || s[j] == '+') {
		j++
	}
	if j < len(s) && s[j] >= '0' && s[j] <= '9' {
		for j < len(s) && (s[j] >= '0' && s[j] <= '9' || s[j] == '.' && j+1 < len(s) && s[j+1] >= '0' && s[j+1] <= '9') {
			j++
		}
		return s[:j], j
	}
	if j == 0 && j < len(s) && isLetter(s[j]) {
		for j < len(s) && (isLetter(s[j]) || s[j] >= '0' && s[j] <= '9') {
			j++
		}
		return s[:j], j
	}
	if j < len(s) {
		_, w := utf8.DecodeRuneInString(s[j:])
		return s[:j+w], j + w
	}
	return s, len(s)
}

// superDigits and subDigits are the Unicode super- and subscripts of the
// characters that have one.
var (
	superDigits = map[rune]rune{'0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴', '5': '⁵', '6': '⁶', '7': '⁷', '8': '⁸', '9': '⁹', '-': '⁻', '−': '⁻', '+': '⁺', 'n': 'ⁿ', 'i': 'ⁱ'}
	subDigits   = map[rune]rune{'0': '₀', '1': '₁', '2': '₂', '3': '₃', '4': '₄', '5': '₅', '6': '₆', '7': '₇', '8': '₈', '9': '₉', '-': '₋', '+': '₊'}
)

// ToText is s as Unicode plain text, for the terminal: symbols as
// themselves, superscripts in Unicode (10⁻⁴; ^(…) where a character has
// none), a cross-reference as its word and name (Table “accmatrix”),
// spaces collapsed.
func ToText(s string) string {
	return strings.Join(strings.Fields(writeText(parse(s))), " ")
}

func writeText(ps []piece) string {
	var b strings.Builder
	for _, p := range ps {
		switch p.kind {
		case text, sym:
			b.WriteString(p.s)
		case nbsp:
			b.WriteByte(' ')
		case ref:
			b.WriteString(refText(p))
		case sup, sub:
			inner := writeText(p.parts)
			table, mark := superDigits, "^"
			if p.kind == sub {
				table, mark = subDigits, "_"
			}
			if conv, ok := mapRunes(inner, table); ok {
				b.WriteString(conv)
			} else if p.kind == sub && isIdent(inner) {
				b.WriteString("_" + inner) // M_off reads best as written
			} else {
				b.WriteString(mark + "(" + inner + ")")
			}
		}
	}
	return b.String()
}

func mapRunes(s string, table map[rune]rune) (string, bool) {
	var b strings.Builder
	for _, r := range s {
		m, ok := table[r]
		if !ok {
			return "", false
		}
		b.WriteRune(m)
	}
	return b.String(), s != ""
}

func isIdent(s string) bool {
	for _, r := range s {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

// refText is a cross-reference in words: Table “accmatrix”.
func refText(p piece) string {
	_, name, _ := strings.Cut(p.tex, ":")
	if p.s == "" {
		return "“" + name + "”"
	}
	return p.s + " “" + name + "”"
}

// ToHTML is s as escaped HTML: symbols as Unicode, <sup> and <sub>, a
// cross-reference in words.
func ToHTML(s string) string {
	return collapse(writeHTML(parse(s)))
}

func writeHTML(ps []piece) string {
	var b strings.Builder
	for _, p := range ps {
		switch p.kind {
		case text, sym:
			b.WriteString(html.EscapeString(p.s))
		case nbsp:
			b.WriteString(" ")
		case ref:
			b.WriteString(html.EscapeString(refText(p)))
		case sup:
			b.WriteString("<sup>" + writeHTML(p.parts) + "</sup>")
		case sub:
			b.WriteString("<sub>" + writeHTML(p.parts) + "</sub>")
		}
	}
	return b.String()
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// ToPDFQuote is s as LaTeX source for the paper's PDF: text escaped,
// symbols in math mode, super- and subscripts as math, and a
// cross-reference as Word~\ref{label} when hasLabel says the document has
// the label (nil: none has), else in words. It is for text quoted in the
// paper (the report's quotes of published.toml), which must print the same
// as ToText, not as the ASCII it was transcribed in.
func ToPDFQuote(s string, hasLabel func(label string) bool) string {
	return collapse(writePDF(parse(s), hasLabel, false))
}

func writePDF(ps []piece, hasLabel func(string) bool, inMath bool) string {
	var b strings.Builder
	math := func(x string) string {
		if inMath {
			return x
		}
		return `\ensuremath{` + x + `}`
	}
	for _, p := range ps {
		switch p.kind {
		case text:
			switch {
			case inMath && strings.Trim(p.s, "0123456789.+-−") == "":
				b.WriteString(strings.ReplaceAll(p.s, "−", "-"))
			case inMath:
				b.WriteString(`\mathrm{` + escapeTeX(p.s) + `}`)
			default:
				b.WriteString(escapeTeX(p.s))
			}
		case sym:
			if strings.HasPrefix(p.s, " ") && !inMath {
				b.WriteString(" " + math(p.tex+"{}") + " ")
			} else {
				b.WriteString(math(p.tex + "{}"))
			}
		case nbsp:
			b.WriteString("~")
		case ref:
			if hasLabel != nil && hasLabel(p.tex) && p.s != "" {
				b.WriteString(escapeTeX(p.s) + `~\ref{` + p.tex + `}`)
			} else {
				_, name, _ := strings.Cut(p.tex, ":")
				word := ""
				if p.s != "" {
					word = escapeTeX(p.s) + "~"
				}
				b.WriteString(word + "``" + escapeTeX(name) + "''")
			}
		case sup:
			b.WriteString(math("^{" + writePDF(p.parts, hasLabel, true) + "}"))
		case sub:
			b.WriteString(math("_{" + writePDF(p.parts, hasLabel, true) + "}"))
		}
	}
	return b.String()
}

// texText maps the text characters LaTeX treats specially, and the Unicode
// a Times font in T1 lacks, to their LaTeX.
var texText = strings.NewReplacer(
	`\`, `\textbackslash{}`, `{`, `\{`, `}`, `\}`, `$`, `\$`, `&`, `\&`, `#`, `\#`, `%`, `\%`, `_`, `\_`,
	`^`, `\^{}`, `~`, `\textasciitilde{}`, "–", "--", "—", "---", "“", "``", "”", "''", "−", `\ensuremath{-}`,
	"…", `\dots{}`, "’", "'", "‘", "`", "×", `\ensuremath{\times}`, "·", `\ensuremath{\cdot}`,
)

func escapeTeX(s string) string { return texText.Replace(s) }

// Escape escapes the characters LaTeX treats specially in our own plain
// text (number IDs, reasons, stamps, verdicts), as the tables, the figures'
// captions and the reproduction report print it; ≠ is set as math (utf8
// inputenc has none). What it escapes is not LaTeX: the paper's text, which
// is, goes through ToPDFQuote.
func Escape(s string) string { return plainTeX.Replace(s) }

// plainTeX maps the characters Escape escapes.
var plainTeX = strings.NewReplacer(`\`, `\textbackslash{}`, `&`, `\&`, `%`, `\%`, `$`, `\$`, `#`, `\#`, `_`, `\_`, `{`, `\{`, `}`, `\}`, `~`, `\textasciitilde{}`, `^`, `\textasciicircum{}`, `≠`, `$\neq$`)
