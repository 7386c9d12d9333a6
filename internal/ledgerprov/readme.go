package ledgerprov

import (
	"fmt"
	"strings"
)

// The marker lines around the generated section of a ledger's README.
const (
	Begin = "--- Which code computed these records (written from them by 'repro provenance --write'; do not edit) ---"
	End   = "--- end of the generated section ---"
)

// Section is the README section that states t, marker lines included.
func Section(t *Tally) string {
	return Begin + "\n" + t.Statement() + End + "\n"
}

// Stated returns the generated section readme holds, marker lines
// included, and whether it holds one. Markers out of place (an End before
// a Begin, a Begin without an End, either twice) are an error naming the
// line.
func Stated(readme string) (string, bool, error) {
	start, end, err := bounds(readme)
	if err != nil || start < 0 {
		return "", false, err
	}
	return readme[start:end], true, nil
}

// Splice returns readme with its generated section replaced by section, or
// with section appended (after a blank line) if it has none.
func Splice(readme, section string) (string, error) {
	start, end, err := bounds(readme)
	if err != nil {
		return "", err
	}
	if start >= 0 {
		return readme[:start] + section + readme[end:], nil
	}
	if readme != "" && !strings.HasSuffix(readme, "\n") {
		readme += "\n"
	}
	if readme != "" {
		readme += "\n"
	}
	return readme + section, nil
}

// bounds returns the byte offsets of the generated section (from its Begin
// line to the end of its End line), or -1, -1 when there is none.
func bounds(readme string) (start, end int, err error) {
	start, end = -1, -1
	off := 0
	for i, line := range strings.SplitAfter(readme, "\n") {
		switch strings.TrimRight(line, "\n") {
		case Begin:
			if start >= 0 {
				return -1, -1, fmt.Errorf("README:%d: a second %q line", i+1, Begin)
			}
			start = off
		case End:
			if start < 0 || end >= 0 {
				return -1, -1, fmt.Errorf("README:%d: %q without the line %q before it", i+1, End, Begin)
			}
			end = off + len(line)
		}
		off += len(line)
	}
	if start >= 0 && end < 0 {
		return -1, -1, fmt.Errorf("README: %q without the line %q after it", Begin, End)
	}
	return start, end, nil
}
