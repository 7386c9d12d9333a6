package core

import "testing"

// formerFastPath is the choice fastUpdate made before the table (issue
// 57), as it was written: a fast path's name, or "" for the general path.
func formerFastPath(nt *net, c *layerCall) string {
	ly, op := c.ly, c.op
	fast := !op.leak
	if op.adam {
		fast = ly.fb == nil || ly.sign != nil
	}
	fast = fast && !nt.sub.transport && !ly.fbNoDale
	switch {
	case !fast:
		return ""
	case !c.ctrl && !c.anchor && ly.absent == nil:
		if op.adam {
			return "adamRows"
		}
		return "sgdRows"
	case c.anchor && c.m == nil && !c.ctrl && !op.adam && ly.absent == nil:
		return "anchorRows"
	case c.ctrl && !c.anchor && !op.adam && c.wd == 0 && ly.fb != nil && ly.dense():
		return "ctrlRows"
	}
	return ""
}

// TestFastPathGuards: over every combination of the conditions the guards
// read, at most one guard admits a call, and the table chooses the path
// the former switch chose. The one exception is a layer without a twin
// but with Dale signs, which no network has (W^1 is the only layer
// without a twin, and the input has no Dale signs): the former switch
// would send it to sgdRows or adamRows, which clamp no layer without a
// twin; the guards send it to the general path.
func TestFastPathGuards(t *testing.T) {
	t.Parallel()
	const nCond = 12
	used := make(map[string]int)
	for bits := range 1 << nCond {
		on := func(k int) bool { return bits&(1<<k) != 0 }
		ly := &layer{csrView: csrView{nIn: 2, nOut: 1, col: []int32{0}}}
		if on(0) {
			ly.fb = []float32{0}
		}
		if on(1) {
			ly.sign = []float32{1}
		}
		if on(2) {
			ly.absent = []bool{false}
		}
		ly.fbNoDale = on(3)
		if on(4) {
			ly.nIn, ly.col = 1, []int32{0} // dense
		}
		nt := &net{}
		nt.sub.transport = on(5)
		c := &layerCall{ly: ly, op: &optim{adam: on(6), leak: on(7)}, ctrl: on(8), anchor: on(9)}
		if on(10) {
			c.m = &layerMask{}
		}
		if on(11) {
			c.wd = 1e-3
		}
		var admit []string
		for k := range fastPaths {
			if fastPaths[k].guard(nt, c) {
				admit = append(admit, fastPaths[k].name)
			}
		}
		if len(admit) > 1 {
			t.Fatalf("conditions %012b: guards %v all admit the call", bits, admit)
		}
		got := ""
		if len(admit) == 1 {
			got = admit[0]
			used[got]++
		}
		want := formerFastPath(nt, c)
		if ly.fb == nil && ly.sign != nil && (want == "sgdRows" || want == "adamRows") {
			want = "" // no such layer; see above
		}
		if got != want {
			t.Errorf("conditions %012b: the table chooses %q, the former switch %q", bits, got, want)
		}
	}
	for _, p := range fastPaths {
		if used[p.name] == 0 {
			t.Errorf("%s: its guard admits no combination", p.name)
		}
	}
}
