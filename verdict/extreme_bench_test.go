package verdict

import "testing"

// BenchmarkExtremeStat is one range end's judgement (three rows of three
// runs, the bootstrap's banks cached): about a millisecond.
func BenchmarkExtremeStat(b *testing.B) {
	rows := []Sample{Ours(1.2, 1.0, 3), Ours(1.8, 1.1, 3), Ours(1.5, 1.0, 3)}
	for b.Loop() {
		ExtremeStat(rows, 1.9, Highest, false, 3, 0.05, Points)
	}
}
