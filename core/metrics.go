package core

import (
	"slices"

	"repro/internal/kernels"
)

// evalChunks runs the network (suppression off) over the listed eval
// samples in chunks, calling f after each chunk's forward pass with the
// chunk's sample indices.
func (r *localRun) evalChunks(idx []int, f func(p *pass, chunk []int)) {
	p := r.evalP
	for lo := 0; lo < len(idx); lo += p.cap {
		chunk := idx[lo:min(lo+p.cap, len(idx))]
		p.load(r.eval, chunk)
		r.nt.forward(p, nil)
		f(p, chunk)
	}
}

// evaluate returns the accuracy row after task ti: acc[j] on the eval
// samples of task j's classes for j <= ti. After the last
// task it also sets FinalAcc.
func (r *localRun) evaluate(ti int) []float64 {
	ev := r.eval
	all := make([]int, ev.N)
	for i := range all {
		all[i] = i
	}
	pred := make([]int32, ev.N)
	buf := make([]int32, r.evalP.cap)
	r.evalChunks(all, func(p *pass, chunk []int) {
		r.nt.predict(p, buf)
		for b, i := range chunk {
			pred[i] = buf[b]
		}
	})
	row := make([]float64, ti+1)
	for j := 0; j <= ti; j++ {
		var n, ok int
		for i, y := range ev.Y {
			if slices.Contains(r.tasks[j], int(y)) {
				n++
				if pred[i] == y {
					ok++
				}
			}
		}
		row[j] = float64(ok) / float64(max(1, n))
	}
	if ti == len(r.tasks)-1 {
		ok := 0
		for i, y := range ev.Y {
			if pred[i] == y {
				ok++
			}
		}
		r.res.FinalAcc = float64(ok) / float64(ev.N)
	}
	return row
}

// finish fills the end-of-run metrics.
func (r *localRun) finish() {
	res, nt := &r.res, r.nt
	L := nt.L
	res.Forgetting = Forgetting(res.Acc)
	res.Rho = make([]float64, L-1)
	res.AsleepFrac = make([]float64, L-1)
	if res.ReplayUpdates > 0 {
		// rho and the asleep fraction are logged per replay micro-batch
		// (night batches are not).
		nRep := res.ReplayUpdates - r.nightBatches
		for l := range res.Rho {
			if nRep > 0 {
				res.Rho[l] = r.rhoSum[l] / float64(nRep)
				res.AsleepFrac[l] = r.sleepSum[l] / float64(nRep)
			}
		}
	}
	res.Overlap = r.codeOverlap()
	var synops float64
	res.PR, synops = r.participation()
	res.SetSynOps(synops, nt.denseMACs())
	if r.cfg.GatedRotation() && res.WakingBatches > 0 {
		res.GateDuty = float64(r.ext.gateOn) / float64(res.WakingBatches)
	}
	if r.cfg.KPAdapt > 0 {
		for l := 2; l <= L; l++ {
			res.KPLambda = append(res.KPLambda, nt.lay[l].kpEff)
		}
	}
	if r.drift != nil {
		res.Drift = r.drift.result()
	}
	if total := r.channels[0] + r.channels[1] + r.channels[2]; total > 0 {
		res.MaskChannels = make([]float64, len(r.channels))
		for k, n := range r.channels {
			res.MaskChannels[k] = float64(n) / float64(total)
		}
	}
}

// codeOverlap is the mean pairwise Jaccard of the task-active sets per
// hidden layer, a unit being task-active when it fires on more than 5% of the
// task's eval samples. It is 0 with a single task.
func (r *localRun) codeOverlap() []float64 {
	nt := r.nt
	L := nt.L
	T := len(r.tasks)
	active := make([][][]bool, T) // [task][layer][unit]
	for ti, task := range r.tasks {
		var idx []int
		for i, y := range r.eval.Y {
			if slices.Contains(task, int(y)) {
				idx = append(idx, i)
			}
		}
		count := make([][]int, L)
		for l := 1; l < L; l++ {
			count[l] = make([]int, nt.sizes[l])
		}
		r.evalChunks(idx, func(p *pass, _ []int) {
			for l := 1; l < L; l++ {
				for _, i := range p.act[l] {
					count[l][i]++
				}
			}
		})
		active[ti] = make([][]bool, L)
		for l := 1; l < L; l++ {
			active[ti][l] = make([]bool, nt.sizes[l])
			for i, c := range count[l] {
				active[ti][l][i] = float64(c) > 0.05*float64(len(idx))
			}
		}
	}
	out := make([]float64, L-1)
	for l := 1; l < L; l++ {
		var sum float64
		pairs := 0
		for a := range T {
			for b := a + 1; b < T; b++ {
				var inter, union int
				for i := range nt.sizes[l] {
					x, y := active[a][l][i], active[b][l][i]
					if x && y {
						inter++
					}
					if x || y {
						union++
					}
				}
				sum += float64(inter) / float64(max(union, 1))
				pairs++
			}
		}
		if pairs > 0 {
			out[l-1] = sum / float64(pairs)
		}
	}
	return out
}

