package main

import (
	"testing"
)

func TestPlainLaTeX(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`\textbf{full system}: isolated replay $+$ always-on rotation`: "full system: isolated replay + always-on rotation",
		`\quad rotation gated per batch`:                               "  rotation gated per batch",
		`BP $+$ \kwta{}`:                                               "BP + k-WTA",
		`$3{\cdot}10^{-5}$`:                                            "3·10⁻⁵",
		`local learner (Table~\ref{tab:ablation})`:                     "local learner (Table “ablation”)",
		`bout gate, $M{=}2048$, $M_{\mathrm{off}}{=}4096$`:             "bout gate, M=2048, M_off=4096",
	}
	for in, want := range cases {
		if got := plainLaTeX(in); got != want {
			t.Errorf("plainLaTeX(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCPUText(t *testing.T) {
	for _, tc := range []struct {
		s    float64
		want string
	}{{0, "0.0s"}, {41.24, "41.2s"}, {185, "3m05s"}, {8040, "2h14m"}} {
		if got := cpuText(tc.s); got != tc.want {
			t.Errorf("cpuText(%v) = %q, want %q", tc.s, got, tc.want)
		}
	}
}

func TestCellMatch(t *testing.T) {
	id := "train/full/sequential/split1234/seed0"
	for glob, want := range map[string]bool{
		"train/full":                     true,
		"train/full/*":                   true,
		"train/*/sequential/*/seed0":     true,
		"train/*/static/*/seed0":         false,
		"train/ful":                      false,
		"train/full*":                    true,
		"*":                              true,
		"train/full/sequential/*/seed1":  false,
		id:                               true,
		"train/full/sequential/split123": false,
	} {
		if got := cellMatch(glob, id); got != want {
			t.Errorf("cellMatch(%q) = %v, want %v", glob, got, want)
		}
	}
}
