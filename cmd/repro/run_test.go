package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
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
	triggers = append(triggers, trigger{"corrupt a dangling symlink",
		func(t *testing.T, store, blob string) {
			os.RemoveAll(filepath.Join(store, "corrupt"))
			os.Symlink(filepath.Join(store, "nowhere"), filepath.Join(store, "corrupt"))
		},
		func(t *testing.T, store, blob string) { os.Remove(filepath.Join(store, "corrupt")) },
		"corrupt away (the store puts damaged blobs in a folder of that name), then run again"})
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

// TestSignalsStopARun: SIGINT, SIGTERM and SIGHUP each stop a run with
// exit 130, a summary of what finished, ran and is left, and no lock left
// in the store.
func TestSignalsStopARun(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			dir := workdir(t, "cells = 4\nsleep_ms = 5000\n")
			cmd := exec.Command(reproBin, "run", "-j", "2", "-q")
			cmd.Dir = dir
			var stdout, stderr bytes.Buffer
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			// Signalled once both workers hold a cell's lock.
			locks := filepath.Join(dir, "store", "locks")
			for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
				if ents, _ := os.ReadDir(locks); len(ents) == 2 {
					break
				}
				if time.Now().After(deadline) {
					cmd.Process.Kill()
					t.Fatalf("no two locks after 20 s; stderr %s", stderr.String())
				}
			}
			cmd.Process.Signal(sig)
			err := cmd.Wait()
			var ee *exec.ExitError
			if !errors.As(err, &ee) || ee.ExitCode() != 130 {
				t.Fatalf("run stopped by %v: %v\nstdout %s\nstderr %s", sig, err, stdout.String(), stderr.String())
			}
			if !regexp.MustCompile(`interrupted after \S+: 0 cells finished \(0 ran, 0 cached\), 2 running \(stopped\), 4 left, 0 failed; run again to resume`).MatchString(stdout.String()) {
				t.Errorf("no summary after %v:\nstdout %s\nstderr %s", sig, stdout.String(), stderr.String())
			}
			if ents, _ := os.ReadDir(locks); len(ents) != 0 {
				t.Errorf("%d lock(s) left after %v", len(ents), sig)
			}
		})
	}
}

// TestLockHolderSaidAndPIDReuse: a cell locked by a live process is
// waited on with the holder's PID and host said; a lock whose PID now
// belongs to another process (reused after a kill -9) is taken over at
// once.
func TestLockHolderSaidAndPIDReuse(t *testing.T) {
	t.Parallel()
	bootB, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Skip("no boot id: locks cannot tell PIDs apart")
	}
	host, _ := os.Hostname()
	for _, reused := range []bool{false, true} {
		t.Run(fmt.Sprintf("reused=%v", reused), func(t *testing.T) {
			t.Parallel()
			dir := workdir(t, "cells = 1\nwork = 10\n")
			mustRepro(t, dir, "plan") // makes the store
			key := strings.Fields(planState(t, dir)["synth/l0/c0"])[1]
			holder := exec.Command("sleep", "60")
			if err := holder.Start(); err != nil {
				t.Fatal(err)
			}
			defer holder.Process.Kill()
			stat, _ := os.ReadFile(fmt.Sprintf("/proc/%d/stat", holder.Process.Pid))
			f := strings.Fields(string(stat[bytes.LastIndexByte(stat, ')')+1:]))
			start := f[19]
			if reused {
				start = "1" // the holder's PID, but another process
			}
			lock, _ := json.Marshal(map[string]any{"pid": holder.Process.Pid, "host": host, "boot": string(bootB), "start": start})
			if err := os.WriteFile(filepath.Join(dir, "store", "locks", key+".lock"), lock, 0o644); err != nil {
				t.Fatal(err)
			}
			cmd := exec.Command(reproBin, "run", "-q")
			cmd.Dir = dir
			var stdout, stderr lockedBuffer // read while the run writes
			cmd.Stdout, cmd.Stderr = &stdout, &stderr
			cmd.Start()
			if !reused {
				want := fmt.Sprintf("waiting for synth/l0/c0: another process holds its lock (pid %d on %s)", holder.Process.Pid, host)
				for deadline := time.Now().Add(20 * time.Second); !strings.Contains(stderr.String(), want); time.Sleep(20 * time.Millisecond) {
					if time.Now().After(deadline) {
						cmd.Process.Kill()
						t.Fatalf("the run does not say it waits on the lock; stderr %s", stderr.String())
					}
				}
				holder.Process.Kill()
				holder.Wait()
			}
			done := make(chan error, 1)
			go func() { done <- cmd.Wait() }()
			select {
			case err := <-done:
				if err != nil || !strings.Contains(stdout.String(), "ran 1 cell") {
					t.Fatalf("run: %v\nstdout %s\nstderr %s", err, stdout.String(), stderr.String())
				}
			case <-time.After(30 * time.Second):
				cmd.Process.Kill()
				t.Fatalf("the run still waits 30 s on a lock whose holder is gone; stderr %s", stderr.String())
			}
			if reused && strings.Contains(stderr.String(), "waiting for") {
				t.Errorf("waited on a lock whose PID is another process: %s", stderr.String())
			}
		})
	}
}

// lockedBuffer is a bytes.Buffer a test may read while a command writes it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestOnlyMatchingNothingFails: a glob that selects no cell is a usage
// error naming it, not "nothing to do".
func TestOnlyMatchingNothingFails(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	out, errOut, code := reproSplit(t, dir, "run", "--only", "synth/l9")
	if code != 2 || !strings.Contains(errOut, `--only "synth/l9" matches no cell of profile default`) || strings.Contains(out, "nothing to do") {
		t.Fatalf("run --only synth/l9: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, errOut, code := reproSplit(t, dir, "verify", "--recompute", "nope/*"); code != 2 || !strings.Contains(errOut, "matches no cell") {
		t.Fatalf("verify --recompute nope/*: exit %d, stderr %q", code, errOut)
	}
	if out := mustRepro(t, dir, "run", "--only", "synth/l0/c1"); !strings.Contains(out, "ran 1 cell,") {
		t.Fatalf("run --only synth/l0/c1: %q", out)
	}
	// A second --only is refused, not silently preferred to the first.
	out, errOut, code = reproSplit(t, dir, "run", "--only", "synth/l0/c1", "--only", "synth/l0/c2")
	if code != 2 || !strings.Contains(errOut, `given twice ("synth/l0/c1", then "synth/l0/c2")`) || strings.Contains(out, "ran ") {
		t.Fatalf("run --only twice: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}

// TestOnlyEmptyIsAnError: --only ” (an unset shell variable) is a usage
// error, not the whole profile; nothing is stored.
func TestOnlyEmptyIsAnError(t *testing.T) {
	t.Parallel()
	dir := workdir(t, tinyDAG)
	out, errOut, code := reproSplit(t, dir, "run", "--only", "")
	if code != 2 || !strings.Contains(errOut, "empty glob (an unset shell variable?)") || strings.Contains(out, "ran ") {
		t.Fatalf("run --only '': exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if _, errOut, code := reproSplit(t, dir, "verify", "--recompute="); code != 2 || !strings.Contains(errOut, "empty glob") {
		t.Fatalf("verify --recompute='': exit %d, stderr %q", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "store")); !os.IsNotExist(err) {
		t.Fatalf("a store was made: %v", err)
	}
}
