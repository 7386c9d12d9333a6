//go:build !purego

package kernels

//go:noescape
func gramTilesAVX2(gram *float64, x *float64, n, ld, nb, m int)

// gramUpperImpl adds addGramDense's products to the gram's upper triangle:
// rows four at a time, in tiles of 4 x 8 entries held in registers across
// the samples (gramTilesAVX2, m tiles from the diagonal on), the columns
// past the last whole Tile and the last n mod 4 rows entry by entry. Each
// entry adds its products in sample order, multiply and add separate, as
// gramUpperGo does, so both give the same bits. A Tile that starts on the
// diagonal also adds to a few entries below it, which no one reads.
func gramUpperImpl(gram []float64, n int, x []float64, ld, nb int) {
	if !useAVX2 || nb == 0 {
		gramUpperGo(gram, n, x, ld)
		return
	}
	x = x[:nb*ld]
	i := 0
	for ; i+4 <= n; i += 4 {
		m := (n - i) / 8
		if m > 0 {
			gramTilesAVX2(&gram[i*n+i], &x[i], n, ld, nb, m)
		}
		for r := i; r < i+4; r++ {
			for j := max(i+8*m, r); j < n; j++ {
				addGramEntry(gram, n, x, ld, r, j)
			}
		}
	}
	for ; i < n; i++ {
		for j := i; j < n; j++ {
			addGramEntry(gram, n, x, ld, i, j)
		}
	}
}
