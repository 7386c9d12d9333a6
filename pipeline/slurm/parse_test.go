package slurm

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestParseSbatch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, out, want string
		err             bool
	}{
		{"plain", "42\n", "42", false},
		{"cluster", "42;localci\n", "42", false},
		{"warning first", "sbatch: warning: something\n42\n", "42", false},
		{"empty", "", "", true},
		{"garbage", "Submitted batch job 42\n", "", true},
		{"array", "42_1\n", "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseSbatch([]byte(tt.out))
			if (err != nil) != tt.err || got != tt.want {
				t.Errorf("parseSbatch(%q) = %q, %v; want %q, error %v", tt.out, got, err, tt.want, tt.err)
			}
		})
	}
}

func TestParseState(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in       string
		want     State
		terminal bool
	}{
		{"COMPLETED", StateCompleted, true},
		{"CANCELLED by 0", StateCancelled, true},
		{"CANCELLED+", StateCancelled, true},
		{"OUT_OF_MEMORY", StateOutOfMemory, true},
		{"NODE_FAIL", StateNodeFail, true},
		{"TIMEOUT", StateTimeout, true},
		{"FAILED", StateFailed, true},
		{"PENDING", "PENDING", false},
		{"RUNNING", "RUNNING", false},
		{"COMPLETING", "COMPLETING", false},
		{"REQUEUED", "REQUEUED", false},
		{" running ", "RUNNING", false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := parseState(tt.in)
			if got != tt.want || got.Terminal() != tt.terminal {
				t.Errorf("parseState(%q) = %q terminal %v; want %q terminal %v", tt.in, got, got.Terminal(), tt.want, tt.terminal)
			}
		})
	}
}