// participation returns the participation ratio (sum lambda)^2 / (sum
// lambda^2 + 1e-12) of the covariance of the input and of every hidden layer
// over the first PRSamples eval samples, and the synaptic
// operations per sample of that pass. Since the eigenvalues of the
// covariance C are its squared singular values over N-1, sum lambda = tr C
// and sum lambda^2 = ||C||_F^2; both are computed in float64 from sparse
// activity (the input relative to its offset, which leaves C unchanged).
func (r *localRun) participation() ([]float64, float64) {
	nt := r.nt
	L := nt.L
	N := min(r.cfg.PRSamples, r.eval.N)
	if N < 2 {
		return nil, 0
	}
	idx := make([]int, N)
	for i := range idx {
		idx[i] = i
	}
	grams := make([][]float64, L) // layer 0 = input
	sums := make([][]float64, L)
	for l := range L {
		n := nt.sizes[l]
		grams[l] = make([]float64, n*n)
		sums[l] = make([]float64, n)
	}
	nnz := make([]float64, L) // non-zero presynaptic activities, layer l-1 -> l
	d := nt.sizes[0]
	var x64 []float64 // a chunk's dense inputs relative to the offset
	r.evalChunks(idx, func(p *pass, _ []int) {
		// Dense inputs (CIFAR) take the blocked product; both ways add
		// the same products in sample order (the zeros the dense way adds
		// leave a sum of products, never -0, unchanged).
		denseIn := 2*int(p.rPtr[p.n]) > p.n*d
		if denseIn {
			ld := gramStride(d)
			x64 = slices.Grow(x64[:0], p.n*ld)[:p.n*ld]
			clear(x64)
			for b := range p.n {
				lo, hi := p.rPtr[b], p.rPtr[b+1]
				for t, j := range p.rIdx[lo:hi] {
					x64[b*ld+int(j)] = float64(p.rVal[int(lo)+t])
				}
			}
			addGramDense(grams[0], sums[0], d, x64, ld, p.n)
		}
		for b := range p.n {
			if !denseIn {
				lo, hi := p.rPtr[b], p.rPtr[b+1]
				addOuter(grams[0], sums[0], d, p.rIdx[lo:hi], p.rVal[lo:hi], nil)
			}
			for _, v := range p.x[b*d : (b+1)*d] {
				if v != 0 {
					nnz[0]++
				}
			}
			for l := 1; l < L; l++ {
				n := nt.sizes[l]
				act := p.activeOf(l, b)
				addOuter(grams[l], sums[l], n, act, nil, p.a[l][b*n:(b+1)*n])
				nnz[l] += float64(len(act))
			}
		}
	})
	pr := make([]float64, L)
	for l := range L {
		pr[l] = participationRatio(grams[l], sums[l], nt.sizes[l], N)
	}
	var synops float64
	for l := 1; l <= L; l++ {
		ly := nt.lay[l]
		fanOut := float64(ly.present()) / float64(ly.nIn)
		synops += nnz[l-1] / float64(N) * fanOut
	}
	return pr, synops
}

// participationRatio is (tr C)^2 / ||C||_F^2 of the covariance C of N
// samples of n units, from the upper triangle of their gram matrix and
// their sums.
func participationRatio(gram, sums []float64, n, N int) float64 {
	var tr, fro float64
	for i := range n {
		for j := range n {
			// The gram holds its upper triangle (it is symmetric bit for
			// bit: the same products in the same order).
			g := gram[min(i, j)*n+max(i, j)]
			c := (g - sums[i]*sums[j]/float64(N)) / float64(N-1)
			fro += c * c
			if i == j {
				tr += c
			}
		}
	}
	return tr * tr / (fro + 1e-12)
}

// addOuter adds the outer product of one sparse activity vector (entries
// idx, ascending, with values val, or dense[idx] when val is nil) to the
// upper triangle (j >= i) of the n x n gram and its entries to sums.
func addOuter(gram, sums []float64, n int, idx []int32, val, dense []float32) {
	get := func(t int) float64 {
		if val != nil {
			return float64(val[t])
		}
		return float64(dense[idx[t]])
	}
	for t, i := range idx {
		vi := get(t)
		sums[i] += vi
		row := gram[int(i)*n:]
		for u := t; u < len(idx); u++ {
			row[idx[u]] += float64(vi * get(u)) // never fused, as addGramDense
		}
	}
}

// addGramDense is addOuter for the nb dense rows of x (n values each, row b
// at x[b*ld:]) in turn: gram[i][j] += x[b][i]*x[b][j] (j >= i, at least)
// and sums[i] += x[b][i], b ascending per element, as nb calls of addOuter
// would add them (the conversions forbid fusing into an FMA; the products
// of two float32 values are exact in float64, the sums are not).
func addGramDense(gram, sums []float64, n int, x []float64, ld, nb int) {
	x = x[:nb*ld]
	for b := range nb {
		for i, v := range x[b*ld : b*ld+n] {
			sums[i] += v
		}
	}
	kernels.GramUpper(gram, n, x, ld, nb)
}

// gramStride is the distance between the rows of addGramDense's x for n
// entries a row: n, plus one cache line when n float64s span a multiple of
// 512 bytes. A sample's entries are read a cache line from every row at a
// time, and rows 8 KB apart (CIFAR's 1,024 entries) would all fall into
// one set of the L1 cache and evict each other.
func gramStride(n int) int {
	if n*8%512 == 0 {
		return n + 8
	}
	return n
}

// denseMACs is DenseMACs of the network's sizes plus its skip synapses,
// which the reference counts in dense_macs too.
func (nt *net) denseMACs() float64 {
	m := DenseMACs(nt.sizes)
	for l, sk := range nt.skip {
		if sk != nil {
			m += float64(nt.sizes[l-2]) * float64(nt.sizes[l])
		}
	}
	return m
}
