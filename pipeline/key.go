package pipeline

import (
	"crypto/sha256"
	"fmt"
	"sort"
	"strings"

	"repro/artifacts"
)

// keyFormat opens every key text; change it only to invalidate every cell.
const keyFormat = "repro cell v1"

// KeyText is the canonical description of a cell that its key hashes: one
// "name value" line per influence (Go's build cache builds action IDs the
// same way). inputs maps an input name to that upstream cell's outputs.
// Nothing else enters: no paths, times, hosts or worker counts.
func KeyText(stage string, version int, params []Param, inputs map[string][]artifacts.Output) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\nstage %s\nversion %d\n", keyFormat, stage, version)
	for _, p := range params {
		fmt.Fprintf(&b, "param %s %s\n", p.Name, p.Value)
	}
	for _, name := range sortedKeys(inputs) {
		outs := append([]artifacts.Output(nil), inputs[name]...)
		sort.Slice(outs, func(i, j int) bool { return outs[i].Name < outs[j].Name })
		for _, o := range outs {
			fmt.Fprintf(&b, "input %s/%s %s\n", name, o.Name, o.Digest)
		}
	}
	return b.String()
}

// KeyOf hashes a key text.
func KeyOf(text string) artifacts.Key { return sha256.Sum256([]byte(text)) }
