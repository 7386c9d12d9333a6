package dataset

import (
	"math"
	"slices"
)

// Split seeds of the paper's two held-out tenths, and the held-out fraction.
const (
	SplitSeed1  = 1234
	SplitSeed2  = 4321
	HeldoutFrac = 0.1
)

// RoundHalfEven rounds x to the nearest integer, ties to even, like
// Python 3's round: 626.5 -> 626, 595.5 -> 596.
func RoundHalfEven(x float64) int { return int(math.RoundToEven(x)) }

// StratifiedHoldout is the reference's _val_split, draw for draw: one
// numpy RandomState(seed) generator (MT19937, see mt19937.go); for each
// class c in ascending order, the indices i with labels[i] == c (ascending,
// as np.where gives them) are shuffled in place by RandomState.shuffle, the
// generator continuing across classes, and the first RoundHalfEven(frac *
// n_c) of them are held out. Both results are grouped by class ascending,
// in shuffled order within a class; together they hold every index once.
// So the held-out tenth is the paper's own. seed must lie in [0, 2^32), as
// numpy requires.
//
// On MNIST with frac 0.1 the held-out counts per class are 592 674 596 613
// 584 542 592 626 585 595 (5,999), whatever the seed.
func StratifiedHoldout(labels []int32, frac float64, seed int64) (heldout, rest []int) {
	if seed < 0 || seed > math.MaxUint32 {
		panic("dataset: split seed outside [0, 2^32)")
	}
	byClass := map[int32][]int{}
	for i, c := range labels {
		byClass[c] = append(byClass[c], i)
	}
	classes := make([]int32, 0, len(byClass))
	for c := range byClass {
		classes = append(classes, c)
	}
	slices.Sort(classes)
	r := newMT19937(uint32(seed))
	heldout = make([]int, 0, RoundHalfEven(frac*float64(len(labels)))+len(classes))
	rest = make([]int, 0, len(labels))
	for _, c := range classes {
		idx := byClass[c]
		r.shuffle(idx)
		h := RoundHalfEven(frac * float64(len(idx)))
		heldout = append(heldout, idx[:h]...)
		rest = append(rest, idx[h:]...)
	}
	return heldout, rest
}

// Overlap returns |a ∩ b| for two sets of distinct indices.
func Overlap(a, b []int) int {
	in := make(map[int]struct{}, len(a))
	for _, i := range a {
		in[i] = struct{}{}
	}
	n := 0
	for _, i := range b {
		if _, ok := in[i]; ok {
			n++
		}
	}
	return n
}
