package core

// Reservoir is the episodic buffer of the reference (`Buffer`, run_seq.py
// 1249-1309): a uniform sample of capacity K over every sample ever offered,
// kept by Vitter's Algorithm R, with uniform sampling with replacement.
//
// Each item is a copy of a (standardised) input row and its label, plus an
// optional row of stored logits (DER++): logits are written when a sample is
// accepted and are overwritten together with it.
//
// A Reservoir is not safe for concurrent use.
type Reservoir struct {
	capacity int
	dim      int
	logits   int
	n        int // items held
	seen     int // samples offered so far
	x        []float32
	y        []int32
	z        []float32
}

// NewReservoir returns an empty buffer of the given capacity for rows of dim
// features, with a logits slot of width logits per item (0 for none). It
// panics if an argument is negative.
func NewReservoir(capacity, dim, logits int) *Reservoir {
	if capacity < 0 || dim < 0 || logits < 0 {
		panic("core: NewReservoir with a negative size")
	}
	return &Reservoir{
		capacity: capacity, dim: dim, logits: logits,
		x: make([]float32, capacity*dim),
		y: make([]int32, capacity),
		z: make([]float32, capacity*logits),
	}
}

// Len is the number of items held, min(K, samples offered).
func (r *Reservoir) Len() int { return r.n }

// Offer presents one sample: seen is incremented; while the buffer is not
// full the sample is appended, otherwise j = rng.IntN(seen) is drawn and slot
// j is replaced when j < K. Once the buffer is full every offer costs exactly
// one draw; before that, none. z is the sample's logits row (nil when the
// buffer has no logits slot). A zero-capacity buffer ignores offers and draws
// nothing. Offer panics if len(x) or len(z) do not match the buffer.
func (r *Reservoir) Offer(x []float32, y int32, z []float32, rng *RNG) {
	if len(x) != r.dim || len(z) != r.logits {
		panic("core: Reservoir.Offer row width mismatch")
	}
	if r.capacity == 0 {
		return
	}
	r.seen++
	slot := -1
	if r.n < r.capacity {
		slot = r.n
		r.n++
	} else if j := rng.IntN(r.seen); j < r.capacity {
		slot = j
	}
	if slot < 0 {
		return
	}
	copy(r.x[slot*r.dim:(slot+1)*r.dim], x)
	r.y[slot] = y
	copy(r.z[slot*r.logits:(slot+1)*r.logits], z)
}

// OfferBatch offers the rows of a row-major batch (len(y) samples of the
// buffer's width) in batch order; z holds their logits row-major, or is nil
// when the buffer has no logits slot.
func (r *Reservoir) OfferBatch(x []float32, y []int32, z []float32, rng *RNG) {
	for i := range y {
		var zi []float32
		if r.logits > 0 {
			zi = z[i*r.logits : (i+1)*r.logits]
		}
		r.Offer(x[i*r.dim:(i+1)*r.dim], y[i], zi, rng)
	}
}

// Sample draws min(n, Len()) item indices uniformly with replacement (one
// rng.IntN(Len()) each, the reference's `randint(0, len, (min(n, len),))`),
// appending them to dst[:0].
func (r *Reservoir) Sample(dst []int, n int, rng *RNG) []int {
	dst = dst[:0]
	m := min(n, r.n)
	for range m {
		dst = append(dst, rng.IntN(r.n))
	}
	return dst
}

// Row returns item i's stored input row (shared, not a copy).
func (r *Reservoir) Row(i int) []float32 { return r.x[i*r.dim : (i+1)*r.dim] }

// Label returns item i's label.
func (r *Reservoir) Label(i int) int32 { return r.y[i] }

// Logits returns item i's stored logits (shared), empty without a slot.
func (r *Reservoir) Logits(i int) []float32 { return r.z[i*r.logits : (i+1)*r.logits] }
