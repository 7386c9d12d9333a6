package core

import (
	"math"
	"slices"
)

// driftAcc measures the exactness diagnostic: around every
// replay update the waking batch is re-inferred under the suppression it was
// inferred with, once before and once after the masked update.
type driftAcc struct {
	pre, post *pass
	silent    [][]bool // units silent on the whole batch before the update
	code      float64
	pred      float64
	margin    []float64
	maxLogit  []float64
	steps     int
	predBuf   [2][]int32
}

func newDriftAcc(nt *net, capacity int) *driftAcc {
	d := &driftAcc{pre: newPass(nt, capacity), post: newPass(nt, capacity),
		silent: make([][]bool, nt.L), margin: make([]float64, nt.L-1)}
	for l := 1; l < nt.L; l++ {
		d.silent[l] = make([]bool, nt.sizes[l])
	}
	d.predBuf[0] = make([]int32, capacity)
	d.predBuf[1] = make([]int32, capacity)
	return d
}

// before re-infers the waking batch p under sup before a replay update.
func (d *driftAcc) before(nt *net, p *pass, sup [][]float32) {
	for _, q := range []*pass{d.pre, d.post} {
		q.n = p.n
		copy(q.x, p.x[:p.n*nt.sizes[0]])
		copy(q.y, p.y[:p.n])
	}
	nt.forward(d.pre, sup)
}

// after re-infers the batch after the update and accumulates the rates.
func (d *driftAcc) after(nt *net, sup [][]float32) {
	nt.forward(d.post, sup)
	a, b := d.pre, d.post
	C := nt.sizes[nt.L]
	var maxDZ float64
	for i := range a.n * C {
		maxDZ = max(maxDZ, math.Abs(float64(b.z[i]-a.z[i])))
	}
	d.maxLogit = append(d.maxLogit, maxDZ)
	nt.predict(a, d.predBuf[0])
	nt.predict(b, d.predBuf[1])
	top := nt.L - 1
	nTop := nt.sizes[top]
	var predCh, codeCh int
	for s := range a.n {
		if d.predBuf[0][s] != d.predBuf[1][s] {
			predCh++
		}
		if !slices.Equal(a.a[top][s*nTop:(s+1)*nTop], b.a[top][s*nTop:(s+1)*nTop]) {
			codeCh++
		}
	}
	d.pred += float64(predCh) / float64(a.n)
	d.code += float64(codeCh) / float64(a.n)
	for l := 1; l < nt.L; l++ {
		sil := d.silent[l]
		for i := range sil {
			sil[i] = true
		}
		for _, i := range a.act[l] {
			sil[i] = false
		}
		var nSil, viol int
		fired := make([]bool, len(sil))
		for _, i := range b.act[l] {
			fired[i] = true
		}
		for i, s := range sil {
			if s {
				nSil++
				if fired[i] {
					viol++
				}
			}
		}
		if nSil > 0 {
			d.margin[l-1] += float64(viol) / float64(nSil)
		}
	}
	d.steps++
}

func (d *driftAcc) result() *Drift {
	out := &Drift{Steps: d.steps, MarginViolated: make([]float64, len(d.margin))}
	if d.steps == 0 {
		return out
	}
	n := float64(d.steps)
	out.CodeChange = d.code / n
	out.PredChange = d.pred / n
	for l, v := range d.margin {
		out.MarginViolated[l] = v / n
	}
	var s float64
	for _, v := range d.maxLogit {
		s += v
	}
	out.MaxLogitMean = s / n
	sorted := slices.Clone(d.maxLogit)
	slices.Sort(sorted)
	out.MaxLogitP99 = sorted[min(len(sorted)-1, int(math.Ceil(0.99*n))-1)]
	return out
}
