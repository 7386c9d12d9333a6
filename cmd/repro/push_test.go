package main

import (
	"regexp"
	"strconv"
	"sync"
	"testing"
)

// TestConcurrentPushesWriteEachRecordOnce re-runs the review's probe (two
// concurrent pushes of 7 cells reported 12, 11 and 9 new records in all):
// however pushes interleave, their "new record(s)" add up to the cells.
func TestConcurrentPushesWriteEachRecordOnce(t *testing.T) {
	t.Parallel()
	newRecords := regexp.MustCompile(`pushed 20 cells of profile default: (\d+) new record\(s\)`)
	for round := range 4 {
		dir := remoteWorkdir(t, "[settings.remotes.shared]\npath = \"cells\"\n", remoteDAG)
		mustRepro(t, dir, "run", "-q")
		var wg sync.WaitGroup
		outs := make([]string, 3)
		errs := make([]error, 3)
		for i := range outs {
			wg.Add(1)
			go func() { defer wg.Done(); outs[i], errs[i] = repro(t, dir, "push", "--allow-dirty") }()
		}
		wg.Wait()
		for i, err := range errs {
			if err != nil {
				t.Fatalf("round %d: push %d: %v\n%s", round, i, err, outs[i])
			}
		}
		total := 0
		for _, out := range outs {
			m := newRecords.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("round %d: push printed %q", round, out)
			}
			n, _ := strconv.Atoi(m[1])
			total += n
		}
		if total != 20 {
			t.Fatalf("round %d: three concurrent pushes wrote %d new records in all, want each of 20 once:\n%v", round, total, outs)
		}
	}
}
