package cellid

import (
	"testing"
)

func TestTrainRoundTrip(t *testing.T) {
	t.Parallel()
	for _, tr := range []Train{
		{"full", "sequential", "split1234", 0},
		{"bp-er", "single_pass", "test", 5},
		{"x.y+z", "static", "split4321", 12},
	} {
		id := tr.String()
		got, err := ParseTrain(id)
		if err != nil || got != tr {
			t.Errorf("ParseTrain(%q) = %+v, %v; want %+v", id, got, err, tr)
		}
	}
	if got := (Train{"full", "sequential", EvalOf(1234), 0}).String(); got != "train/full/sequential/split1234/seed0" {
		t.Errorf("ID %q", got)
	}
	for _, bad := range []string{"train/full/sequential/split1234", "train/full/sequential/heldout/seed0", "prepare/mnist", "train//s/test/seed0", "train/a/b/test/seedx", "train/a/b/split0/seed1"} {
		if _, err := ParseTrain(bad); err == nil {
			t.Errorf("ParseTrain(%q) accepted", bad)
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
	if tb, ok := TableOf("render/val"); !ok || tb != "val" {
		t.Error("TableOf(render/val)")
	}
	if _, ok := TableOf("train/x/y/test/seed0"); ok {
		t.Error("TableOf(train cell)")
	}
}

func FuzzParseTrain(f *testing.F) {
	f.Add("train/full/sequential/split1234/seed0")
	f.Add("train/a/b/test/seed-1")
	f.Fuzz(func(t *testing.T, id string) {
		tr, err := ParseTrain(id)
		if err == nil && tr.String() != id {
			t.Fatalf("ParseTrain(%q) = %+v, which prints as %q", id, tr, tr.String())
		}
	})
}

func TestSpikeEnergyRoundTrip(t *testing.T) {
	t.Parallel()
	tr := Train{"full", "static", "split1234", 3}
	s := Spike{tr, 16}
	if got := s.String(); got != "spike/full/static/split1234/seed3/t16" {
		t.Errorf("spike ID %q", got)
	}
	if got, err := ParseSpike(s.String()); err != nil || got != s {
		t.Errorf("ParseSpike(%q) = %+v, %v", s, got, err)
	}
	if got := Energy(tr); got != "energy/full/static/split1234/seed3" {
		t.Errorf("energy ID %q", got)
	}
	if got, err := ParseEnergy(Energy(tr)); err != nil || got != tr {
		t.Errorf("ParseEnergy(%q) = %+v, %v", Energy(tr), got, err)
	}
	for _, bad := range []string{"spike/full/static/split1234/seed3", "spike/full/static/split1234/seed3/t", "spike/full/static/split1234/seed3/t08", "train/full/static/split1234/seed3/t8"} {
		if _, err := ParseSpike(bad); err == nil {
			t.Errorf("ParseSpike(%q) accepted", bad)
		}
	}
	for _, bad := range []string{"energy/full/static/split1234", "train/full/static/split1234/seed3"} {
		if _, err := ParseEnergy(bad); err == nil {
			t.Errorf("ParseEnergy(%q) accepted", bad)
		}
	}
}

func TestFigureInputRoundTrip(t *testing.T) {
	t.Parallel()
	for _, in := range []FigureInput{
		{Panel: 0, Series: 1, Point: 2, Role: 'y', Seed: 3},
		{Panel: 1, Series: 0, Point: 4, Role: 'b', Seed: 0},
		{Panel: 0, Series: -1, Point: 2, Role: 'r', Seed: 5},
		{Panel: 0, Series: 3, Point: 1, Variant: 2, Role: 'y', Seed: 1},
	} {
		got, err := ParseFigureInput(in.String())
		if err != nil || got != in {
			t.Errorf("ParseFigureInput(%q) = %+v, %v; want %+v", in.String(), got, err, in)
		}
	}
	// The names are part of the figure cells' input lists (and so of their
	// keys): a variant's gets its own, the others keep theirs.
	if got := (FigureInput{Panel: 0, Series: 1, Point: 2, Role: 'y', Seed: 3}).String(); got != "p0s1i2y3" {
		t.Errorf("name %q", got)
	}
	if got := (FigureInput{Panel: 0, Series: 1, Point: 2, Variant: 1, Role: 'y', Seed: 3}).String(); got != "p0s1i2v1y3" {
		t.Errorf("variant name %q", got)
	}
	for _, bad := range []string{"p0s1i2z3", "p0s1i2v0y3", "p0s1i2v1x3", "p0l1y2", "r01c2s3"} {
		if _, err := ParseFigureInput(bad); err == nil {
			t.Errorf("ParseFigureInput(%q) accepted", bad)
		}
	}
}

func FuzzParseFigureInput(f *testing.F) {
	f.Add("p0s1i2y3")
	f.Add("p0s1i2v1y3")
	f.Add("p2l0r1")
	f.Fuzz(func(t *testing.T, s string) {
		in, err := ParseFigureInput(s)
		if err == nil && in.String() != s {
			t.Fatalf("ParseFigureInput(%q) = %+v, which prints as %q", s, in, in.String())
		}
	})
}
