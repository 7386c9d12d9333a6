package core

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"testing"
)

func TestGenPresetGolden(t *testing.T) {
	out := os.Getenv("GEN_GOLDEN")
	if out == "" {
		t.Skip()
	}
	var names []string
	for _, m := range []map[string]func(*LocalConfig){localPresets, substratePresets, appendixPresets} {
		for n := range m {
			names = append(names, n)
		}
	}
	for n := range singlePass {
		names = append(names, n)
	}
	names = append(names, "g16_ctx_none_s10_w512", "g16_ctx_none_s10_w512_static")
	slices.Sort(names)
	f, _ := os.Create(out)
	defer f.Close()
	for _, n := range names {
		c, err := LocalPreset(n)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := json.Marshal(c)
		fmt.Fprintf(f, "local %s %s\n", n, b)
	}
}
