package backprop

import (
	"encoding/json"
	"fmt"
	"os"
	"testing"
)

func TestGenPresetGolden(t *testing.T) {
	out := os.Getenv("GEN_GOLDEN")
	if out == "" {
		t.Skip()
	}
	names := []string{"bp_er_1000", "bp_er_200", "bp_er_5000", "static_bp_none", "mlp_bp_w",
		"bp_derpp_a0.03_b1.0_w512_ce", "bp_derpp_K200", "bp_derpp_K5000",
		"g20_d3_bp_er", "g20_d4_bp_er", "g20_d5_bp_er", "bp_erace_1000", "bp_agem_1000_w512",
		"bpk_er_lr3e5", "bpk_iso_lr1e4", "bpk_er_rot_lr1e4", "bpk_iso_rot_lr1e4"}
	f, _ := os.Create(out)
	defer f.Close()
	for _, n := range names {
		c, ok := Preset(n)
		if !ok {
			t.Fatal(n)
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(f, "bp %s %s\n", n, b)
	}
}
