package spike

import (
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"repro/core"
	"repro/internal/refdump"
)

// The differential check of the spiking conversion against the authors'
// models/spiking.py (make reference-check; opt-in, REPRO_REFCHECK=1;
// docs/reference-check.md). tools/refcheck/refspike.py trains their
// default system briefly with their run_local, calibrates the thresholds
// and runs their spike_eval image by image at T_s steps, taping every
// uniform their Bernoulli input drew; this test builds our network from the
// same weights, compares the thresholds and the folded first layer, then
// runs our Converted.Run on each image with the taped input spikes and
// compares the spike counts per layer, the synaptic events and the
// decision. The input spikes are compared by tape, not in distribution:
// given the tape, the rest is deterministic.

type spikeRefPath struct {
	name    string
	samples int
	ts      int
	thrGain float32 // multiplies our layer-1 threshold (1; a control: another value)
	control bool
}

var spikeRefPaths = []spikeRefPath{
	{name: "spike conversion, T_s = 8 (100 test images)", samples: 100, ts: 8, thrGain: 1},
	{name: "control: spike conversion with the first hidden layer's threshold 1% higher", samples: 100, ts: 8, thrGain: 1.01, control: true},
}

func TestReferenceCheck(t *testing.T) {
	py := refdump.Python(t)
	ref := refdump.EnvOr("REPRO_REFCHECK_REF", "../../../shared/spec/reference/src")
	mnist := refdump.EnvOr("REPRO_REFCHECK_MNIST", filepath.Join(os.Getenv("REPRO_DATA"), "mnist"))
	refdump.Need(t, filepath.Join(ref, "models", "spiking.py"), filepath.Join(mnist, "t10k-images-idx3-ubyte.gz"))
	refdump.Set(t)
	only := os.Getenv("REPRO_REFCHECK_ONLY")
	dumps := map[string]*refdump.Dump{}
	var tally refdump.Tally
	for _, p := range spikeRefPaths {
		if only != "" && !strings.Contains(p.name, only) {
			continue
		}
		key := fmt.Sprintf("%d/%d", p.samples, p.ts)
		d := dumps[key]
		var line string
		if d == nil {
			dir := filepath.Join(t.TempDir(), "dump")
			cmd := exec.Command(py, "../../tools/refcheck/refspike.py", "--ref", ref, "--mnist", mnist,
				"--samples", strconv.Itoa(p.samples), "--ts", strconv.Itoa(p.ts), "--out", dir)
			cmd.Env = append(os.Environ(), "OMP_NUM_THREADS=1")
			if out, err := cmd.CombinedOutput(); err != nil {
				line = fmt.Sprintf("not run: refspike.py: %v: %s", err, refdump.LastLine(string(out)))
			} else if d, err = refdump.Load(dir); err != nil {
				line = "not run: " + err.Error()
			}
			dumps[key] = d
		}
		if d != nil {
			line = checkSpikeDump(d, p)
		}
		line = p.name + ": " + line
		tally.Line(line, p.control)
	}
	if tally.Failed > 0 {
		t.Errorf("%d paths differ from the authors' code (lines above)", tally.Failed)
	}
}

// spikeNetwork builds our network from the dump's rate net.
func spikeNetwork(d *refdump.Dump) (*core.Network, error) {
	sizes := []int{}
	for _, s := range d.Meta["sizes"].([]any) {
		sizes = append(sizes, int(s.(float64)))
	}
	L := len(sizes) - 1
	nw := &core.Network{Sizes: sizes, K: make([]int, L+1), W: make([][]float32, L+1), B: make([][]float32, L+1), Mask: make([][]bool, L+1)}
	for l := 1; l <= L; l++ {
		nw.W[l] = d.Tensors[fmt.Sprintf("W%d", l)].F32
		nw.B[l] = d.Tensors[fmt.Sprintf("b%d", l)].F32
		if m, ok := d.Tensors[fmt.Sprintf("mask%d", l)]; ok {
			nw.Mask[l] = make([]bool, len(m.F32))
			for i, x := range m.F32 {
				nw.Mask[l][i] = x != 0
			}
		}
		if l < L {
			nw.K[l] = int(d.Num(fmt.Sprintf("k%d", l)))
			// Our learner has no homeostatic gain (spike.go's [CODE≠PAPER]
			// note): the check holds only where the reference's is 1.
			for i, g := range d.Tensors[fmt.Sprintf("gain%d", l)].F32 {
				if g != 1 {
					return nil, fmt.Errorf("the reference's gain%d[%d] is %g, and ours is 1", l, i, g)
				}
			}
		}
	}
	return nw, nw.Validate()
}

