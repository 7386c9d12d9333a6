package core

import "repro/internal/kernels"

// lanes is how many samples drive1Rows carries per row (kernels.DriveRows).
const lanes = kernels.Lanes

// useRowForward switches W^1's forward product to the row-order weights
// (drive1Rows) and drops its column copy when that multiplies fewer
// weights: the column-order product (kernels.AddTilesBatch) costs about one
// multiply-add per input entry off the offset and per row, the row-order
// one one per stored synapse and per lane of a 16-sample block, whether
// the lane's entry is zero or not. On MNIST, a quarter of x - o is off the
// offset against 30% of W^1 stored, so the column copy stays; dense CIFAR
// inputs read every column, more than three times the stored synapses.
// density is the fraction of the training inputs' entries off their
// column's offset, batch the smallest batch a pass runs. Both products
// give the same drives to the bit (kernels.DriveRows), so the choice is speed
// alone. The count leaves out what tips MNIST either way: the column copy
// the row steps no longer write, against c = W^1 o, which the row order
// computes in a pass of its own (forced on MNIST, a headline run took
// 0.91-1.01x the time).
func (nt *net) useRowForward(density float64, batch int) {
	ly := nt.lay[1]
	if ly.col16 == nil || ly.fb != nil || !ly.tiled || batch < 1 {
		return
	}
	blocks := (batch + lanes - 1) / lanes
	rows := float64(len(ly.w)) * float64(blocks*lanes)
	cols := density * float64(ly.nIn) * float64(ly.nOut) * float64(batch)
	if rows >= cols {
		return
	}
	nt.rowFwd = true
	ly.dropCopy()
	nt.staleC = true
}

// drive1Rows is drive1 from the row-order weights (useRowForward): per
// block of up to 16 samples, the block's x - o by column (xT, every
// entry; with o = +0 and a whole block, a transpose of x), the drives
// b + c per row and lane, then kernels.DriveRows adds W^1 (x - o) in ascending
// columns, as kernels.AddTiles adds the entries; the zero entries add exact zeros,
// which leave the sums as they are (a sum that starts from b + c is never
// -0: c is a sum from +0). The drives go back to sample order by
// transposes of 8 rows.
func (nt *net) drive1Rows(p *pass) {
	ly := nt.lay[1]
	n1, d := ly.nOut, ly.nIn
	if nt.staleC {
		nt.refreshC(0, n1)
		nt.staleC = false
	}
	if len(p.xT) < d*lanes {
		p.xT = make([]float32, d*lanes)
	}
	if len(p.accT) < n1*lanes {
		p.accT = make([]float32, n1*lanes)
	}
	xT, acc := p.xT[:d*lanes], p.accT[:n1*lanes]
	for b0 := 0; b0 < p.n; b0 += lanes {
		nb := min(lanes, p.n-b0)
		if nb < lanes {
			clear(xT) // the lanes past the batch stay 0
		}
		x := p.x[b0*d : (b0+nb)*d]
		if nt.offPlusZero && nb == lanes {
			// x - o is x: the block's columns are its transpose, moves
			// only (CIFAR).
			kernels.TransposeInto(xT, x, lanes, d)
		} else {
			nt.offsetColumns(xT, x, nb)
		}
		for i := range n1 {
			s := ly.bias[i] + nt.c[i]
			a := acc[i*lanes : (i+1)*lanes]
			for b := range a {
				a[b] = s
			}
		}
		kernels.DriveRows(acc, ly.w, ly.col16, ly.rowPtr, xT)
		z := p.z1[b0*n1 : (b0+nb)*n1]
		if nb == lanes {
			// The drives' rows of 16 lanes, transposed to sample order.
			kernels.TransposeInto(z, acc, n1, lanes)
			continue
		}
		for b := range nb {
			zb := z[b*n1 : (b+1)*n1]
			for i := range zb {
				zb[i] = acc[i*lanes+b]
			}
		}
	}
}

// offsetColumns writes x - o of the nb samples of x (d entries each) by
// column into xT, 16 lanes a column: every entry (those off the offset are
// the sparse entries' values, the others exact zeros), 16 columns at a
// time, so that their 1 KB of xT stays in L1 while each sample's 16
// entries are read in a row (the samples are 4 KB apart on CIFAR, all in
// one L1 set: a column at a time, 16 strided reads, was no faster than the
// entries one by one).
func (nt *net) offsetColumns(xT, x []float32, nb int) {
	d := len(nt.off)
	for j0 := 0; j0 < d; j0 += lanes {
		j1 := min(j0+lanes, d)
		o := nt.off[j0:j1]
		dst := xT[j0*lanes : j1*lanes]
		for b := range nb {
			src := x[b*d+j0 : b*d+j1]
			for k, v := range src[:len(o)] {
				dst[k*lanes+b] = v - o[k]
			}
		}
	}
}

// refreshCRows is refreshC from the row-order weights: c_i sums o_j W_ij
// over row i's stored synapses in ascending j, from +0; the terms with
// o_j = 0 add exact zeros, so c equals the column-order sum over o's
// non-zero entries.
func (nt *net) refreshCRows(s0, s1 int) {
	c := nt.c[s0:s1]
	if len(nt.offIdx) == 0 {
		clear(c) // o = 0
		return
	}
	ly := nt.lay[1]
	kernels.DotRows(c, ly.w, ly.col16, ly.rowPtr[s0:s1+1], nt.off)
}
