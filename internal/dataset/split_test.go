package dataset

import (
	"slices"
	"sync"
	"testing"
)

func TestRoundHalfEven(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		x    float64
		want int
	}{{0.5, 0}, {1.5, 2}, {2.5, 2}, {626.5, 626}, {595.5, 596}, {592.3, 592}, {-0.5, 0}, {0.1 * 6265, 626}} {
		if got := RoundHalfEven(c.x); got != c.want {
			t.Errorf("RoundHalfEven(%v) = %d, want %d", c.x, got, c.want)
		}
	}
}

func TestStratifiedHoldoutSmall(t *testing.T) {
	t.Parallel()
	// 25 of class 2 (2.5 -> 2), 15 of class 0 (1.5 -> 2), 4 of class 7 (0.4 -> 0).
	var labels []int32
	for range 25 {
		labels = append(labels, 2)
	}
	for range 15 {
		labels = append(labels, 0)
	}
	for range 4 {
		labels = append(labels, 7)
	}
	held, rest := StratifiedHoldout(labels, 0.1, 1)
	if len(held) != 4 || len(rest) != 40 {
		t.Fatalf("held %d rest %d, want 4 and 40", len(held), len(rest))
	}
	// Grouped by class ascending: class 0 first.
	wantHeld := []int32{0, 0, 2, 2}
	for i, h := range held {
		if labels[h] != wantHeld[i] {
			t.Errorf("held[%d] has class %d, want %d", i, labels[h], wantHeld[i])
		}
	}
	all := append(append([]int(nil), held...), rest...)
	slices.Sort(all)
	for i, v := range all {
		if v != i {
			t.Fatalf("held ∪ rest is not a partition of [0, %d): position %d holds %d", len(labels), i, v)
		}
	}
	// Deterministic in the seed, different across seeds.
	h2, _ := StratifiedHoldout(labels, 0.1, 1)
	if !slices.Equal(held, h2) {
		t.Errorf("same seed gave %v then %v", held, h2)
	}
}

var (
	mnistOnce             sync.Once
	mnistTrain, mnistTest *Raw
	mnistErr              error
)

func loadMNIST(t testing.TB) (train, test *Raw) {
	t.Helper()
	dir := dataRoot(t)
	mnistOnce.Do(func() { mnistTrain, mnistTest, mnistErr = fetchDecode(dir, "mnist", DecodeMNISTFiles) })
	if mnistErr != nil {
		t.Fatal(mnistErr)
	}
	return mnistTrain, mnistTest
}

func TestStratifiedHoldoutMNIST(t *testing.T) {
	train, _ := loadMNIST(t)
	wantPer := []int{592, 674, 596, 613, 584, 542, 592, 626, 585, 595}
	sets := map[int64][]int{}
	for _, seed := range []int64{SplitSeed1, SplitSeed2} {
		held, rest := StratifiedHoldout(train.Labels, HeldoutFrac, seed)
		if len(held) != 5999 || len(rest) != 54001 {
			t.Errorf("seed %d: held %d, rest %d, want 5999 and 54001", seed, len(held), len(rest))
		}
		per := make([]int, 10)
		for _, i := range held {
			per[train.Labels[i]]++
		}
		if !slices.Equal(per, wantPer) {
			t.Errorf("seed %d: held-out per class %v, want %v", seed, per, wantPer)
		}
		sets[seed] = held
	}
	ov := Overlap(sets[SplitSeed1], sets[SplitSeed2])
	frac := float64(ov) / 5999
	t.Logf("held-out overlap of split seeds 1234 and 4321: %d of 5999 (%.2f%%)", ov, 100*frac)
	// Two independent 10%% draws share 10%% in expectation, s.d. about
	// 0.4 points at this size; 8-12%% is five s.d. either side.
	if frac < 0.08 || frac > 0.12 {
		t.Errorf("overlap %.4f, want about 0.1 (independent draws)", frac)
	}
}
