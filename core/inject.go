package core

import (
	"fmt"
	"math/bits"
	"math/rand/v2"
)

// The differential check against the authors' code (tools/refcheck,
// refcheck_test.go) loads a learner state written by their run into a
// localRun, replays their random draws, runs the same waking steps and
// compares the state after. This file holds the two narrow hooks it needs
// and nothing of the check itself: injectRun (a run whose network,
// optimiser, baselines, controller, buffer and loop state are given) and
// exportState (the same state back, in the same dense layout), and
// TapeRNG (a generator whose bounded draws are given).

// Tensor is a dense row-major array in the reference's layout; exactly one
// of F32, F64 and I32 holds its values.
type Tensor struct {
	Shape []int
	F32   []float32
	F64   []float64
	I32   []int32
}

// Tensors names tensors as tools/refcheck/refstep.py does: "<tag>/<name>"
// with name W<l>, b<l>, B<l> (the twin B^l of W^{l+1}), mW<l>, vW<l>,
// mb<l>, vb<l>, mB<l>, vB<l> (velocity or Adam moments), sign<l>, mask<l>,
// ebar<l>, sup<l>, gema<l>, kpeff<l>, Wslow<l>, bslow<l>, Bslow<l> (the
// anchor's slow copies), S<l>, Bs<l> (the skip synapses into layer l from
// layer l-2 and their twin), mS<l>, vS<l>, mBs<l>, vBs<l>, t, bufX, bufY, bufSeen, gstep,
// pressure<l>, mirrorAct<l>, restP<l> (refr_press and refr_frac's rest
// pressure), longUse<l> (refr_util's long-term use trace), and the gate
// scalars.
type Tensors map[string]Tensor

func (ts Tensors) f32(name string) ([]float32, bool) {
	t, ok := ts[name]
	if !ok {
		return nil, false
	}
	if t.F32 != nil {
		return t.F32, true
	}
	v := make([]float32, 0, max(len(t.I32), len(t.F64)))
	for _, x := range t.I32 {
		v = append(v, float32(x))
	}
	for _, x := range t.F64 {
		v = append(v, float32(x))
	}
	return v, true
}

func (ts Tensors) scalar(name string) (float64, bool) {
	t, ok := ts[name]
	switch {
	case !ok:
		return 0, false
	case len(t.F64) == 1:
		return t.F64[0], true
	case len(t.I32) == 1:
		return float64(t.I32[0]), true
	case len(t.F32) == 1:
		return float64(t.F32[0]), true
	}
	return 0, false
}

