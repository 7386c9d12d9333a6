package core

import "fmt"

// The differential check against the authors' code (tools/refcheck) loads a
// buffer their run wrote into a Reservoir and reads it back: SetContents and
// Contents are its narrow hooks (core/inject.go fills the local learner's
// buffer directly; core/backprop's check goes through these).

// SetContents replaces the buffer's items with the rows of x (row-major,
// len(y) rows of the buffer's width), their labels y and logits z (nil when
// the buffer has no logits slot), and sets the count of samples offered so
// far to seen. It returns an error if the items do not fit the buffer or
// seen is smaller than the number of items.
func (r *Reservoir) SetContents(x []float32, y []int32, z []float32, seen int) error {
	n := len(y)
	switch {
	case n > r.capacity:
		return fmt.Errorf("core: Reservoir.SetContents: %d items, capacity %d", n, r.capacity)
	case len(x) != n*r.dim:
		return fmt.Errorf("core: Reservoir.SetContents: %d values for %d items of width %d", len(x), n, r.dim)
	case len(z) != n*r.logits:
		return fmt.Errorf("core: Reservoir.SetContents: %d logits for %d items of %d", len(z), n, r.logits)
	case seen < n:
		return fmt.Errorf("core: Reservoir.SetContents: %d samples offered, fewer than the %d items", seen, n)
	}
	r.n, r.seen = n, seen
	copy(r.x, x)
	copy(r.y, y)
	copy(r.z, z)
	return nil
}

// Contents returns copies of the buffer's items (row-major), labels and
// logits (row-major, empty without a logits slot) and the count of samples
// offered so far.
func (r *Reservoir) Contents() (x []float32, y []int32, z []float32, seen int) {
	return append([]float32(nil), r.x[:r.n*r.dim]...), append([]int32(nil), r.y[:r.n]...),
		append([]float32(nil), r.z[:r.n*r.logits]...), r.seen
}
