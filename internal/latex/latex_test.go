package latex

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

func TestConvert(t *testing.T) {
	t.Parallel()
	has := func(l string) bool { return l == "tab:accmatrix" }
	for _, c := range []struct{ in, text, html, pdf string }{
		{"91.5 +- 0.5", "91.5 ± 0.5", "91.5 ± 0.5", `91.5 \ensuremath{\pm{}} 0.5`},
		{"1.35 x 10^5", "1.35 × 10⁵", "1.35 × 10<sup>5</sup>", `1.35 \ensuremath{\times{}} 10\ensuremath{^{5}}`},
		{"M_off = 4096", "M_off = 4096", "M<sub>off</sub> = 4096", `M\ensuremath{_{\mathrm{off}}} = 4096`},
		{"(lambda = mu = 3e-4)", "(λ = μ = 3·10⁻⁴)", "(λ = μ = 3·10<sup>-4</sup>)", `(\ensuremath{\lambda{}} = \ensuremath{\mu{}} = 3\ensuremath{\cdot{}}10\ensuremath{^{-4}})`},
		{"App. app:probes", "App. “probes”", "App. “probes”", "App.~``probes''"},
		{"Table tab:accmatrix", "Table “accmatrix”", "Table “accmatrix”", `Table~\ref{tab:accmatrix}`},
		{`anchor ($\lambda{=}\mu{=}3{\cdot}10^{-4}$)`, "anchor (λ=μ=3·10⁻⁴)", "anchor (λ=μ=3·10<sup>-4</sup>)", `anchor (\ensuremath{\lambda{}}=\ensuremath{\mu{}}=3\ensuremath{\cdot{}}10\ensuremath{^{-4}})`},
		{`Eq.~\ref{eq:mask}`, "Eq. “mask”", "Eq. “mask”", "Eq.~``mask''"},
		{`\textbf{full system}: replay $+$ rotation`, "full system: replay + rotation", "full system: replay + rotation", "full system: replay + rotation"},
		{`$91.7\pm0.4$`, "91.7 ± 0.4", "91.7 ± 0.4", `91.7 \ensuremath{\pm{}} 0.4`},
		{"single_pass & 5%", "single_pass & 5%", "single_pass &amp; 5%", `single\_pass \& 5\%`},
		{"97.7 -> 96.5", "97.7 → 96.5", "97.7 → 96.5", `97.7 \ensuremath{\to{}} 96.5`},
	} {
		if got := ToText(c.in); got != c.text {
			t.Errorf("ToText(%q) = %q, want %q", c.in, got, c.text)
		}
		if got := ToHTML(c.in); got != c.html {
			t.Errorf("ToHTML(%q) = %q, want %q", c.in, got, c.html)
		}
		if got := ToPDFQuote(c.in, has); got != c.pdf {
			t.Errorf("ToPDFQuote(%q) = %q, want %q", c.in, got, c.pdf)
		}
	}
}

// readerKeys are the keys of pipeline.toml and paper/published.toml whose
// strings reach a reader: labels, captions, titles, axis labels, the
// paper's quotes and citations, and the notes of the report.
var readerKeys = map[string]bool{"label": true, "caption": true, "title": true, "titles": true, "xlabel": true, "ylabel": true,
	"header": true, "cite": true, "quote": true, "text": true, "what": true, "reason": true, "cause": true, "note": true, "notes": true}

// readerStrings walks a decoded TOML document for the reader's strings
// (a value that is a LaTeX label alone, a [[table]]'s label = "tab:x", is
// an identifier, not text).
func readerStrings(v any, key string, out map[string]bool) {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			readerStrings(e, k, out)
		}
	case []map[string]any:
		for _, e := range x {
			readerStrings(e, key, out)
		}
	case []any:
		for _, e := range x {
			readerStrings(e, key, out)
		}
	case string:
		if readerKeys[key] && !bareLabelRe.MatchString(x) {
			out[x] = true
		}
	}
}

var (
	rawLabelRe = regexp.MustCompile(`\b(tab|app|eq|fig|sec):[A-Za-z]`)
	asciiRe    = regexp.MustCompile(`\+-|\d ?x ?10\^|\^\{|\\[a-zA-Z]|\$`)
)

// TestEveryPaperString: every string of pipeline.toml and published.toml
// that reaches a reader converts, for the terminal, the HTML and the PDF,
// without a trace of its ASCII or LaTeX source: no +-, x 10^, ^{, \command,
// $, raw \ref label (tab:, app:, eq:) or stray brace; the PDF's is ASCII
// LaTeX with balanced braces and every label inside \ref.
func TestEveryPaperString(t *testing.T) {
	t.Parallel()
	all := map[string]bool{}
	for _, f := range []string{"../../pipeline.toml", "../../paper/published.toml"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if _, err := toml.Decode(string(b), &doc); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		readerStrings(doc, "", all)
	}
	if len(all) < 500 {
		t.Fatalf("found %d reader strings in pipeline.toml and published.toml; want them all", len(all))
	}
	var ss []string
	for s := range all {
		ss = append(ss, s)
	}
	sort.Strings(ss)
	bad := 0
	for _, s := range ss {
		text := ToText(s)
		html := regexp.MustCompile(`</?su[bp]>`).ReplaceAllString(ToHTML(s), "")
		pdf := ToPDFQuote(s, func(string) bool { return true })
		var why []string
		for name, out := range map[string]string{"text": text, "html": html} {
			if m := asciiRe.FindString(out); m != "" {
				why = append(why, name+" has "+m)
			}
			if m := rawLabelRe.FindString(out); m != "" {
				why = append(why, name+" has label "+m)
			}
			if strings.ContainsAny(out, "{}") && !strings.Contains(s, `\{`) { // a set {4,8} is text
				why = append(why, name+" has a brace")
			}
		}
		if strings.Contains(html, "<") {
			why = append(why, "html has a tag other than sup and sub")
		}
		plain := regexp.MustCompile(`\\ref\{[^}]*\}`).ReplaceAllString(pdf, "")
		if m := rawLabelRe.FindString(plain); m != "" {
			why = append(why, "pdf has label "+m+" outside \\ref")
		}
		if strings.Contains(plain, "+-") || regexp.MustCompile(`\d ?x ?10\^`).MatchString(plain) {
			why = append(why, "pdf has ASCII notation")
		}
		unesc := strings.NewReplacer(`\{`, "", `\}`, "").Replace(pdf)
		if strings.Count(unesc, "{") != strings.Count(unesc, "}") {
			why = append(why, "pdf braces unbalanced")
		}
		for _, r := range pdf {
			if r > 127 {
				why = append(why, "pdf has non-ASCII "+string(r))
				break
			}
		}
		if len(why) > 0 {
			if bad++; bad <= 20 {
				t.Errorf("%q: %s\n  text %q\n  pdf  %q", s, strings.Join(why, "; "), text, pdf)
			}
		}
	}
	t.Logf("%d reader strings converted", len(ss))
	if bad > 20 {
		t.Errorf("%d of %d strings in all", bad, len(ss))
	}
}

// TestEscapeNeq: a cause that writes [CODE≠PAPER] must not stop
// pdflatex (utf8 inputenc has no ≠).
func TestEscapeNeq(t *testing.T) {
	t.Parallel()
	if got := Escape("[CODE≠PAPER] 5% & more"); got != `[CODE$\neq$PAPER] 5\% \& more` {
		t.Errorf("Escape = %q", got)
	}
}
