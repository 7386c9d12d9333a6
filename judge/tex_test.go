package judge

import "testing"

// TestCiteTeX: a citation's labels become references, the rest is
// escaped and its opening quotes turned.
func TestCiteTeX(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"Table tab:ablation, row 1 'full system', column Sequential", "Table~\\ref{tab:ablation}, row 1 `full system', column Sequential"},
		{"subsection X (after tab:bpk): rotation's price", "subsection X (after Table~\\ref{tab:bpk}): rotation's price"},
		{"'a_b' 50%", "`a\\_b' 50\\%"},
		{"no label", "no label"},
	} {
		if got := citeTeX(tc.in); got != tc.want {
			t.Errorf("citeTeX(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
