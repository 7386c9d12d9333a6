package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"repro/experiments"
	"repro/numbers"
)

// figureTestConfig is one figure of every kind over real MNIST: backprop
// cells (the fastest learner), every 50th stream sample, two seeds. Panel
// 1 sweeps a config field on a log axis with s.d. bars, every seed and a
// reference line at an experiment's mean; panel 2 plots accuracy against
// accuracy under another protocol with labels and the frontier; panel 3 a
// seed-paired margin with a bootstrap interval against a measured x (the
// replay updates); panel 4 is declared but needs a missing feature; panel 5
// plots accuracy against energy from the energy cells of a local-learner
// network converted to spiking inference.
var figureTestConfig = mnistSmokeSettings + "\n" + experiments.TestExperiments(
	experiments.TestExperiment{Name: "a", Protocols: []string{"sequential", "static"}},
	experiments.TestExperiment{Name: "small", Protocols: []string{"sequential", "static"}, Section: []string{"k = 200"}},
	experiments.TestExperiment{Name: "b", Protocols: []string{"sequential"}, Section: []string{"lr = 3e-3"}},
	experiments.TestExperiment{Name: "loc", Learner: "local", Preset: "g16_sgd_refr_s10_w512", Protocols: []string{"static"}},
) + `[spike]
experiments = ["loc"]
protocol = "static"
steps = [2, 4]
calibration = 200

[[figure]]
name = "f"
label = "fig:f"
caption = 'Every kind of panel.'
width = '\linewidth'
[[figure.panel]]
title = "sweep"
xlabel = "K"
ylabel = "accuracy (%)"
xlog = true
[[figure.panel.series]]
name = "er"
label = "BP + ER"
experiments = ["small", "a"]
x = "param:bp.k"
line = true
seeds = true
[[figure.panel.line]]
experiment = "b"
label = "lr 3e-3"
dashed = true
[[figure.panel]]
title = "frontier"
xlabel = "static"
ylabel = "sequential"
legend = "tl"
[[figure.panel.series]]
name = "front"
experiments = ["a", "small"]
labels = ["K 1000", "K 200"]
x = "protocol:static"
frontier = true
[[figure.panel]]
title = "margin"
xlabel = "replay updates"
ylabel = "a - b"
[[figure.panel.series]]
name = "margin"
experiments = ["a"]
minus = ["b"]
x = "metric:replay_updates"
errors = "bootstrap"
resamples = 2000
marker = "star"
[[figure.panel.line]]
value = 0.0
[[figure.panel]]
title = "gate"
needs = "needs a feature the learners lack"
[[figure.panel.series]]
name = "gated"
experiments = ["gate-on"]
xs = [1.0]
needs = "needs the gate"
[[figure.panel]]
title = "energy"
xlog = true
xticks = [1, 10, 100, 1000, 10000]
[[figure.panel.series]]
name = "spike"
experiments = ["loc"]
energy = "spike"
line = true
[[figure.panel.series]]
name = "dense"
experiments = ["loc"]
energy = "dense"
marker = "square"
`

