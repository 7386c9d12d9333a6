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

// A field tagged omitzero is left out of the canonical text while zero, so
// adding such an option keeps every existing key, and is encoded once set.
func TestEncodeParamsOmitZero(t *testing.T) {
	t.Parallel()
	type withOption struct {
		Seed  int64   `toml:"seed"`
		Steps int     `toml:"steps,omitzero"`
		Noise float64 `toml:"noise,omitzero"`
		Mode  string  `toml:"mode,omitzero"`
	}
	type without struct {
		Seed int64 `toml:"seed"`
	}
	a, _ := EncodeParams("train", &withOption{Seed: 4})
	b, _ := EncodeParams("train", &without{Seed: 4})
	if ParamsText(a) != ParamsText(b) {
		t.Fatalf("zero omitzero fields changed the text:\n%s\nwant\n%s", ParamsText(a), ParamsText(b))
	}
	c, _ := EncodeParams("train", &withOption{Seed: 4, Steps: 5, Noise: 0.2, Mode: "x"})
	want := "train.mode \"x\"\ntrain.noise 0.2\ntrain.seed 4\ntrain.steps 5\n"
	if got := ParamsText(c); got != want {
		t.Fatalf("set omitzero fields:\n%s\nwant\n%s", got, want)
	}
	back := &withOption{}
	parsed, _ := ParseParamsText(want)
	if err := DecodeParams("train", parsed, back); err != nil || back.Steps != 5 || back.Mode != "x" {
		t.Fatalf("round trip: %+v, %v", back, err)
	}
}
