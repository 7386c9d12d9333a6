package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"repro/artifacts"
)

// TestWhyHistory: repro why names the build that computed a recomputed
// record's outputs and each build that recomputed them since.
func TestWhyHistory(t *testing.T) {
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	first := artifacts.Provenance{Revision: "aaa", Executor: "local", Host: "h1", End: t0}
	second := artifacts.Provenance{Revision: "bbb", Executor: artifacts.ExecutorRecompute, Host: "h2", End: t0.Add(time.Hour), Earlier: first.History()}
	third := artifacts.Provenance{Revision: "ccc", Executor: artifacts.ExecutorRecompute, Host: "h3", End: t0.Add(2 * time.Hour), Earlier: second.History()}
	var out bytes.Buffer
	printHistory(&out, "  ", &third, nil)
	want := "  history  computed by revision aaa (local executor on h1, 2026-11-20 10:00Z)\n" +
		"           recomputed bit-identically by revision bbb (verify executor on h2, 2026-11-20 11:00Z)\n" +
		"           recomputed bit-identically by revision ccc (verify executor on h3, 2026-11-20 12:00Z, this record)\n"
	if out.String() != want {
		t.Errorf("history of a twice recomputed record:\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	printHistory(&out, "", &first, nil)
	if out.Len() != 0 {
		t.Errorf("a computed record printed a history: %q", out.String())
	}
	out.Reset()
	old := artifacts.Provenance{Revision: "ddd", Executor: artifacts.ExecutorRecompute, Host: "h", End: t0}
	printHistory(&out, "", &old, nil)
	if !bytes.Contains(out.Bytes(), []byte("computed by a build this record does not name")) || !bytes.Contains(out.Bytes(), []byte("revision ddd (verify executor on h, 2026-11-20 10:00Z, this record)")) {
		t.Errorf("history of a recompute without earlier builds:\n%s", out.String())
	}
}

// TestWhyHistoryFromGit: a recompute record that names no earlier build
// (written before provenance.earlier) gets them from the earlier versions
// of its file in the ledger's git history, oldest first; versions with
// other outputs are not its history.
func TestWhyHistoryFromGit(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Skip("no git")
	}
	dir := t.TempDir()
	git := func(args ...string) {
		t.Helper()
		cmd := exec.Command("git", append([]string{"-C", dir, "-c", "user.name=t", "-c", "user.email=t@t", "-c", "commit.gpgsign=false"}, args...)...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v\n%s", args, err, out)
		}
	}
	git("init", "-q")
	t0 := time.Date(2026, 11, 20, 10, 0, 0, 0, time.UTC)
	key := artifacts.Key{1}
	outs := []artifacts.Output{{Name: "out", Digest: artifacts.Sum([]byte("x")), Size: 1}}
	file := filepath.Join(dir, "rec.json")
	write := func(rev, executor string, end time.Time, outputs []artifacts.Output) *artifacts.Manifest {
		m := &artifacts.Manifest{Format: artifacts.ManifestFormat, Key: key, Outputs: outputs,
			Provenance: artifacts.Provenance{Revision: rev, Executor: executor, Host: "h", End: end}}
		b, _ := json.Marshal(m)
		if err := os.WriteFile(file, b, 0o644); err != nil {
			t.Fatal(err)
		}
		git("add", "rec.json")
		git("commit", "-q", "-m", rev)
		return m
	}
	write("other", "local", t0, []artifacts.Output{{Name: "out", Digest: artifacts.Sum([]byte("y")), Size: 1}})
	write("aaa", "local", t0.Add(time.Hour), outs)
	write("bbb", "local", t0.Add(2*time.Hour), outs)
	now := write("ccc", artifacts.ExecutorRecompute, t0.Add(3*time.Hour), outs)
	bs, err := gitHistory(context.Background(), file, now)
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].Revision != "aaa" || bs[1].Revision != "bbb" {
		t.Fatalf("builds from git %+v, want aaa then bbb", bs)
	}
	var out bytes.Buffer
	printHistory(&out, "", &now.Provenance, bs)
	for _, want := range []string{"computed by revision aaa (local executor on h, 2026-11-20 11:00Z, from the ledger's git history)",
		"computed again (same outputs) by revision bbb", "recomputed bit-identically by revision ccc (verify executor on h, 2026-11-20 13:00Z, this record)"} {
		if !bytes.Contains(out.Bytes(), []byte(want)) {
			t.Errorf("history lacks %q:\n%s", want, out.String())
		}
	}
}
