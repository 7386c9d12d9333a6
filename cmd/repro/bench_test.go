package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// benchmarkEngine measures `repro plan` and a no-op `repro run` over a
// synthetic pipeline of n cells that is fully cached.
func benchmarkEngine(b *testing.B, n int) {
	dir := b.TempDir()
	cfg := fmt.Sprintf("[settings]\nstore = \"store\"\n[synthetic]\ncells = %d\nwidth = 500\nfan_in = 3\n", n)
	os.WriteFile(filepath.Join(dir, "pipeline.toml"), []byte(cfg), 0o644)
	cwd, _ := os.Getwd()
	os.Chdir(dir)
	defer os.Chdir(cwd)
	// stdout alone: the test binary is not stamped (go test does not run
	// make build), and stderr says so before anything else.
	run := func(args ...string) string {
		var out, errOut bytes.Buffer
		if code := runMain(context.Background(), args, &out, &errOut, os.Getenv); code != 0 {
			b.Fatalf("repro %v: exit %d\n%s%s", args, code, out.String(), errOut.String())
		}
		return out.String()
	}
	run("run", "-q", "-j", "2")
	b.Run("plan", func(b *testing.B) {
		for b.Loop() {
			if out := run("plan"); !strings.Contains(out, "0 to run") {
				b.Fatal(out)
			}
		}
		b.ReportMetric(float64(n), "cells/op")
	})
	b.Run("noop-run", func(b *testing.B) {
		for b.Loop() {
			if out := run("run", "-q"); !strings.HasPrefix(out, "nothing to do") {
				b.Fatal(out)
			}
		}
		b.ReportMetric(float64(n), "cells/op")
	})
}

func BenchmarkEngine(b *testing.B) {
	for _, n := range []int{500, 5000} {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchmarkEngine(b, n) })
	}
}
