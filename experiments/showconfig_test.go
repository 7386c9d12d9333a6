package experiments

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"repro/pipeline"
)

func TestExperimentConfig(t *testing.T) {
	t.Parallel()
	m, err := loadMatrix(matrixConfig)
	if err != nil {
		t.Fatal(err)
	}
	got, err := m.ExperimentConfig("paper", "full")
	if err != nil {
		t.Fatal(err)
	}
	// full: the default system's preset plus eta = 0.2 of its local table.
	want := []FieldDiff{{Field: "eta", Value: "0.2", Default: "0.02"}}
	if got.Preset != "g16_sgd_refr_s10_w512" || len(got.Protocols) != 3 {
		t.Fatalf("ExperimentConfig(full) = %+v", got)
	}
	for _, p := range got.Protocols {
		if !reflect.DeepEqual(p.Fields, want) {
			t.Errorf("full, %s: %+v, want %+v", p.Protocol, p.Fields, want)
		}
	}
	mid, err := m.ExperimentConfig("paper", "middle")
	if err != nil || len(mid.Protocols) != 2 || len(mid.Protocols[0].Fields)+len(mid.Protocols[1].Fields) != 0 {
		t.Errorf("middle (the default system) = %+v, %v; want no field", mid, err)
	}
	if _, err := m.ExperimentConfig("paper", "nope"); err == nil || !strings.Contains(err.Error(), `no experiment "nope"`) {
		t.Errorf("unknown experiment: %v", err)
	}
}

// TestExperimentConfigPreset: a preset's layers and its values against the
// default system, on the repository's pipeline.toml.
func TestExperimentConfigPreset(t *testing.T) {
	t.Parallel()
	m := repoMatrix(t)
	got, err := m.ExperimentConfig("paper", "mirror")
	if err != nil {
		t.Fatal(err)
	}
	text := fmt.Sprint(got.Protocols[0].Fields)
	for _, f := range []string{`{mask "mirror" "refractory"}`, `{opt "adam" "sgd"}`, `{eta 0.001 0.02}`} {
		if !strings.Contains(text, f) {
			t.Errorf("mirror: %s, want %s among the fields", text, f)
		}
	}
	if strings.Join(got.Layers, ",") != "g17_mirror_s10" {
		t.Errorf("mirror layers %v", got.Layers)
	}
}

// repoMatrix loads the repository's pipeline.toml.
func repoMatrix(t *testing.T) *Matrix {
	t.Helper()
	cfg, err := pipeline.LoadConfig("../pipeline.toml")
	if err != nil {
		t.Fatal(err)
	}
	m, err := Load(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return m
}