func TestParseSqueue(t *testing.T) {
	t.Parallel()
	// Real output of `squeue -h -t all -o '%i|%T|%r' -j 1,2,3` (slurm 22.05).
	out := "1|FAILED|NonZeroExitCode\n2|COMPLETED|None\n3|PENDING|(Resources)\n"
	got, err := parseSqueue([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]status{
		"1": {State: StateFailed, Reason: "NonZeroExitCode", Source: "squeue"},
		"2": {State: StateCompleted, Reason: "None", Source: "squeue"},
		"3": {State: "PENDING", Reason: "(Resources)", Source: "squeue"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseSqueue = %v, want %v", got, want)
	}
	if _, err := parseSqueue([]byte("JOBID|STATE\n")); err == nil {
		t.Error("parseSqueue(header line) succeeded, want error")
	}
	if got, err := parseSqueue(nil); err != nil || len(got) != 0 {
		t.Errorf("parseSqueue(empty) = %v, %v", got, err)
	}
}

func TestParseList(t *testing.T) {
	t.Parallel()
	k1, k2, k3, k4 := testKey(1), testKey(2), testKey(3), testKey(4)
	tag, other := storeTag("/a/store"), storeTag("/b/store")
	out := "7|repro-r1-x|RUNNING|repro cell " + k1 + " " + tag + "\n" +
		"8|other|RUNNING|(null)\n" +
		"9|repro-r1-y|COMPLETED|repro cell " + k2 + " " + tag + "\n" + // ended: not adoptable
		"12|repro-r2-x|PENDING|repro cell " + k1 + " " + tag + "\n" + // duplicate: lower ID wins
		"14|repro-r1-x|RUNNING|repro cell " + k1 + " " + other + "\n" + // same cell, other store
		"13|evil|RUNNING|repro cell not-a-key|x\n" +
		"15|old|RUNNING|repro cell " + k2 + "\n" + // no store tag
		"16|repro-r1-z+2|PENDING|repro cell " + k3 + "," + k4 + "," + k2 + " " + tag + "\n" + // a batch
		"17|bad|PENDING|repro cell " + k3 + ",nokey " + other + "\n" // a batch with a bad key
	got, err := parseList([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]liveJob{
		k1 + " " + tag:   {ID: "7", Name: "repro-r1-x", State: "RUNNING", First: k1, Cells: 1},
		k1 + " " + other: {ID: "14", Name: "repro-r1-x", State: "RUNNING", First: k1, Cells: 1},
		k2 + " " + tag:   {ID: "16", Name: "repro-r1-z+2", State: "PENDING", First: k3, Cells: 3},
		k3 + " " + tag:   {ID: "16", Name: "repro-r1-z+2", State: "PENDING", First: k3, Cells: 3},
		k4 + " " + tag:   {ID: "16", Name: "repro-r1-z+2", State: "PENDING", First: k3, Cells: 3},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseList = %v, want %v", got, want)
	}
}

func TestParseSacct(t *testing.T) {
	t.Parallel()
	out := "10|COMPLETED|0:0\n11|CANCELLED by 0|0:15\n11.batch|CANCELLED|0:15\n12|OUT_OF_MEMORY|0:125\n"
	got, err := parseSacct([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]status{
		"10": {State: StateCompleted, ExitCode: "0:0", Source: "sacct"},
		"11": {State: StateCancelled, ExitCode: "0:15", Source: "sacct"},
		"12": {State: StateOutOfMemory, ExitCode: "0:125", Source: "sacct"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("parseSacct = %v, want %v", got, want)
	}
	if _, err := parseSacct([]byte("10 COMPLETED\n")); err == nil {
		t.Error("parseSacct(bad line) succeeded, want error")
	}
}

func TestParseScontrol(t *testing.T) {
	t.Parallel()
	// Abridged real `scontrol show job -o 1` output (slurm 22.05).
	out := "JobId=1 JobName=repro-test-abc UserId=root(0) GroupId=root(0) MCS_label=N/A Priority=4294901759 " +
		"JobState=FAILED Reason=NonZeroExitCode Dependency=(null) Requeue=1 Restarts=0 BatchFlag=1 Reboot=0 " +
		"ExitCode=3:0 RunTime=00:00:01 Command=/tmp/t.sh a b c WorkDir=/tmp StdErr=/tmp/t.log\n"
	tests := []struct {
		name, out, id string
		want          status
		found, err    bool
	}{
		{"failed", out, "1", status{State: StateFailed, Reason: "NonZeroExitCode", ExitCode: "3:0", Source: "scontrol"}, true, false},
		{"other id", out, "2", status{}, false, false},
		{"empty", "", "1", status{}, false, false},
		{"no state", "JobId=1 JobName=x\n", "1", status{}, false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, found, err := parseScontrol([]byte(tt.out), tt.id)
			if got != tt.want || found != tt.found || (err != nil) != tt.err {
				t.Errorf("parseScontrol(%s) = %v, %v, %v; want %v, %v, error %v", tt.id, got, found, err, tt.want, tt.found, tt.err)
			}
		})
	}
}

func TestStderrClassifiers(t *testing.T) {
	t.Parallel()
	if !accountingDisabled([]byte("Slurm accounting storage is disabled\n")) {
		t.Error("accountingDisabled(real message) = false")
	}
	if accountingDisabled([]byte("sacct: error: Problem talking to the database\n")) {
		t.Error("accountingDisabled(database down) = true")
	}
	if !invalidJobID([]byte("slurm_load_jobs error: Invalid job id specified\n")) {
		t.Error("invalidJobID(real message) = false")
	}
	if !alreadyGone([]byte("scancel: error: Kill job error on job id 5: Job/step already completing or completed\n")) {
		t.Error("alreadyGone(completed) = false")
	}
	if alreadyGone([]byte("scancel: error: Unable to contact slurm controller\n")) || alreadyGone(nil) {
		t.Error("alreadyGone(controller down or empty) = true")
	}
}

func TestBackoff(t *testing.T) {
	t.Parallel()
	b := newBackoff(200*time.Millisecond, time.Second)
	var got []time.Duration
	for range 7 {
		got = append(got, b.next())
	}
	want := []time.Duration{200e6, 300e6, 450e6, 675e6, 1e9, 1e9, 1e9}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("backoff = %v, want %v", got, want)
	}
	b.reset()
	if d := b.next(); d != 200*time.Millisecond {
		t.Errorf("after reset, next = %v, want 200ms", d)
	}
}

func FuzzParseSqueue(f *testing.F) {
	f.Add([]byte("1|FAILED|NonZeroExitCode\n2|PENDING|(Resources)\n"))
	f.Add([]byte("x|y\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseSqueue(b)
		if err != nil {
			return
		}
		for id, st := range m {
			if !isJobID(id) || st.Source != "squeue" {
				t.Fatalf("parseSqueue(%q): bad entry %q %v", b, id, st)
			}
		}
	})
}

func FuzzParseScontrol(f *testing.F) {
	f.Add([]byte("JobId=1 JobName=x JobState=FAILED Reason=NonZeroExitCode ExitCode=3:0\n"), "1")
	f.Fuzz(func(t *testing.T, b []byte, id string) {
		st, ok, err := parseScontrol(b, id)
		if ok && (err != nil || st.State == "") {
			t.Fatalf("parseScontrol(%q, %q) = %v, %v, %v", b, id, st, ok, err)
		}
	})
}

func FuzzParseList(f *testing.F) {
	f.Add([]byte("7|repro-r1-x|RUNNING|repro cell " + testKey(1) + " " + storeTag("/s") + "\n8|x|PENDING|(null)\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseList(b)
		if err != nil {
			return
		}
		for cell, j := range m {
			key, tag, ok := strings.Cut(cell, " ")
			if !ok || !isKey(key) || len(tag) != 12 || !isJobID(j.ID) || j.State.Terminal() {
				t.Fatalf("parseList(%q): bad entry %q %+v", b, cell, j)
			}
		}
	})
}

func FuzzParseSacct(f *testing.F) {
	f.Add([]byte("10|COMPLETED|0:0\n11|CANCELLED by 0|0:15\n11.batch|CANCELLED|0:15\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := parseSacct(b)
		if err != nil {
			return
		}
		for id, st := range m {
			if !isJobID(id) || strings.ContainsAny(string(st.State), " +") {
				t.Fatalf("parseSacct(%q): bad entry %q %+v", b, id, st)
			}
		}
	})
}

func FuzzParseSbatch(f *testing.F) {
	f.Add([]byte("42;cluster\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		id, err := parseSbatch(b)
		if err == nil && !isJobID(id) {
			t.Fatalf("parseSbatch(%q) = %q", b, id)
		}
	})
}

func TestLastLine(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	long := strings.Repeat("x", 5000)
	tests := []struct{ name, content, want string }{
		{"empty", "", ""},
		{"one line", "boom\n", "boom"},
		{"trailing blank lines", "a\nerror: b \n\n\n", "error: b"},
		{"long tail", "first\n" + long + "\nlast words\n", "last words"},
		{"long last line", long, strings.Repeat("x", 300) + "..."},
	}
	for _, tt := range tests {
		path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "_"))
		if err := os.WriteFile(path, []byte(tt.content), 0o644); err != nil {
			t.Fatal(err)
		}
		if got := lastLine(path); got != tt.want {
			t.Errorf("%s: lastLine = %q, want %q", tt.name, got, tt.want)
		}
	}
	if got := lastLine(filepath.Join(dir, "missing")); got != "" {
		t.Errorf("lastLine(missing) = %q", got)
	}
}

func TestJobErrorMessage(t *testing.T) {
	t.Parallel()
	e := &JobError{JobID: "51", Name: "repro-r-abc", State: StateTimeout, ExitCode: "0:0", Reason: "TimeLimit",
		Log: "/s/logs/k.log", SlurmLog: "/s/logs/k.slurm.log", LastLine: "slurmstepd: error: *** JOB 51 CANCELLED DUE TO TIME LIMIT ***"}
	want := `slurm job 51 (repro-r-abc) TIMEOUT (exit 0:0, TimeLimit): "slurmstepd: error: *** JOB 51 CANCELLED DUE TO TIME LIMIT ***"; log /s/logs/k.log, slurm output /s/logs/k.slurm.log`
	if got := e.Error(); got != want {
		t.Errorf("Error() =\n %s\nwant\n %s", got, want)
	}
}
