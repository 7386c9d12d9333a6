package main

import (
	"bytes"
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
	printHistory(&out, "  ", &third)
	want := "  history  computed by revision aaa (local executor on h1, 2026-11-20 10:00Z)\n" +
		"           recomputed bit-identically by revision bbb (verify executor on h2, 2026-11-20 11:00Z)\n" +
		"           recomputed bit-identically by revision ccc (verify executor on h3, 2026-11-20 12:00Z, this record)\n"
	if out.String() != want {
		t.Errorf("history of a twice recomputed record:\n%s\nwant\n%s", out.String(), want)
	}
	out.Reset()
	printHistory(&out, "", &first)
	if out.Len() != 0 {
		t.Errorf("a computed record printed a history: %q", out.String())
	}
	out.Reset()
	old := artifacts.Provenance{Revision: "ddd", Executor: artifacts.ExecutorRecompute, Host: "h", End: t0}
	printHistory(&out, "", &old)
	if !bytes.Contains(out.Bytes(), []byte("computed by a build this record does not name")) || !bytes.Contains(out.Bytes(), []byte("revision ddd (verify executor on h, 2026-11-20 10:00Z, this record)")) {
		t.Errorf("history of a recompute without earlier builds:\n%s", out.String())
	}
}
