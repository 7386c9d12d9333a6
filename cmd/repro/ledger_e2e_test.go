package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLedgerFreshClone runs the two-row table on real MNIST, pushes the
// results ledger into the work tree, and then works in a copy of the work
// tree without the store, as a fresh clone: plan takes every cell from the
// ledger, check passes, why prints each seed's record; a changed row is
// called stale with its config change, and the run computes that row's
// train cells (and the data cells they read, whose outputs the ledger does
// not keep) and nothing else; verify recomputes a seeded sample.
func TestLedgerFreshClone(t *testing.T) {
	withLedger := strings.Replace(paperTestConfig, "default_profile = \"smoke\"\n", "default_profile = \"smoke\"\n[settings.remotes.ledger]\npath = \"paper/cells\"\nstages = [\"train\", \"aggregate\", \"render\", \"reproduction\"]\n", 1)
	dir, cfg := mnistProject(t, withLedger, map[string]string{"paper/published.toml": paperTestPublished})
	mustRepro(t, dir, "run", "-j", "2", "-q")
	if out := mustRepro(t, dir, "push", "--allow-dirty"); !strings.Contains(out, "pushed 14 cells of profile smoke: 14 new record(s), 11 new blobs") {
		t.Fatalf("push: %s", out)
	}

	clone := cloneWithout(t, dir)
	if out := mustRepro(t, clone, "plan"); !strings.Contains(out, "0 to run, 0 cached, 14 in remote ledger") {
		t.Fatalf("plan on a fresh clone: %s", out)
	}
	if out := mustRepro(t, clone, "check"); !strings.Contains(out, "paper/ is current: 1 table(s) match profile smoke") {
		t.Fatalf("check on a fresh clone: %s", out)
	}
	why := mustRepro(t, clone, "why", "t/a/sequential")
	for _, want := range []string{"seed 0: train/a/sequential/split1234/seed0", "seed 1: train/a/sequential/split1234/seed1", "key ", "stage train v", "data split/mnist-1234 heldout_idx sha256:", "train.bp.lr = 0.001"} {
		if !strings.Contains(why, want) {
			t.Errorf("why on a fresh clone lacks %q:\n%s", want, why)
		}
	}
	if out := mustRepro(t, clone, "why", "train/a/static/split1234/seed1"); !strings.Contains(out, "record   from remote ledger") || !strings.Contains(out, "cell download/mnist") {
		t.Errorf("why of a cell on a fresh clone:\n%s", out)
	}

	// Row b's learning rate changes: check calls its number stale, with the
	// change, and nothing else.
	os.WriteFile(filepath.Join(clone, "pipeline.toml"), []byte(strings.Replace(cfg, "lr = 3e-3", "lr = 2e-3", 1)), 0o644)
	out, err := repro(t, clone, "check")
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("check after a change: %v\n%s", err, out)
	}
	if !strings.Contains(out, "t/b/sequential (row 2, column 1") || !strings.Contains(out, "config changed: train.bp.lr 0.003 -> 0.002") || strings.Contains(out, "t/a/") {
		t.Errorf("check after a change:\n%s", out)
	}
	plan := mustRepro(t, clone, "plan")
	if !strings.Contains(plan, "run    train/b/sequential/split1234/seed0                      config changed: train.bp.lr 0.003 -> 0.002 (since the remote's record ") {
		t.Errorf("plan on a fresh clone after a change does not name the change against the ledger:\n%s", plan)
	}
	// The estimate of the rerun reads the ledger's recorded CPU times: all
	// 9 cells that would run have a record of an earlier config or of
	// themselves there.
	if est := mustRepro(t, clone, "plan", "--estimate", "-j", "2"); !strings.Contains(est, "estimate: 9 cells, ") || !strings.Contains(est, "(9 from recorded runs of the same experiment), about ") || !strings.Contains(est, " wall at -j 2 (") {
		t.Errorf("plan --estimate on a fresh clone after a change:\n%s", est)
	}
	for _, line := range strings.Split(plan, "\n") {
		if strings.HasPrefix(line, "run    train/") && !strings.HasPrefix(line, "run    train/b/sequential/") {
			t.Errorf("plan reruns another train cell: %s", line)
		}
	}
	out = mustRepro(t, clone, "run", "-j", "2", "-q")
	// b's 2 train cells, aggregate, render, reproduction; and download,
	// prepare, split and b's stream, rebuilt because they are read.
	if !strings.Contains(out, "ran 9 cells, 0 cached, 5 from remotes") {
		t.Errorf("run after the change:\n%s", out)
	}
	if out := mustRepro(t, clone, "check"); !strings.Contains(out, "paper/ is current") {
		t.Errorf("check after the rerun: %s", out)
	}
	out = mustRepro(t, cloneWithout(t, dir), "verify", "--recompute=train/*", "--sample", "2", "--seed", "7")
	if !strings.Contains(out, "sample of 2 (seed 7) from 6 cells: train/") || !strings.Contains(out, ": 0 differing output(s)") {
		t.Errorf("verify --sample on a fresh clone:\n%s", out)
	}
}
