package main

import (
	"testing"

	"repro/stages"
)

// TestPlainCellDecimals: repro show prints a number with the decimals its
// table prints (a realised decay of 9.4e-5 is not "0.0 ± 0.0").
func TestPlainCellDecimals(t *testing.T) {
	t.Parallel()
	six, none := 6, 0
	for _, tc := range []struct {
		dec  *int
		mean float64
		sd   float64
		want string
	}{
		{&six, 0.00009379, 0.0000160, "0.000094 ± 0.000016"},
		{&none, 16885, 0, "16885 ± 0"},
		{nil, 91.64, 0.43, "91.6 ± 0.4"},
	} {
		n := &stages.NumberRef{Decimals: tc.dec}
		n.Status.Kind = stages.StatusOK
		n.N, n.Expected = 6, 6
		n.Acc.Mean, n.Acc.SD = tc.mean, tc.sd
		if got := plainCell(n); got != tc.want {
			t.Errorf("plainCell(%v, decimals %v) = %q, want %q", tc.mean, tc.dec, got, tc.want)
		}
	}
}
