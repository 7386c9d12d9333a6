package refruns

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const good = `# config: g17_mirror_s10
# command: python3 src/run_seq.py --configs g17_mirror_s10 --seeds S --val
# reference: src/run_seq.py at 1eee71d
# split: --val, seed 1234
# source: test
seed	final_acc	forgetting	replay_used
0	79.66	16.80	16885
3	84.38	11.68	16885
`

func TestParseRoundTrip(t *testing.T) {
	t.Parallel()
	f, err := Parse("good.tsv", strings.NewReader(good))
	if err != nil {
		t.Fatal(err)
	}
	if f.Config != "g17_mirror_s10" || len(f.Runs) != 2 || f.Runs[1] != (Run{Seed: 3, FinalAcc: 84.38, Forgetting: 11.68, ReplayUsed: 16885}) {
		t.Fatalf("Parse = %+v", f)
	}
	var b bytes.Buffer
	if err := Format(&b, f); err != nil {
		t.Fatal(err)
	}
	if b.String() != good {
		t.Errorf("Format(Parse(good)) =\n%s\nwant\n%s", b.String(), good)
	}
}

const goodTest = `# config: v6_spiketrain8
# command: python3 src/run_mnist.py --configs v6_spiketrain8 --seeds S
# reference: src/run_mnist.py at d607174
# split: the official test set
# source: test
seed	test_acc
0	76.64
2	79.52
`

// TestParseTestColumns: a run_mnist file keeps its column line, reads its
// test accuracy as the run's accuracy and formats to its own bytes.
func TestParseTestColumns(t *testing.T) {
	t.Parallel()
	f, err := Parse("test.tsv", strings.NewReader(goodTest))
	if err != nil {
		t.Fatal(err)
	}
	if f.Columns != TestColumns || len(f.Runs) != 2 || f.Runs[1] != (Run{Seed: 2, FinalAcc: 79.52}) {
		t.Fatalf("Parse = %+v", f)
	}
	var b bytes.Buffer
	if err := Format(&b, f); err != nil {
		t.Fatal(err)
	}
	if b.String() != goodTest {
		t.Errorf("Format(Parse(goodTest)) =\n%s\nwant\n%s", b.String(), goodTest)
	}
	if _, err := Parse("x.tsv", strings.NewReader(strings.Replace(goodTest, "76.64", "76.64\t1", 1))); err == nil ||
		!strings.Contains(err.Error(), "x.tsv:7: 3 fields, want 2 (seed, test_acc)") {
		t.Errorf("a run_seq line under test_acc: error = %v", err)
	}
	if err := Format(&b, &File{Config: "x"}); err == nil {
		t.Error("Format of a file with no column line succeeded")
	}
}

func TestParseErrors(t *testing.T) {
	t.Parallel()
	lines := strings.Split(strings.TrimSuffix(good, "\n"), "\n")
	with := func(i int, s string) string {
		l := append([]string(nil), lines...)
		l[i] = s
		return strings.Join(l, "\n") + "\n"
	}
	for _, tc := range []struct {
		name, in, want string
	}{
		{"empty", "", "x.tsv:1: want the header line \"config\""},
		{"header order", with(1, "# reference: x"), "x.tsv:2: want the header line \"command\""},
		{"empty header", with(2, "# reference:  "), "x.tsv:3: header reference: empty"},
		{"bad config", with(0, "# config: ../x"), "x.tsv:1: config \"../x\""},
		{"no columns", strings.Join(lines[:5], "\n") + "\n", "x.tsv:6: no column line"},
		{"wrong columns", with(5, "seed\tacc"), "x.tsv:6: want the column line"},
		{"test fields", with(5, TestColumns), "x.tsv:7: 4 fields, want 2 (seed, test_acc)"},
		{"fields", with(6, "0\t79.66\t16.80"), "x.tsv:7: 3 fields, want 4"},
		{"seed", with(6, "-1\t79.66\t16.80\t1"), "x.tsv:7: seed \"-1\""},
		{"accuracy", with(6, "0\t179.66\t16.80\t1"), "x.tsv:7: final_acc \"179.66\""},
		{"nan", with(6, "0\tNaN\t16.80\t1"), "x.tsv:7: final_acc \"NaN\""},
		{"forgetting", with(6, "0\t79.66\t-1\t1"), "x.tsv:7: forgetting \"-1\""},
		{"replay", with(6, "0\t79.66\t16.80\tx"), "x.tsv:7: replay_used \"x\""},
		{"order", with(7, "0\t79.66\t16.80\t1"), "x.tsv:8: seed 0 after seed 0"},
		{"header after header", strings.Join(lines[:5], "\n") + "\n# extra: 1\n", "x.tsv:6: a header line after"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := Parse("x.tsv", strings.NewReader(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("Parse(%s) error = %v, want %q", tc.name, err, tc.want)
			}
		})
	}
}

