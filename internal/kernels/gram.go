package kernels

// GramUpper adds, for the nb rows of x (n values each, row b at x[b*ld:],
// ld >= n), the products x[b][i]*x[b][j] to gram[i*n+j] for j >= i (the
// upper triangle; a few entries below it may change too, which callers
// must not read), each entry's products in ascending b, multiply and add
// separate:
//
//	for b := range nb {
//		for i := range n {
//			for j := i; j < n; j++ {
//				gram[i*n+j] += float64(x[b*ld+i] * x[b*ld+j])
//			}
//		}
//	}
//
// The vector kernel keeps the same order per entry, so both give the
// same bits.
func GramUpper(gram []float64, n int, x []float64, ld, nb int) {
	gramUpperImpl(gram[:n*n], n, x, ld, nb)
}

// gramUpperGo adds the products of GramUpper to the upper triangle in
// tiles of 2 x 4 entries, which stay in registers across the samples.
func gramUpperGo(gram []float64, n int, x []float64, ld int) {
	i := 0
	for ; i+2 <= n; i += 2 {
		j := i
		for ; j+4 <= n; j += 4 {
			r0, r1 := gram[i*n+j:i*n+j+4], gram[(i+1)*n+j:(i+1)*n+j+4]
			a0, a1, a2, a3 := r0[0], r0[1], r0[2], r0[3]
			c0, c1, c2, c3 := r1[0], r1[1], r1[2], r1[3]
			for o := 0; o < len(x); o += ld {
				xr := x[o+j : o+j+4]
				u0, u1 := x[o+i], x[o+i+1]
				a0 += float64(u0 * xr[0])
				a1 += float64(u0 * xr[1])
				a2 += float64(u0 * xr[2])
				a3 += float64(u0 * xr[3])
				c0 += float64(u1 * xr[0])
				c1 += float64(u1 * xr[1])
				c2 += float64(u1 * xr[2])
				c3 += float64(u1 * xr[3])
			}
			r0[0], r0[1], r0[2], r0[3] = a0, a1, a2, a3
			r1[0], r1[1], r1[2], r1[3] = c0, c1, c2, c3
		}
		for ; j < n; j++ {
			addGramEntry(gram, n, x, ld, i, j)
			addGramEntry(gram, n, x, ld, i+1, j)
		}
	}
	for ; i < n; i++ {
		for j := i; j < n; j++ {
			addGramEntry(gram, n, x, ld, i, j)
		}
	}
}

// addGramEntry adds sum_b x[b][i]*x[b][j], b ascending, to gram[i][j]
// (row b of x at x[b*ld:]).
func addGramEntry(gram []float64, n int, x []float64, ld, i, j int) {
	a := gram[i*n+j]
	for o := 0; o < len(x); o += ld {
		a += float64(x[o+i] * x[o+j])
	}
	gram[i*n+j] = a
}
