package cellid

import (
	"testing"
)

// TestTrainIDs pins the train cell IDs: they name the store's refs and
// every sidecar's cells, so their format never changes.
func TestTrainIDs(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		tr         Train
		id, prefix string
	}{
		{Train{"full", "sequential", "split1234", 0}, "train/full/sequential/split1234/seed0", "train/full/sequential/split1234"},
		{Train{"bp-er", "single_pass", "test", 5}, "train/bp-er/single_pass/test/seed5", "train/bp-er/single_pass/test"},
		{Train{"x.y+z", "static", "split4321", 12}, "train/x.y+z/static/split4321/seed12", "train/x.y+z/static/split4321"},
	} {
		if got := c.tr.String(); got != c.id {
			t.Errorf("%+v.String() = %q, want %q", c.tr, got, c.id)
		}
		if got := c.tr.Prefix(); got != c.prefix {
			t.Errorf("%+v.Prefix() = %q, want %q", c.tr, got, c.prefix)
		}
		if got := WithSeed(c.tr.Prefix(), c.tr.Seed); got != c.id {
			t.Errorf("WithSeed(%q, %d) = %q, want %q", c.tr.Prefix(), c.tr.Seed, got, c.id)
		}
		if got, ok := ParseTrain(c.id); !ok || got != c.tr {
			t.Errorf("ParseTrain(%q) = %+v, %v; want %+v", c.id, got, ok, c.tr)
		}
	}
	for _, bad := range []string{"train/full/sequential/split1234", "aggregate/t", "train/a/b/c/seedx", "train/a/b/c/seed01", "x/a/b/c/seed0"} {
		if got, ok := ParseTrain(bad); ok {
			t.Errorf("ParseTrain(%q) = %+v, want false", bad, got)
		}
	}
	if got := (Train{"full", "sequential", EvalOf(1234), 0}).String(); got != "train/full/sequential/split1234/seed0" {
		t.Errorf("ID %q", got)
	}
	for _, c := range []struct {
		s    string
		seed int64
		ok   bool
	}{{"test", 0, true}, {"split1234", 1234, true}, {"split0", 0, false}, {"heldout", 0, false}, {"split01", 0, false}} {
		seed, err := ParseEval(c.s)
		if (err == nil) != c.ok || (c.ok && (seed != c.seed || EvalOf(seed) != c.s)) {
			t.Errorf("ParseEval(%q) = %d, %v", c.s, seed, err)
		}
	}
}

func TestInputRoundTrip(t *testing.T) {
	t.Parallel()
	for _, in := range []Input{{0, 0, 0}, {12, 2, 5}, {99, 9, 9}, {3, 14, 11}} {
		got, err := ParseInput(in.String())
		if err != nil || got != in {
			t.Errorf("ParseInput(%q) = %+v, %v", in.String(), got, err)
		}
	}
	if (Input{1, 2, 3}).String() != "r01c2s3" {
		t.Error("input name format changed")
	}
	for _, bad := range []string{"r1c2s3", "data", "r01c2s3x"} {
		if _, err := ParseInput(bad); err == nil {
			t.Errorf("ParseInput(%q) accepted", bad)
		}
	}
}

func TestDataIDs(t *testing.T) {
	t.Parallel()
	got := []string{Download("mnist"), Prepare("cifar10"), V1("cifar100"), Split("mnist", 4321),
		Streams("mnist", "static", 1234), Streams("cifar10", "sequential", 0), Aggregate("val"), Render("val")}
	want := []string{"download/mnist", "prepare/cifar10", "v1/cifar100", "split/mnist-4321",
		"streams/mnist-static-split1234", "streams/cifar10-sequential-test", "aggregate/val", "render/val"}
	for i := range got {
		if got[i] != want[i] {
			t.Errorf("%q, want %q", got[i], want[i])
		}
	}
	for _, id := range []string{Aggregate("val"), Render("val")} {
		if tb, ok := TableOf(id); !ok || tb != "val" {
			t.Errorf("TableOf(%q) = %q, %v", id, tb, ok)
		}
	}
	for _, id := range []string{"train/x/y/test/seed0", "render/", Figure("val"), Reproduction} {
		if tb, ok := TableOf(id); ok {
			t.Errorf("TableOf(%q) = %q, true", id, tb)
		}
	}
	if f, ok := FigureOf(Figure("acc")); !ok || f != "acc" {
		t.Errorf("FigureOf(%q) = %q, %v", Figure("acc"), f, ok)
	}
}

// TestSpikeEnergyIDs pins the spike and energy cell IDs beside their
// train cell's.
func TestSpikeEnergyIDs(t *testing.T) {
	t.Parallel()
	tr := Train{"full", "static", "split1234", 3}
	if got := (Spike{tr, 16}).String(); got != "spike/full/static/split1234/seed3/t16" {
		t.Errorf("spike ID %q", got)
	}
	if got := Energy(tr); got != "energy/full/static/split1234/seed3" {
		t.Errorf("energy ID %q", got)
	}
	if got := EnergyPrefix(tr.Prefix()); got != "energy/full/static/split1234" {
		t.Errorf("energy prefix %q", got)
	}
}

// TestFigureInputNames pins the figure cells' input names: they are part
// of the figure cells' input lists (and so of their keys), so a variant's
// gets its own and the others keep theirs.
func TestFigureInputNames(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   FigureInput
		want string
	}{
		{FigureInput{Panel: 0, Series: 1, Point: 2, Role: 'y', Seed: 3}, "p0s1i2y3"},
		{FigureInput{Panel: 1, Series: 0, Point: 4, Role: 'b', Seed: 0}, "p1s0i4b0"},
		{FigureInput{Panel: 0, Series: -1, Point: 2, Role: 'r', Seed: 5}, "p0l2r5"},
		{FigureInput{Panel: 0, Series: 3, Point: 1, Variant: 2, Role: 'y', Seed: 1}, "p0s3i1v2y1"},
		{FigureInput{Panel: 0, Series: 1, Point: 2, Variant: 1, Role: 'y', Seed: 3}, "p0s1i2v1y3"},
	} {
		if got := c.in.String(); got != c.want {
			t.Errorf("%+v.String() = %q, want %q", c.in, got, c.want)
		}
	}
}