// injectRun returns a run of cfg on train whose state is the one ts holds
// under tag. What it cannot represent (twin velocities that differ from
// W's or S's, which one shared state per synapse assumes) is an error.
// Skip synapses (cfg.Skip) are read as S<l>, Bs<l>, mS<l>, mBs<l>, vS<l>,
// vBs<l> for l = 3..L-1; they are dense and carry no mask of their own.
func injectRun(cfg *LocalConfig, ts Tensors, tag string, train *Dataset) (*localRun, error) {
	all := make(Task, train.Classes)
	for c := range all {
		all[c] = c
	}
	c := *cfg
	c.Static = false
	r, err := newLocalRun(&c, train, train, []Task{all}, 0, Hooks{})
	if err != nil {
		return nil, err
	}
	get := func(name string) ([]float32, error) {
		v, ok := ts.f32(tag + "/" + name)
		if !ok {
			return nil, fmt.Errorf("injectRun: no tensor %s/%s", tag, name)
		}
		return v, nil
	}
	getCopy := func(name string) ([]float32, error) {
		v, err := get(name)
		return append([]float32(nil), v...), err
	}
	sizes := r.nt.sizes
	L := len(sizes) - 1
	iw := initialWeights{W: make([][]float32, L+1), B: make([][]float32, L+1), S: make([][]float32, L+1), Bs: make([][]float32, L+1)}
	types := make([][]float32, L)
	keep := make([][]bool, L+1)
	for l := 1; l <= L; l++ {
		if iw.W[l], err = get(fmt.Sprintf("W%d", l)); err != nil {
			return nil, err
		}
		if len(iw.W[l]) != sizes[l]*sizes[l-1] {
			return nil, fmt.Errorf("injectRun: W%d has %d values, want %d x %d", l, len(iw.W[l]), sizes[l], sizes[l-1])
		}
		if l >= 2 {
			if iw.B[l], err = get(fmt.Sprintf("B%d", l-1)); err != nil {
				return nil, err
			}
		}
		if l < L {
			if types[l], err = get(fmt.Sprintf("sign%d", l)); err != nil {
				return nil, err
			}
			if m, ok := ts.f32(fmt.Sprintf("%s/mask%d", tag, l)); ok {
				keep[l] = make([]bool, len(m))
				for i, x := range m {
					keep[l][i] = x > 0
				}
			}
		}
		if c.Skip && l >= 3 && l < L {
			if iw.S[l], err = get(fmt.Sprintf("S%d", l)); err != nil {
				return nil, err
			}
			if iw.Bs[l], err = get(fmt.Sprintf("Bs%d", l)); err != nil {
				return nil, err
			}
			if n := sizes[l] * sizes[l-2]; len(iw.S[l]) != n || len(iw.Bs[l]) != n {
				return nil, fmt.Errorf("injectRun: S%d and Bs%d have %d and %d values, want %d x %d", l, l, len(iw.S[l]), len(iw.Bs[l]), sizes[l], sizes[l-2])
			}
		}
	}
	if !c.Skip {
		if _, ok := ts[tag+"/S3"]; ok {
			return nil, fmt.Errorf("injectRun: the state has skip synapses (%s/S3) and the config has none", tag)
		}
	}
	r.setNet(buildNet(&c, sizes, iw, types, keep), 0)
	nt := r.nt
	for l := 1; l <= L; l++ {
		ly := nt.lay[l]
		m, err := get(fmt.Sprintf("mW%d", l))
		if err != nil {
			return nil, err
		}
		ly.m1 = ly.gather(m, nil)
		// Under weight transport the reference never updates its twins
		// (B and its moments stay at their initial values, unread); ours
		// is W itself.
		if l >= 2 && !c.Transport {
			mb, err := get(fmt.Sprintf("mB%d", l-1))
			if err != nil {
				return nil, err
			}
			if i, ok := firstDiff(m, mb); ok {
				return nil, fmt.Errorf("injectRun: the velocities of W%d and its twin B%d differ at %d (%g, %g): one shared state cannot hold them", l, l-1, i, m[i], mb[i])
			}
		}
		if ly.bias, err = getCopy(fmt.Sprintf("b%d", l)); err != nil {
			return nil, err
		}
		if ly.bm1, err = getCopy(fmt.Sprintf("mb%d", l)); err != nil {
			return nil, err
		}
		if ly.m2 != nil {
			v, err := get(fmt.Sprintf("vW%d", l))
			if err != nil {
				return nil, err
			}
			ly.m2 = ly.gather(v, nil)
			if ly.bm2, err = getCopy(fmt.Sprintf("vb%d", l)); err != nil {
				return nil, err
			}
		}
		if ws, ok := ts.f32(fmt.Sprintf("%s/Wslow%d", tag, l)); ok {
			// The anchor's slow copies (after its first waking call).
			a := &ly.anchorState
			a.anchorLam, a.anchorMu = float32(cfg.Anchor[0]), float32(cfg.Anchor[1])
			a.wSlow = ly.gather(ws, nil)
			if a.biasSlow, err = getCopy(fmt.Sprintf("bslow%d", l)); err != nil {
				return nil, err
			}
			if l >= 2 {
				bs, err := get(fmt.Sprintf("Bslow%d", l-1))
				if err != nil {
					return nil, err
				}
				a.fbSlow = ly.gather(bs, nil)
			}
		}
		if u, ok := ts.scalar(fmt.Sprintf("%s/gema%d", tag, l)); ok {
			ly.uEMA, ly.uSet = u, true
			ly.kpEff, _ = ts.scalar(fmt.Sprintf("%s/kpeff%d", tag, l))
			ly.kpEffOK = true
		}
	}
	if err := injectSkip(nt, ts, tag); err != nil {
		return nil, err
	}
	nt.staleC = true
	t, _ := ts.scalar(tag + "/t")
	nt.t = int(t)
	for l := 1; l < L; l++ {
		if nt.ebar[l], err = getCopy(fmt.Sprintf("ebar%d", l)); err != nil {
			return nil, err
		}
		p, _ := ts.f32(fmt.Sprintf("%s/pressure%d", tag, l)) // absent from the night reference's run()
		for i, x := range p {
			r.pressure[l][i] = float64(x)
		}
	}
	if _, ok := ts[tag+"/sup1"]; ok {
		r.supFlip = 0
		r.sup = r.supBuf[0]
		for l := 1; l < L; l++ {
			s, err := get(fmt.Sprintf("sup%d", l))
			if err != nil {
				return nil, err
			}
			copy(r.sup[l], s)
		}
	}
	if _, ok := ts[tag+"/mirrorAct1"]; ok {
		for l := 1; l < L; l++ {
			a, _ := get(fmt.Sprintf("mirrorAct%d", l))
			for i, x := range a {
				r.ractive[l][i] = x > 0
			}
		}
		r.haveRact = true
	}
	// The rest masks' state: refr_press and refr_frac's rest pressure,
	// refr_util's long-term use trace.
	if _, ok := ts[tag+"/restP1"]; ok {
		if r.ext.restP, err = injectPerUnit(ts, tag, "restP", sizes); err != nil {
			return nil, err
		}
	}
	if _, ok := ts[tag+"/longUse1"]; ok {
		if r.ext.longUse, err = injectPerUnit(ts, tag, "longUse", sizes); err != nil {
			return nil, err
		}
	}
	if err := r.injectBuffer(ts, tag); err != nil {
		return nil, err
	}
	g, _ := ts.scalar(tag + "/gstep")
	r.gstep = int(g)
	if v, ok := ts.scalar(tag + "/surprise_ema"); ok {
		r.fast, r.emaInit = v, true
		r.slow, _ = ts.scalar(tag + "/surprise_slow")
	}
	r.e0Sum, _ = ts.scalar(tag + "/err0_sum")
	e0n, _ := ts.scalar(tag + "/err0_n")
	bc, _ := ts.scalar(tag + "/block_ctr")
	oc, _ := ts.scalar(tag + "/off_ctr")
	r.e0N, r.blockCtr, r.offCtr = int(e0n), int(bc), int(oc)
	return r, nil
}

