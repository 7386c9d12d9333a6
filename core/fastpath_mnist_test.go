package core

import "testing"

// TestFastPathMatchesGeneralMNIST runs the fast and the general update
// paths side by side at the paper's size on real MNIST (whose input offset
// is non-zero, unlike the tiny test data's) for masked Adam, confined and
// leaking, and requires identical bits after every waking step.
func TestFastPathMatchesGeneralMNIST(t *testing.T) {
	t.Parallel()
	ds := loadMNISTTrain(t)
	for _, leak := range []bool{false, true} {
		cfg := DefaultLocalConfig()
		cfg.Opt, cfg.Eta, cfg.LeakMoments = "adam", 1e-3, leak
		tasks := []Task{{0, 1}, {2, 3}, {4, 5}, {6, 7}, {8, 9}}
		mk := func() *localRun {
			r, err := newLocalRun(&cfg, ds, ds.Subset([]int{0, 1, 2}), tasks, 0, Hooks{})
			if err != nil {
				t.Fatal(err)
			}
			return r
		}
		a, b := mk(), mk()
		b.nt.generalOnly = true
		for step := range 60 {
			stepN(a, 1)
			stepN(b, 1)
			for l := 1; l <= a.nt.L; l++ {
				la, lb := a.nt.lay[l], b.nt.lay[l]
				for name, pr := range map[string][2][]float32{"w": {la.w, lb.w}, "fb": {la.fb, lb.fb}, "m1": {la.m1, lb.m1}, "m2": {la.m2, lb.m2}, "bias": {la.bias, lb.bias}, "bm1": {la.bm1, lb.bm1}, "wT": {la.wT, lb.wT}} {
					if !bitsEqual(pr[0], pr[1]) {
						for s := range pr[0] {
							if pr[0][s] != pr[1][s] {
								t.Fatalf("leak=%v step %d layer %d %s[%d]: fast %v general %v", leak, step, l, name, s, pr[0][s], pr[1][s])
							}
						}
						t.Fatalf("leak=%v step %d layer %d %s: signed zeros differ", leak, step, l, name)
					}
				}
			}
		}
	}
}
