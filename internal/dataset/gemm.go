package dataset

// gemm computes c[i*n+j] = Σ_p a[i*k+p] * bt[p*n+j] for i < m, j < n (c is
// overwritten). Every element is accumulated from 0 in ascending p with a
// float32 product rounded before a float32 add (no fused multiply-add), so
// the result is bit-identical whichever path computes it: the AVX-512
// kernel (gemm_amd64.s, 4 rows x 64 columns per call, separate VMULPS and
// VADDPS) or the portable loop below. That is what keeps the V1 features,
// and so the cache, the same on every host.
func gemm(c, a, bt []float32, m, n, k int) {
	if len(c) < m*n || len(a) < m*k || len(bt) < k*n {
		panic("dataset: gemm slices too short")
	}
	if useKernel && k > 0 {
		mb, nb := m/4*4, n/64*64
		for j := 0; j < nb; j += 64 {
			for i := 0; i < mb; i += 4 {
				kern4x64(&c[i*n+j], n, &a[i*k], k, &bt[j], n, k)
			}
		}
		// Rows below mb (all columns) and columns from nb (rows above mb).
		gemmGo(c, a, bt, n, k, mb, m, 0, n)
		gemmGo(c, a, bt, n, k, 0, mb, nb, n)
		return
	}
	gemmGo(c, a, bt, n, k, 0, m, 0, n)
}

// gemmGo computes the block rows [i0, i1) x columns [j0, j1) of gemm.
func gemmGo(c, a, bt []float32, n, k, i0, i1, j0, j1 int) {
	if i0 >= i1 || j0 >= j1 {
		return
	}
	for i := i0; i < i1; i++ {
		ci := c[i*n : i*n+n]
		for j := j0; j < j1; j++ {
			ci[j] = 0
		}
		ai := a[i*k : i*k+k]
		for p, x := range ai {
			row := bt[p*n : p*n+n]
			for j := j0; j < j1; j++ {
				// The conversion forbids fusing into an FMA.
				ci[j] += float32(x * row[j])
			}
		}
	}
}

// reluAdd adds max(z[j] - t[j], 0) to acc[j] for j < len(acc), in float32.
// The AVX-512 path (VSUBPS, VMAXPS against +0, VADDPS) and the Go loop give
// the same bits: where the difference is not positive, the kernel adds +0
// to a non-negative sum, which leaves it unchanged.
func reluAdd(acc, z, t []float32) {
	n := len(acc)
	if len(z) < n || len(t) < n {
		panic("dataset: reluAdd slices too short")
	}
	j := 0
	if useKernel && n >= 16 {
		j = n / 16 * 16
		reluAdd16(&acc[0], &z[0], &t[0], j/16)
	}
	for ; j < n; j++ {
		if d := z[j] - t[j]; d > 0 {
			acc[j] += d
		}
	}
}
