package backprop

import (
	"fmt"

	"repro/core"
)

// The differential check against the authors' code (tools/refcheck/refbp.py,
// refcheck_test.go) loads a state their run_bp_local wrote into a runner,
// replays their random draws (core.TapeRNG), runs the same local-schedule
// steps and compares the state after. This file holds the narrow hooks it
// needs and nothing of the check itself: injectLocal and injectBatch (a
// local-schedule or batch-protocol run whose network, Adam state,
// suppression and buffer are given) and exportState (the same state back,
// in the reference's layout).
//
// Names, as refbp.py writes them under "<tag>/": W<l> (layer l's weights in
// torch's (out, in) layout, l from 1), b<l>, mW<l>, vW<l>, mb<l>, vb<l> (Adam's
// moments), t (Adam's shared step counter), sup<l> (the rotation's
// suppression of hidden layer l, 1 = benched), bufX, bufY, bufZ (DER++'s
// stored logits), bufSeen.

// injectLocal returns a runner of cfg (method "local") on train with the
// state ts holds under tag, and its local-schedule step; the runner's
// generator is left for the caller to set.
func injectLocal(cfg Config, train *core.Dataset, ts core.Tensors, tag string) (*runner, *localStep, error) {
	if cfg.Method != MethodLocal {
		return nil, nil, fmt.Errorf("injectLocal: method %q, want %q", cfg.Method, MethodLocal)
	}
	r, err := injectRunner(cfg, train, ts, tag)
	if err != nil {
		return nil, nil, err
	}
	s := r.newLocalStep()
	for l := 1; l < r.net.Layers(); l++ {
		sup, ok := ts[fmt.Sprintf("%s/sup%d", tag, l)]
		if !ok {
			continue // the reference's suppression before any waking batch (None): none benched
		}
		if len(sup.F32) != len(r.supp[l]) {
			return nil, nil, fmt.Errorf("injectLocal: %s/sup%d has %d values, want %d", tag, l, len(sup.F32), len(r.supp[l]))
		}
		for i, x := range sup.F32 {
			r.supp[l][i] = x != 0
		}
	}
	return r, s, nil
}

// injectBatch returns a runner of cfg (the batch protocol's methods) on
// train with the state ts holds under tag, and its step.
func injectBatch(cfg Config, train *core.Dataset, ts core.Tensors, tag string) (*runner, *batchStep, error) {
	if cfg.Method == MethodLocal {
		return nil, nil, fmt.Errorf("injectBatch: method %q is the local schedule: injectLocal", cfg.Method)
	}
	r, err := injectRunner(cfg, train, ts, tag)
	if err != nil {
		return nil, nil, err
	}
	return r, r.newBatchStep(), nil
}

// injectRunner returns a runner of cfg on train whose network, Adam state
// and buffer are those ts holds under tag.
func injectRunner(cfg Config, train *core.Dataset, ts core.Tensors, tag string) (*runner, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("inject: config: %w", err)
	}
	all := make(core.Task, train.Classes)
	for c := range all {
		all[c] = c
	}
	r := newRunner(cfg, train, train, []core.Task{all}, 0, core.Hooks{})
	net := r.net
	get := func(name string, n int) ([]float32, error) {
		t, ok := ts[tag+"/"+name]
		if !ok {
			return nil, fmt.Errorf("inject: %s/%s missing", tag, name)
		}
		if len(t.F32) != n {
			return nil, fmt.Errorf("inject: %s/%s has %d float32 values, want %d (sizes %v)", tag, name, len(t.F32), n, net.Sizes)
		}
		return t.F32, nil
	}
	mw, mb := net.views(r.adam.M)
	vw, vb := net.views(r.adam.V)
	for l := range net.Layers() {
		in, out := net.Sizes[l], net.Sizes[l+1]
		for _, p := range []struct {
			name string
			dst  []float32
		}{{"W", net.W[l]}, {"mW", mw[l]}, {"vW", vw[l]}} {
			v, err := get(fmt.Sprintf("%s%d", p.name, l+1), in*out)
			if err != nil {
				return nil, err
			}
			for i := range out {
				for j := range in {
					p.dst[j*out+i] = v[i*in+j]
				}
			}
		}
		for _, p := range []struct {
			name string
			dst  []float32
		}{{"b", net.B[l]}, {"mb", mb[l]}, {"vb", vb[l]}} {
			v, err := get(fmt.Sprintf("%s%d", p.name, l+1), out)
			if err != nil {
				return nil, err
			}
			copy(p.dst, v)
		}
	}
	t, ok := ts[tag+"/t"]
	if !ok || len(t.I32) != 1 {
		return nil, fmt.Errorf("inject: %s/t missing or not one integer", tag)
	}
	r.adam.T = int(t.I32[0])
	seen, ok := ts[tag+"/bufSeen"]
	if !ok || len(seen.I32) != 1 {
		return nil, fmt.Errorf("inject: %s/bufSeen missing or not one integer", tag)
	}
	x, y, z := ts[tag+"/bufX"].F32, ts[tag+"/bufY"].I32, ts[tag+"/bufZ"].F32
	if err := r.buf.SetContents(x, y, z, int(seen.I32[0])); err != nil {
		return nil, fmt.Errorf("inject: %s: %w", tag, err)
	}
	return r, nil
}

// exportState returns a runner's state under the names
// injectLocal reads (without tag), in the reference's layout. sup<l> is
// present under Rotate only (the reference's suppression stays None
// without it).
func (r *runner) exportState() core.Tensors {
	net := r.net
	ts := core.Tensors{}
	mw, mb := net.views(r.adam.M)
	vw, vb := net.views(r.adam.V)
	for l := range net.Layers() {
		in, out := net.Sizes[l], net.Sizes[l+1]
		for _, p := range []struct {
			name string
			src  []float32
		}{{"W", net.W[l]}, {"mW", mw[l]}, {"vW", vw[l]}} {
			v := make([]float32, in*out)
			for i := range out {
				for j := range in {
					v[i*in+j] = p.src[j*out+i]
				}
			}
			ts[fmt.Sprintf("%s%d", p.name, l+1)] = core.Tensor{Shape: []int{out, in}, F32: v}
		}
		for _, p := range []struct {
			name string
			src  []float32
		}{{"b", net.B[l]}, {"mb", mb[l]}, {"vb", vb[l]}} {
			ts[fmt.Sprintf("%s%d", p.name, l+1)] = core.Tensor{Shape: []int{out}, F32: append([]float32(nil), p.src...)}
		}
	}
	ts["t"] = core.Tensor{Shape: []int{1}, I32: []int32{int32(r.adam.T)}}
	if r.cfg.Rotate {
		for l := 1; l < net.Layers(); l++ {
			v := make([]float32, len(r.supp[l]))
			for i, s := range r.supp[l] {
				if s {
					v[i] = 1
				}
			}
			ts[fmt.Sprintf("sup%d", l)] = core.Tensor{Shape: []int{len(v)}, F32: v}
		}
	}
	x, y, z, seen := r.buf.Contents()
	if len(y) > 0 {
		ts["bufX"] = core.Tensor{Shape: []int{len(y), len(x) / len(y)}, F32: x}
		ts["bufY"] = core.Tensor{Shape: []int{len(y)}, I32: y}
		if len(z) > 0 {
			ts["bufZ"] = core.Tensor{Shape: []int{len(y), len(z) / len(y)}, F32: z}
		}
	}
	ts["bufSeen"] = core.Tensor{Shape: []int{1}, I32: []int32{int32(seen)}}
	return ts
}