// TestFiguresEndToEnd runs the real CLI on real MNIST: the run draws the
// figure (PDF, PNG, sidecar) into paper/figures/; why prints a point's
// seeds, digests and configuration; check passes; changing one
// experiment reruns its cells and the figure only, and check names its
// points until the rerun.
func TestFiguresEndToEnd(t *testing.T) {
	dir, cfg := mnistProject(t, figureTestConfig, map[string]string{})
	out := mustRepro(t, dir, "run", "-j", "2", "-q")
	for _, ext := range []string{"pdf", "png", "tex", "ids.json"} {
		if !strings.Contains(out, "wrote paper/figures/f."+ext) {
			t.Errorf("run output lacks paper/figures/f.%s:\n%s", ext, out)
		}
	}
	pdf, _ := os.ReadFile(filepath.Join(dir, "paper/figures/f.pdf"))
	png, _ := os.ReadFile(filepath.Join(dir, "paper/figures/f.png"))
	if !bytes.HasPrefix(pdf, []byte("%PDF-")) || !bytes.HasPrefix(png, []byte("\x89PNG")) {
		t.Fatalf("paper/figures/f.pdf and .png are not a PDF and a PNG")
	}
	tex, _ := os.ReadFile(filepath.Join(dir, "paper/figures/f.tex"))
	for _, want := range []string{`\includegraphics[width=\linewidth]{f}`, `\caption{\textbf{[SMOKE TEST OUTPUT]} Every kind of panel. \emph{Not drawn here:} not run: needs the gate.}`, `\label{fig:f}`} {
		if !strings.Contains(string(tex), want) {
			t.Errorf("f.tex lacks %q:\n%s", want, tex)
		}
	}
	compileFigure(t, filepath.Join(dir, "paper"), "f")
	b, err := os.ReadFile(filepath.Join(dir, "paper/figures/f.ids.json"))
	if err != nil {
		t.Fatal(err)
	}
	var sc numbers.FigureSidecar
	if err := json.Unmarshal(b, &sc); err != nil {
		t.Fatal(err)
	}
	got := map[string]numbers.FigurePoint{}
	for _, p := range append(sc.Points, sc.Lines...) {
		got[p.ID] = p
	}
	for id, status := range map[string]string{
		"fig/f/er/200": "ok", "fig/f/er/1000": "ok", "fig/f/line/b": "ok",
		"fig/f/front/a": "ok", "fig/f/front/small": "ok", "fig/f/margin/a": "ok", "fig/f/line/0": "ok",
		"fig/f/gated/1":  "not run: needs the gate",
		"fig/f/spike/t2": "ok", "fig/f/spike/t4": "ok", "fig/f/dense/dense": "ok",
	} {
		if p, ok := got[id]; !ok || p.Status.String() != status {
			t.Errorf("point %s: %+v, want status %q", id, p, status)
		}
	}
	if len(got) != 11 {
		t.Errorf("sidecar has %d points, want 11: %v", len(got), got)
	}
	if p := got["fig/f/spike/t4"]; p.YCell == nil || p.XCell == nil || p.YCell.N != 2 || p.X <= 0 || p.X >= got["fig/f/dense/dense"].X ||
		!strings.HasPrefix(p.YCell.TrainCells[0], "energy/loc/static/") || p.XCell.Metric != "energy.nj@spike4" {
		t.Errorf("fig/f/spike/t4: want accuracy against nJ from the 2 energy cells, below dense rate inference: %+v", p)
	}
	if p := got["fig/f/er/1000"]; p.YCell == nil || p.YCell.N != 2 || p.X != 1000 || p.YLo >= p.Y || p.YHi <= p.Y {
		t.Errorf("fig/f/er/1000: want 2 seeds at x 1000 with s.d. bars around the mean: %+v", p)
	}
	if p := got["fig/f/margin/a"]; p.Diff == nil || p.Diff.N != 2 || p.YLo > p.Y || p.YHi < p.Y || p.X <= 0 || !strings.Contains(p.Text, "[") {
		t.Errorf("fig/f/margin/a: want a paired margin over 2 seeds inside its interval, x the replay updates: %+v", p)
	}
	if p := got["fig/f/front/a"]; p.XCell == nil || p.XCell.Protocol != "static" || p.Dominant == nil {
		t.Errorf("fig/f/front/a: want x from the static cells, frontier marked: %+v", p)
	}
	why := mustRepro(t, dir, "why", "fig/f/margin/a")
	for _, want := range []string{"point fig/f/margin/a", "seed-paired margin a - b", "train/a/sequential/split1234/seed1", "train/b/sequential/split1234/seed0", "result sha256:", "split/mnist-1234", "train.bp.lr = "} {
		if !strings.Contains(why, want) {
			t.Errorf("why lacks %q:\n%s", want, why)
		}
	}
	if out := mustRepro(t, dir, "check"); !strings.Contains(out, "and 1 figure(s) match") {
		t.Fatalf("check after the run: %s", out)
	}

	// Change b (the reference line and the margin's subtrahend): only b's
	// cells and the figure rerun; check names b's points, not the sweep's.
	os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(strings.Replace(cfg, "lr = 3e-3", "lr = 2e-3", 1)), 0o644)
	out, err = repro(t, dir, "check")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 || !strings.Contains(out, "paper/figures/f.ids.json: fig/f/line/b (committed") ||
		!strings.Contains(out, "fig/f/margin/a (committed") || !strings.Contains(out, "config changed: train.bp.lr 0.003 -> 0.002") {
		t.Fatalf("check after a config change does not name b's points and why: err %v\n%s", err, out)
	}
	if strings.Contains(out, "fig/f/er/") || strings.Contains(out, "fig/f/front/") {
		t.Errorf("check names points that did not change:\n%s", out)
	}
	plan := mustRepro(t, dir, "plan")
	if !strings.Contains(plan, "3 to run") || !strings.Contains(plan, "run    figure/f") {
		t.Errorf("plan after changing b (want b's 2 train cells and the figure):\n%s", plan)
	}
	planRerunsOnly(t, plan, "train/b/")
	out = mustRepro(t, dir, "run", "-j", "2", "-q")
	if !strings.Contains(out, "ran 3 cells") || !strings.Contains(out, "wrote paper/figures/f.png") {
		t.Errorf("rerun after the change:\n%s", out)
	}
	if out := mustRepro(t, dir, "check"); !strings.Contains(out, "is current") {
		t.Fatalf("check after the rerun: %s", out)
	}
}

// compileFigure compiles a rendered figure's LaTeX as main.tex inputs it,
// when pdflatex is installed.
func compileFigure(t *testing.T, paper, name string) {
	t.Helper()
	if _, err := exec.LookPath("pdflatex"); err != nil {
		t.Log("no pdflatex: rendered figure not compiled")
		return
	}
	doc := "\\documentclass{article}\\usepackage{graphicx}\\graphicspath{{figures/}}\n" +
		"\\begin{document}\n\\input{figures/" + name + ".tex}\n\\end{document}\n"
	if err := os.WriteFile(filepath.Join(paper, "fig.tex"), []byte(doc), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("pdflatex", "-interaction=nonstopmode", "-halt-on-error", "fig.tex")
	cmd.Dir = paper
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("pdflatex on the rendered figure: %v\n%s", err, out)
	}
}