func TestLoad(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "g17_mirror_s10.tsv"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "other.tsv"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := Load(dir, "g17_mirror_s10", ""); err != nil || len(f.Runs) != 2 {
		t.Errorf("Load = %v, %v", f, err)
	}
	if _, err := Load(dir, "other", ""); err == nil || !strings.Contains(err.Error(), `other.tsv:1: config "g17_mirror_s10", want "other"`) {
		t.Errorf("Load(other) error = %v", err)
	}
	if _, err := Load(dir, "../x", ""); err == nil {
		t.Error("Load(../x) succeeded")
	}
	if _, err := Load(dir, "absent", ""); !os.IsNotExist(err) {
		t.Errorf("Load(absent) error = %v, want not exist", err)
	}
	// Runs on another split are a file of their own.
	if _, err := Load(dir, "g17_mirror_s10", "split4321"); !os.IsNotExist(err) {
		t.Errorf("Load(split4321) error = %v, want not exist (g17_mirror_s10.split4321.tsv)", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "g17_mirror_s10.split4321.tsv"), []byte(good), 0o644); err != nil {
		t.Fatal(err)
	}
	if f, err := Load(dir, "g17_mirror_s10", "split4321"); err != nil || len(f.Runs) != 2 {
		t.Errorf("Load(split4321) = %v, %v", f, err)
	}
	if _, err := Load(dir, "g17_mirror_s10", "../x"); err == nil {
		t.Error("Load(split ../x) succeeded")
	}
}

// TestRepositoryFiles: every committed file parses and names its own
// configuration.
func TestRepositoryFiles(t *testing.T) {
	t.Parallel()
	paths, err := filepath.Glob("../../paper/reference-runs/*.tsv")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no committed reference runs (%v)", err)
	}
	for _, p := range paths {
		config, split, _ := strings.Cut(strings.TrimSuffix(filepath.Base(p), ".tsv"), ".split")
		if split != "" {
			split = "split" + split
		}
		if _, err := Load(filepath.Dir(p), config, split); err != nil {
			t.Error(err)
		}
	}
}

// FuzzParse: Parse never panics, and what it accepts formats to bytes it
// parses back to the same file.
func FuzzParse(f *testing.F) {
	f.Add(good)
	f.Add(goodTest)
	f.Add("# config: a\n# command: b\n# reference: c\n# split: d\n# source: e\n" + SeqColumns + "\n")
	f.Add("# config: a\n" + SeqColumns + "\n0\t1\t2\t3\n")
	f.Fuzz(func(t *testing.T, in string) {
		x, err := Parse("fuzz", strings.NewReader(in))
		if err != nil {
			return
		}
		var b bytes.Buffer
		if err := Format(&b, x); err != nil {
			t.Fatal(err)
		}
		y, err := Parse("fuzz", &b)
		if err != nil {
			t.Fatalf("Parse(Format(x)): %v\n%s", err, b.String())
		}
		if len(x.Runs) != len(y.Runs) || x.Config != y.Config || x.Command != y.Command || x.Source != y.Source || x.Columns != y.Columns {
			t.Fatalf("round trip: %+v != %+v", x, y)
		}
		for i := range x.Runs {
			if x.Runs[i].Seed != y.Runs[i].Seed || x.Runs[i].ReplayUsed != y.Runs[i].ReplayUsed ||
				abs(x.Runs[i].FinalAcc-y.Runs[i].FinalAcc) > 0.005 || abs(x.Runs[i].Forgetting-y.Runs[i].Forgetting) > 0.005 {
				t.Fatalf("run %d: %+v != %+v", i, x.Runs[i], y.Runs[i])
			}
		}
	})
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}
