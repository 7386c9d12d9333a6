package pipeline

import (
	"strings"
	"testing"
)

type subParams struct {
	Eta    float64   `toml:"eta"`
	Hidden []int     `toml:"hidden"`
	Mask   string    `toml:"mask"`
	Gains  []float64 `toml:"gains"`
}

type testParams struct {
	Seed  int64      `toml:"seed"`
	On    bool       `toml:"on"`
	Local *subParams `toml:"local"`
	BP    *subParams `toml:"bp"`
}

func TestEncodeParamsCanonical(t *testing.T) {
	t.Parallel()
	p := &testParams{Seed: 3, On: true, Local: &subParams{Eta: 0.02, Hidden: []int{512, 256}, Mask: "refractory", Gains: []float64{1, 1e-7}}}
	ps, err := EncodeParams("train", p)
	if err != nil {
		t.Fatal(err)
	}
	got := ParamsText(ps)
	want := `train.local.eta 0.02
train.local.gains [1.0, 1e-07]
train.local.hidden [512, 256]
train.local.mask "refractory"
train.on true
train.seed 3
`
	if got != want {
		t.Fatalf("EncodeParams =\n%s\nwant\n%s", got, want)
	}
	// Round trip through the canonical text.
	back := &testParams{}
	parsed, err := ParseParamsText(got)
	if err != nil {
		t.Fatal(err)
	}
	if err := DecodeParams("train", parsed, back); err != nil {
		t.Fatal(err)
	}
	ps2, _ := EncodeParams("train", back)
	if ParamsText(ps2) != got {
		t.Fatalf("round trip changed params:\n%s", ParamsText(ps2))
	}
	// Unknown names are rejected.
	if err := DecodeParams("train", []Param{{"train.nope", "1"}}, &testParams{}); err == nil {
		t.Fatal("DecodeParams accepted an unknown param")
	}
}

func TestDiffParams(t *testing.T) {
	t.Parallel()
	old := []Param{{"train.eta", "0.02"}, {"train.gone", "1"}, {"train.same", "x"}}
	cur := []Param{{"train.eta", "0.01"}, {"train.new", "2"}, {"train.same", "x"}}
	got := DiffParams(old, cur)
	for _, want := range []string{"train.eta 0.02 -> 0.01", "train.new (new) 2", "train.gone (removed) 1"} {
		if !strings.Contains(got, want) {
			t.Errorf("DiffParams = %q, missing %q", got, want)
		}
	}
}
