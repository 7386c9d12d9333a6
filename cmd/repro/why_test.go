package main

import (
	"strings"
	"testing"
)

// TestWhyTakesDigestForm: why accepts sha256:<hex>, the form it prints.
func TestWhyTakesDigestForm(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	mustRepro(t, dir, "run", "-q")
	var digest string
	for _, v := range planState(t, dir) {
		if _, d, ok := strings.Cut(v, "map[out:"); ok {
			digest = strings.TrimSuffix(d, "]")
			break
		}
	}
	if len(digest) != 64 {
		t.Fatalf("no output digest in plan: %v", planState(t, dir))
	}
	plain := mustRepro(t, dir, "why", digest)
	if got := mustRepro(t, dir, "why", "sha256:"+digest); got != plain || !strings.HasPrefix(got, "cell synth/") {
		t.Fatalf("why sha256:%s = %q, want %q", digest, got, plain)
	}
}

// TestWhyTyposAndBlanks: why on a misspelt number ID suggests the ID
// (as show does for a table), and on a blank table cell says it is blank
// and why, rather than "number X = " and nothing.
func TestWhyTyposAndBlanks(t *testing.T) {
	t.Parallel()
	dir := freshClone(t)
	for _, c := range []struct {
		arg, want string
		code      int
	}{
		{"abaltion/full/sequential", "(did you mean ablation/full/sequential?)", 1},
		{"ablation/full/sequentail", "table ablation has no number ablation/full/sequentail (did you mean ablation/full/sequential?)", 1},
		{"paper/tables/accmatrix.tex:1:2", "number accmatrix/after1/t2: blank in the table (empty)", 0},
		{"paper/tables/ablation.tex:2:3", "number ablation/gate-bouts/single_pass: blank in the table (not run: experiment gate-bouts has no protocol single_pass)", 0},
	} {
		out, errOut, code := reproSplit(t, dir, "why", c.arg)
		if code != c.code || !strings.Contains(out+errOut, c.want) {
			t.Errorf("why %s: exit %d, want %d and %q in\n%s%s", c.arg, code, c.code, c.want, out, errOut)
		}
		if strings.Contains(out, " = \n") {
			t.Errorf("why %s: a number with nothing after '=':\n%s", c.arg, out)
		}
	}
}