// injectPerUnit reads the per-unit vectors <tag>/<name><l> of the hidden
// layers l = 1..L-1 as float64, one per layer (index 0 nil).
func injectPerUnit(ts Tensors, tag, name string, sizes []int) ([][]float64, error) {
	L := len(sizes) - 1
	out := make([][]float64, L)
	for l := 1; l < L; l++ {
		v, ok := ts.f32(fmt.Sprintf("%s/%s%d", tag, name, l))
		if !ok {
			return nil, fmt.Errorf("injectRun: no tensor %s/%s%d", tag, name, l)
		}
		if len(v) != sizes[l] {
			return nil, fmt.Errorf("injectRun: %s%d has %d values, want %d", name, l, len(v), sizes[l])
		}
		out[l] = make([]float64, len(v))
		for i, x := range v {
			out[l][i] = float64(x)
		}
	}
	return out, nil
}

// injectSkip loads the optimiser state of the skip synapses S^l: the
// reference keeps one for S^l (mS, vS) and one for its twin Bs^l (mBs,
// vBs); both see the same gradient under the same mask from the same zero
// start, so they are equal, and our skip layer holds one.
func injectSkip(nt *net, ts Tensors, tag string) error {
	for l, sk := range nt.skip {
		if sk == nil {
			continue
		}
		for _, pair := range [][2]string{{"mS", "mBs"}, {"vS", "vBs"}} {
			if pair[0] == "vS" && sk.m2 == nil {
				continue
			}
			a, okA := ts.f32(fmt.Sprintf("%s/%s%d", tag, pair[0], l))
			b, okB := ts.f32(fmt.Sprintf("%s/%s%d", tag, pair[1], l))
			if !okA || !okB {
				return fmt.Errorf("injectRun: no tensor %s/%s%d or %s/%s%d", tag, pair[0], l, tag, pair[1], l)
			}
			if i, ok := firstDiff(a, b); ok {
				return fmt.Errorf("injectRun: the states %s%d and %s%d differ at %d (%g, %g): one shared state cannot hold them", pair[0], l, pair[1], l, i, a[i], b[i])
			}
			if pair[0] == "mS" {
				sk.m1 = sk.gather(a, nil)
			} else {
				sk.m2 = sk.gather(a, nil)
			}
		}
	}
	return nil
}

// injectBuffer fills the reservoir with the items and offer count ts holds.
func (r *localRun) injectBuffer(ts Tensors, tag string) error {
	seen, _ := ts.scalar(tag + "/bufSeen")
	r.buf.seen = int(seen)
	x, ok := ts.f32(tag + "/bufX")
	if !ok {
		r.buf.n = 0
		return nil
	}
	y := ts[tag+"/bufY"].I32
	if len(y) > r.buf.capacity || len(x) != len(y)*r.buf.dim {
		return fmt.Errorf("injectRun: a buffer of %d items of %d values does not fit capacity %d, width %d",
			len(y), len(x)/max(1, len(y)), r.buf.capacity, r.buf.dim)
	}
	r.buf.n = len(y)
	copy(r.buf.x, x)
	copy(r.buf.y, y)
	return nil
}

