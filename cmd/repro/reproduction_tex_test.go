package main

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestCommittedReproductionTeXReads greps the committed report section of
// the PDF (paper/reproduction.tex) for what a reader must never see: ASCII
// stand-ins ("+-", "x 10^") and cross-reference labels printed as text
// (tab:..., app:..., eq:...) instead of references. Labels inside \ref,
// \label, \href and the card links' first argument are LaTeX's, not text.
func TestCommittedReproductionTeXReads(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../paper/reproduction.tex")
	if err != nil {
		t.Fatal(err)
	}
	src := string(b)
	// Drop the arguments that are labels or addresses, and comments.
	for _, re := range []*regexp.Regexp{
		regexp.MustCompile(`\\(ref|label|href|reprocard)\{[^}]*\}`),
		regexp.MustCompile(`(?m)^%.*$`),
	} {
		src = re.ReplaceAllString(src, "")
	}
	for _, bad := range []string{"+-", "x 10^", "x10^"} {
		if i := strings.Index(src, bad); i >= 0 {
			t.Errorf("reproduction.tex prints %q: ...%s...", bad, src[max(i-60, 0):min(i+60, len(src))])
		}
	}
	label := regexp.MustCompile(`\b(tab|app|eq|sec|fig):[A-Za-z]`)
	if loc := label.FindStringIndex(src); loc != nil {
		t.Errorf("reproduction.tex prints a label as text: ...%s...", src[max(loc[0]-60, 0):min(loc[1]+60, len(src))])
	}
}
