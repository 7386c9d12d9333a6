package slurm

import "time"

// backoff is the poll interval: it starts at min and grows by half at each
// step up to max. A job whose state has just changed (submitted, adopted)
// resets it, so short cells are seen finishing quickly while long ones cost
// the controller one squeue every max.
type backoff struct {
	min, max, cur time.Duration
}

func newBackoff(min, max time.Duration) *backoff {
	if max < min {
		max = min
	}
	return &backoff{min: min, max: max, cur: min}
}

// next returns the interval to wait now and grows the following one.
func (b *backoff) next() time.Duration {
	d := b.cur
	b.cur += b.cur / 2
	if b.cur > b.max {
		b.cur = b.max
	}
	return d
}

// reset makes the next interval min again.
func (b *backoff) reset() { b.cur = b.min }