// exportState returns the run's state under the names injectRun reads
// (without tag), dense and row-major; the entries of a synapse the layer
// does not store read 0 (weights) or NaN (optimiser state, which the
// reference keeps for absent synapses and this port drops), and
// "stored<l>" marks with 1 the synapses layer l stores.
func (r *localRun) exportState() Tensors {
	nt := r.nt
	L := nt.L
	ts := Tensors{}
	put := func(name string, shape []int, v []float32) {
		ts[name] = Tensor{Shape: shape, F32: v}
	}
	for l := 1; l <= L; l++ {
		ly := nt.lay[l]
		shape := []int{ly.nOut, ly.nIn}
		stored := make([]float32, ly.nOut*ly.nIn)
		for i := range ly.nOut {
			for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
				stored[i*ly.nIn+int(ly.col[s])] = 1
			}
		}
		put(fmt.Sprintf("stored%d", l), shape, stored)
		put(fmt.Sprintf("W%d", l), shape, ly.scatterDense(ly.w, 0))
		put(fmt.Sprintf("mW%d", l), shape, ly.scatterDense(ly.m1, nan32()))
		if ly.m2 != nil {
			put(fmt.Sprintf("vW%d", l), shape, ly.scatterDense(ly.m2, nan32()))
			put(fmt.Sprintf("vb%d", l), []int{ly.nOut}, append([]float32(nil), ly.bm2...))
		}
		if l >= 2 {
			put(fmt.Sprintf("B%d", l-1), shape, ly.scatterDense(ly.fb, 0))
			put(fmt.Sprintf("mB%d", l-1), shape, ly.scatterDense(ly.m1, nan32()))
			if ly.m2 != nil {
				put(fmt.Sprintf("vB%d", l-1), shape, ly.scatterDense(ly.m2, nan32()))
			}
		}
		put(fmt.Sprintf("b%d", l), []int{ly.nOut}, append([]float32(nil), ly.bias...))
		put(fmt.Sprintf("mb%d", l), []int{ly.nOut}, append([]float32(nil), ly.bm1...))
		if ly.wSlow != nil {
			put(fmt.Sprintf("Wslow%d", l), shape, ly.scatterDense(ly.wSlow, 0))
			put(fmt.Sprintf("bslow%d", l), []int{ly.nOut}, append([]float32(nil), ly.biasSlow...))
			if ly.fbSlow != nil {
				put(fmt.Sprintf("Bslow%d", l-1), shape, ly.scatterDense(ly.fbSlow, 0))
			}
		}
		if sk := nt.skip[l]; sk != nil {
			sh := []int{sk.nOut, sk.nIn}
			put(fmt.Sprintf("S%d", l), sh, sk.scatterDense(sk.w, 0))
			put(fmt.Sprintf("Bs%d", l), sh, sk.scatterDense(sk.fb, 0))
			put(fmt.Sprintf("mS%d", l), sh, sk.scatterDense(sk.m1, nan32()))
			put(fmt.Sprintf("mBs%d", l), sh, sk.scatterDense(sk.m1, nan32()))
			if sk.m2 != nil {
				put(fmt.Sprintf("vS%d", l), sh, sk.scatterDense(sk.m2, nan32()))
				put(fmt.Sprintf("vBs%d", l), sh, sk.scatterDense(sk.m2, nan32()))
			}
		}
		if ly.uSet {
			ts[fmt.Sprintf("gema%d", l)] = Tensor{Shape: []int{1}, F64: []float64{ly.uEMA}}
			ts[fmt.Sprintf("kpeff%d", l)] = Tensor{Shape: []int{1}, F64: []float64{ly.kpEff}}
		}
	}
	for l := 1; l < L; l++ {
		put(fmt.Sprintf("ebar%d", l), []int{nt.sizes[l]}, append([]float32(nil), nt.ebar[l]...))
		p := make([]float32, nt.sizes[l])
		for i, x := range r.pressure[l] {
			p[i] = float32(x)
		}
		put(fmt.Sprintf("pressure%d", l), []int{nt.sizes[l]}, p)
		if r.sup != nil {
			put(fmt.Sprintf("sup%d", l), []int{nt.sizes[l]}, append([]float32(nil), r.sup[l]...))
		}
		if r.haveRact {
			a := make([]float32, nt.sizes[l])
			for i, on := range r.ractive[l] {
				if on {
					a[i] = 1
				}
			}
			put(fmt.Sprintf("mirrorAct%d", l), []int{nt.sizes[l]}, a)
		}
	}
	for name, per := range map[string][][]float64{"restP": r.ext.restP, "longUse": r.ext.longUse} {
		for l := 1; l < len(per); l++ {
			ts[fmt.Sprintf("%s%d", name, l)] = Tensor{Shape: []int{len(per[l])}, F64: append([]float64(nil), per[l]...)}
		}
	}
	if r.emaInit {
		ts["surprise_ema"] = Tensor{Shape: []int{1}, F64: []float64{r.fast}}
		ts["surprise_slow"] = Tensor{Shape: []int{1}, F64: []float64{r.slow}}
	}
	for name, v := range map[string]int{"err0_n": r.e0N, "block_ctr": r.blockCtr, "off_ctr": r.offCtr} {
		ts[name] = Tensor{Shape: []int{1}, I32: []int32{int32(v)}}
	}
	ts["err0_sum"] = Tensor{Shape: []int{1}, F64: []float64{r.e0Sum}}
	ts["t"] = Tensor{Shape: []int{1}, I32: []int32{int32(nt.t)}}
	ts["gstep"] = Tensor{Shape: []int{1}, I32: []int32{int32(r.gstep)}}
	ts["bufSeen"] = Tensor{Shape: []int{1}, I32: []int32{int32(r.buf.seen)}}
	if r.buf.n > 0 {
		put("bufX", []int{r.buf.n, r.buf.dim}, append([]float32(nil), r.buf.x[:r.buf.n*r.buf.dim]...))
		ts["bufY"] = Tensor{Shape: []int{r.buf.n}, I32: append([]int32(nil), r.buf.y[:r.buf.n]...)}
	}
	return ts
}

