package experiments

import (
	"testing"

	"repro/numbers"
	"repro/stages"
)

// TestNotRunCells: a table cell all of whose seeds wait for a failed cell
// is marked not run, naming that cell only (its status enters the
// aggregate's key, so no error text); a cell with a seed left out for
// another reason, or not all of whose seeds are left out, keeps "run".
func TestNotRunCells(t *testing.T) {
	t.Parallel()
	run := func(seeds string) stages.TableCell {
		return stages.TableCell{Status: numbers.Status{Kind: numbers.StatusRun}, Seeds: seeds, Cell: "train/x"}
	}
	ap := &stages.AggregateParams{Table: "t", Rows: []string{"a", "b"}, Protocols: []string{"s", "x"},
		Cells: []stages.TableCell{run("0 1"), run("0 1"), run("0 1"), {Status: numbers.Status{Kind: numbers.StatusNA}}}}
	got := notRunCells(ap, map[[2]int][]string{
		{0, 0}: {"download/cifar100", "download/cifar100"}, // every seed blocked
		{0, 1}: {"download/cifar100", ""},                  // one seed failed itself
		{1, 0}: {"download/cifar100"},                      // one of two seeds blocked
		{1, 1}: {"download/cifar100"},                      // not a cell that runs
	})
	if got == ap {
		t.Fatal("notRunCells marked nothing")
	}
	want := []numbers.Status{
		numbers.NotRun("blocked by download/cifar100"),
		{Kind: numbers.StatusRun}, {Kind: numbers.StatusRun}, {Kind: numbers.StatusNA},
	}
	for i, c := range got.Cells {
		if c.Status != want[i] {
			t.Errorf("cell %d: status %q, want %q", i, c.Status, want[i])
		}
	}
	if c := got.Cells[0]; c.Seeds != "" || c.Cell != "" {
		t.Errorf("blocked cell keeps its seeds %q and cell %q", c.Seeds, c.Cell)
	}
	if ap.Cells[0].Status.Kind != numbers.StatusRun {
		t.Error("notRunCells changed its argument")
	}
	if same := notRunCells(ap, map[[2]int][]string{{0, 1}: {"", ""}}); same != ap {
		t.Error("notRunCells copied params it did not change")
	}
}
