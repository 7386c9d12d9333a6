package ledgerprov

import (
	"strings"
	"testing"

	"repro/artifacts"
)

func record(stage, rev string, dirty bool, executor string) *artifacts.Manifest {
	return &artifacts.Manifest{Stage: stage, Provenance: artifacts.Provenance{Revision: rev, Dirty: dirty, Executor: executor}}
}

func TestOfCountsSourcesStagesAndRecomputes(t *testing.T) {
	ms := []*artifacts.Manifest{
		record("train", "aaa", false, "local"),
		record("train", "bbb", false, artifacts.ExecutorRecompute),
		record("spike", "bbb", false, artifacts.ExecutorRecompute),
		record("train", "bbb", false, "slurm"),
		record("train", "unknown", false, "local"),
		record("energy", "", false, "local"),
		record("train", "aaa", true, "local"),
	}
	ms[1].Provenance.CPU, ms[1].Provenance.Kernels = "Some CPU", "avx2"
	tl := Of("paper", ms)
	if tl.Records != 7 || tl.Unknown() != 2 || len(tl.Sources) != 4 {
		t.Fatalf("records %d unknown %d sources %d, want 7, 2, 4", tl.Records, tl.Unknown(), len(tl.Sources))
	}
	first := tl.Sources[0]
	if first.Source.Revision != "bbb" || first.Records != 3 || first.Recomputed != 2 || first.Computed() != 1 || first.Stages["train"] != 2 || first.Stages["spike"] != 1 {
		t.Errorf("first source %+v, want bbb: 3 records, 2 recomputed, 2 train 1 spike", first)
	}
	if last := tl.Sources[3]; last.Source.Known() || last.Records != 2 {
		t.Errorf("last source %+v, want the 2 unknown ones", last)
	}
	if _, ok := tl.One(); ok {
		t.Error("One: several sources, want none")
	}
	s := tl.Statement()
	for _, want := range []string{
		"The 7 records that profile paper reaches name 4 sources",
		"  commit bbb: 3 records (2 recomputed bit-identically, 1 computed): 2 train, 1 spike\n",
		"  commit aaa with uncommitted changes: 1 record (computed): 1 train\n",
		"  revision unknown: 2 records (binaries that could not name their source): 1 energy, 1 train\n",
		"2 records name no commit.",
		"Kernel path and CPU:\n  not named (records made before provenance named them): 6 records\n  avx2 kernels on Some CPU: 1 record\n",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("statement lacks %q:\n%s", want, s)
		}
	}
}

func TestStatementOneCommit(t *testing.T) {
	tl := Of("paper", []*artifacts.Manifest{
		record("train", "ccc", false, artifacts.ExecutorRecompute),
		record("render", "ccc", false, "local"),
	})
	if rev, ok := tl.One(); !ok || rev != "ccc" {
		t.Fatalf("One = %q, %v; want ccc", rev, ok)
	}
	s := tl.Statement()
	if !strings.HasPrefix(s, "Every record below was computed or recomputed bit-identically by commit ccc\n") ||
		!strings.Contains(s, "commit ccc: 2 records (1 recomputed bit-identically, 1 computed)") || strings.Contains(s, "name no commit") {
		t.Errorf("statement:\n%s", s)
	}
	// A dirty build is not "one commit".
	if _, ok := Of("paper", []*artifacts.Manifest{record("train", "ccc", true, "local")}).One(); ok {
		t.Error("One: a dirty build counted as a commit")
	}
}

func TestSpliceAndStated(t *testing.T) {
	head := "This directory is a repro remote.\n"
	a := Section(Of("paper", []*artifacts.Manifest{record("train", "aaa", false, "local")}))
	b := Section(Of("paper", []*artifacts.Manifest{record("train", "bbb", false, "local")}))
	r1, err := Splice(head, a)
	if err != nil || r1 != head+"\n"+a {
		t.Fatalf("Splice into a README without a section = %q, %v", r1, err)
	}
	r2, err := Splice(r1+"tail\n", b)
	if err != nil || r2 != head+"\n"+b+"tail\n" {
		t.Fatalf("Splice replacing a section = %q, %v", r2, err)
	}
	got, ok, err := Stated(r2)
	if err != nil || !ok || got != b {
		t.Fatalf("Stated = %q, %v, %v; want the section", got, ok, err)
	}
	// A README edited by hand no longer states the records.
	lie := strings.Replace(r2, "commit bbb", "commit aaa", 1)
	if got, _, _ := Stated(lie); got == b {
		t.Error("an edited section still equals the records' statement")
	}
	if _, ok, err := Stated(head); ok || err != nil {
		t.Errorf("Stated(no section) = %v, %v", ok, err)
	}
	for _, bad := range []string{Begin + "\n", End + "\n", a + a, Begin + "\n" + a} {
		if _, _, err := Stated(bad); err == nil {
			t.Errorf("Stated(%q): no error for misplaced markers", bad)
		}
		if _, err := Splice(bad, a); err == nil {
			t.Errorf("Splice(%q): no error for misplaced markers", bad)
		}
	}
}

func TestStatementEmpty(t *testing.T) {
	if s := Of("smoke", nil).Statement(); s != "No record here is of a cell that profile smoke reaches.\n" {
		t.Errorf("statement of no records: %q", s)
	}
}