// checkSpikeDump runs our conversion on the dump's net and images and
// returns the verdict: thresholds and the folded first layer first (step
// 0), then image by image (step i+1 is image i).
func checkSpikeDump(d *refdump.Dump, p spikeRefPath) string {
	nw, err := spikeNetwork(d)
	if err != nil {
		return "not run: " + err.Error()
	}
	L, D := nw.L(), nw.Sizes[0]
	calX := d.Tensors["calX"]
	n := len(calX.F32) / D
	thr, err := Thresholds(nw, calX.F32, n, 0.999)
	if err != nil {
		return "not run: " + err.Error()
	}
	rthr := d.Tensors["thr"].F64
	ours := refdump.Tensor{Shape: []int{L - 1}, F64: make([]float64, L-1)}
	for l := 1; l < L; l++ {
		ours.F64[l-1] = float64(thr[l])
	}
	if v := refdump.Compare("thr", ours, refdump.Tensor{Shape: []int{L - 1}, F64: rthr}, false, nil); v != "" {
		return "differs at step 0 (calibration), tensor " + v
	}
	// The rest runs on the reference's thresholds, so that it is compared
	// on equal terms.
	for l := 1; l < L; l++ {
		thr[l] = float32(rthr[l-1])
	}
	thr[1] *= p.thrGain
	c, err := Convert(nw, d.Tensors["mu"].F32, d.Tensors["sd"].F32, thr)
	if err != nil {
		return "not run: " + err.Error()
	}
	n1 := nw.Sizes[1]
	w1 := make([]float32, n1*D) // ours in the reference's (n_1, d) layout
	for j := range D {
		for i := range n1 {
			w1[i*D+j] = c.w1[j*n1+i]
		}
	}
	for _, cmp := range []struct {
		name string
		ours []float32
	}{{"W1f", w1}, {"b1f", c.b1}} {
		rt := d.Tensors[cmp.name]
		if v := refdump.Compare(cmp.name, refdump.Tensor{Shape: rt.Shape, F32: cmp.ours}, rt, false, nil); v != "" {
			return "differs at step 0 (the folded first layer), tensor " + v
		}
	}
	raw := make([]uint8, D)
	for i := range p.samples {
		P, u := d.Tensors[fmt.Sprintf("s%d/P", i)].F32, d.Tensors[fmt.Sprintf("s%d/u", i)].F32
		y := d.Tensors[fmt.Sprintf("s%d/y", i)].I32
		if len(P) != D || len(u) != p.ts*D || len(y) != 1 {
			return fmt.Sprintf("not run: image %d: the recording is missing or malformed", i)
		}
		for j, x := range P {
			v := math.Round(float64(x) * 255)
			raw[j] = uint8(v)
			if float32(v)/255 != x {
				return fmt.Sprintf("not run: image %d, pixel %d: intensity %g is not a byte over 255", i, j, x)
			}
		}
		c.inputTape = func(t, j int) bool { return u[t*D+j] < P[j] }
		k := c.Run(raw, y, p.ts, core.NewRNG(0, core.StreamConvert))
		rs := d.Tensors[fmt.Sprintf("s%d/spikes", i)].F64
		for l, s := range k.Spikes {
			if float64(s) != rs[l] {
				return fmt.Sprintf("differs at step %d (image %d), tensor spikes[%d]: ours %d, reference %g", i+1, i, l, s, rs[l])
			}
		}
		rc := d.Tensors[fmt.Sprintf("s%d/correct", i)].I32[0]
		if int32(k.Correct) != rc {
			return fmt.Sprintf("differs at step %d (image %d), tensor correct: ours %d, reference %d", i+1, i, k.Correct, rc)
		}
		ev, re := c.Events(k), d.Tensors[fmt.Sprintf("s%d/events", i)].F64[0]
		// The reference's mean fan-outs are float32 means over a mask.
		if math.Abs(ev-re) > 1e-6*math.Abs(re) {
			return fmt.Sprintf("differs at step %d (image %d), tensor events: ours %.9g, reference %.9g", i+1, i, ev, re)
		}
	}
	return fmt.Sprintf("identical through %d steps (the calibration, then %d images at T_s = %d on the reference's taped input spikes)", p.samples+1, p.samples, p.ts)
}