// passTensors returns the inputs X and labels y of the pass, its
// activities a<l> (hidden) and errors eps<l>, n x n_l each.
func (nt *net) passTensors(p *pass) Tensors {
	d := nt.sizes[0]
	ts := Tensors{
		"X": {Shape: []int{p.n, d}, F32: append([]float32(nil), p.x[:p.n*d]...)},
		"y": {Shape: []int{p.n}, I32: append([]int32(nil), p.y[:p.n]...)},
	}
	for l := 1; l <= nt.L; l++ {
		n := nt.sizes[l]
		if l < nt.L {
			ts[fmt.Sprintf("a%d", l)] = Tensor{Shape: []int{p.n, n}, F32: append([]float32(nil), p.a[l][:p.n*n]...)}
		}
		ts[fmt.Sprintf("eps%d", l)] = Tensor{Shape: []int{p.n, n}, F32: append([]float32(nil), p.eps[l][:p.n*n]...)}
	}
	return ts
}

// scatterDense returns the stored values v as a dense row-major matrix,
// fill where no synapse is stored.
func (ly *layer) scatterDense(v []float32, fill float32) []float32 {
	out := make([]float32, ly.nOut*ly.nIn)
	for i := range out {
		out[i] = fill
	}
	for i := range ly.nOut {
		for s := ly.rowPtr[i]; s < ly.rowPtr[i+1]; s++ {
			out[i*ly.nIn+int(ly.col[s])] = v[s]
		}
	}
	return out
}

func nan32() float32 {
	var z float32
	return z / z
}

// firstDiff returns the first index where a and b differ (bitwise
// inequality of the values; equal lengths assumed).
func firstDiff(a, b []float32) (int, bool) {
	for i := range a {
		if a[i] != b[i] {
			return i, true
		}
	}
	return 0, false
}

// Draw is one bounded integer draw: a value in [0, N).
type Draw struct{ Value, N int }

// TapeRNG returns a generator whose successive IntN(N) calls (and the
// bounded draws of Perm and Shuffle) return the taped values, in order:
// each Uint64 it yields is the one math/rand/v2's multiply-shift maps to
// the taped value (the midpoint of its preimage, which the rejection step
// never rejects; the value itself for a power-of-two N). The caller must
// ask for the same bounds in the same order; *done reports the draws taken
// and a call past the end panics.
func TapeRNG(draws []Draw, done *int) *RNG {
	return rand.New(&tapeSource{draws: draws, done: done})
}

type tapeSource struct {
	draws []Draw
	done  *int
}

func (t *tapeSource) Uint64() uint64 {
	if *t.done >= len(t.draws) {
		panic(fmt.Sprintf("core: TapeRNG: draw %d past the tape's end", *t.done))
	}
	d := t.draws[*t.done]
	*t.done++
	n := uint64(d.N)
	if n&(n-1) == 0 {
		return uint64(d.Value)
	}
	// x = floor((2v+1) 2^63 / n): x n / 2^64 lies in (v, v+1) with the
	// low word near 2^63, far above n.
	hi, lo := uint64(2*d.Value+1)>>1, uint64(2*d.Value+1)<<63
	x, _ := bits.Div64(hi, lo, n)
	return x
}
