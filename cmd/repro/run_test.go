package main

import (
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestDamagedOutputThatCannotMoveAside re-runs the review's probe: a
// damaged blob the store cannot move aside (a file named corrupt at the
// store's root, a read-only blob folder) fails its cell with the reason
// and a remedy, exit 1, never "computed by another process"; once the
// remedy is applied the same command recomputes it.
func TestDamagedOutputThatCannotMoveAside(t *testing.T) {
	t.Parallel()
	type trigger struct {
		name          string
		apply, remedy func(t *testing.T, store, blob string)
		advice        string
	}
	triggers := []trigger{
		{"a file named corrupt",
			func(t *testing.T, store, blob string) {
				os.RemoveAll(filepath.Join(store, "corrupt"))
				os.WriteFile(filepath.Join(store, "corrupt"), []byte("x"), 0o644)
			},
			func(t *testing.T, store, blob string) { os.Remove(filepath.Join(store, "corrupt")) },
			"corrupt away (the store puts damaged blobs in a folder of that name), then run again"},
	}
	if os.Getuid() != 0 { // root writes into a read-only folder
		triggers = append(triggers, trigger{"a read-only blob folder",
			func(t *testing.T, store, blob string) { os.Chmod(filepath.Dir(blob), 0o555) },
			func(t *testing.T, store, blob string) { os.Chmod(filepath.Dir(blob), 0o755) },
			"writable by this user, then run again"})
	}
	for _, tc := range triggers {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir := workdir(t, "cells = 6\nwidth = 3\nfan_in = 1\nwork = 10\n")
			mustRepro(t, dir, "run", "-q")
			want := planState(t, dir)
			id := slices.Sorted(maps.Keys(want))[0]
			_, blob := outputBlob(t, dir, id)
			b, _ := os.ReadFile(blob)
			b[len(b)/2] ^= 1
			os.Chmod(blob, 0o644)
			os.WriteFile(blob, b, 0o644)
			store := filepath.Join(dir, "store")
			tc.apply(t, store, blob)
			t.Cleanup(func() { tc.remedy(t, store, blob) })

			stdout, stderr, code := reproSplit(t, dir, "run", "-q")
			all := stdout + stderr
			if code != 1 || strings.Contains(all, "computed by another process") || !strings.Contains(all, "1 failed") {
				t.Fatalf("run over a damaged blob that cannot move: exit %d\nstdout %s\nstderr %s", code, stdout, stderr)
			}
			if !strings.Contains(all, id) || !strings.Contains(all, "stays in place, so it cannot be recomputed") || !strings.Contains(all, tc.advice) {
				t.Errorf("the failure does not name the cell, the cause and the remedy:\n%s", all)
			}
			// verify says the same remedy, and no longer offers a run
			// that cannot help.
			vout, _ := repro(t, dir, "verify")
			if !strings.Contains(vout, "could not move it aside") || !strings.Contains(vout, tc.advice) || !strings.Contains(vout, "once it is moved aside, repro run --only") {
				t.Errorf("verify:\n%s", vout)
			}

			tc.remedy(t, store, blob)
			if out := mustRepro(t, dir, "run", "-q"); !strings.Contains(out, "ran 1 cell (1 over a damaged stored output)") {
				t.Errorf("run after the remedy:\n%s", out)
			}
			got := planState(t, dir)
			for id, w := range want {
				if got[id] != w {
					t.Errorf("%s: %s after the repair, %s before", id, got[id], w)
				}
			}
		})
	}
}
