package pipeline

import "testing"

// TestCellVersion: a per-cell version can raise a cell above the stage's
// Version but never lower it, so bumping Version reruns every cell.
func TestCellVersion(t *testing.T) {
	byParam := func(p any) int { return p.(int) }
	for _, c := range []struct {
		version   int
		versionOf func(any) int
		param     int
		want      int
	}{
		{version: 3, param: 7, want: 3},
		{version: 1, versionOf: byParam, param: 5, want: 5},
		{version: 4, versionOf: byParam, param: 2, want: 4},
		{version: 4, versionOf: byParam, param: 4, want: 4},
	} {
		s := &Stage{Name: "s", Version: c.version, VersionOf: c.versionOf}
		if got := s.CellVersion(c.param); got != c.want {
			t.Errorf("Version %d, VersionOf set %v, param %d: CellVersion = %d, want %d", c.version, c.versionOf != nil, c.param, got, c.want)
		}
	}
}
