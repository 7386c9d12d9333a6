package numbers

import (
	"strconv"
	"strings"
)

// Fixed formats x with d decimals, without a negative zero: a number as
// the tables, the reproduction report and the site print it.
func Fixed(x float64, d int) string {
	s := strconv.FormatFloat(x, 'f', d, 64)
	if strings.Trim(s, "-0.") == "" {
		return strings.TrimPrefix(s, "-")
	}
	return s
}

// Signed formats x as Fixed does, with a sign: +0.5, -7.0.
func Signed(x float64, d int) string {
	s := Fixed(x, d)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s
}

// CardName is the file name (without .html) of a number's card in the
// report site: its ID with each / as a dot (IDs have no dots, so no two
// numbers share a name).
func CardName(id string) string { return strings.ReplaceAll(id, "/", ".") }
