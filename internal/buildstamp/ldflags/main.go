// Command ldflags prints the -ldflags value that stamps a repro binary with
// the git tree of the current directory (package buildstamp). `make build`
// runs it. Outside a git tree it says so on stderr and prints nothing: the
// binary is then unstamped, `repro run` warns and `repro push` refuses its
// records.
package main

import (
	"fmt"
	"os"

	"repro/internal/buildstamp"
)

func main() {
	s, err := buildstamp.Compute(".")
	if err != nil {
		fmt.Fprintf(os.Stderr, "buildstamp: cannot name the source (the binary will say revision unknown): %v\n", err)
		return
	}
	fmt.Println(s.LDFlags())
}
