// Package kernelpathtest holds what tests need of the kernel paths: a
// test re-run on every path. Only tests import it, so the repro binary
// never links package testing.
package kernelpathtest

import (
	"os"
	"os/exec"
	"strings"
	"testing"

	"repro/internal/kernelpath"
)

// RerunOnEveryPath re-runs the calling test binary's tests that match the
// regular expression run under each kernel path below the best this CPU
// has (REPRO_KERNELS=portable, and avx2 on an AVX-512 CPU), and fails t if
// any fails there. Run it on tests that compare outputs with goldens: they
// then show every path gives the goldens' bits. A test calling it from its
// own child process returns at once.
func RerunOnEveryPath(t *testing.T, run string) {
	t.Helper()
	if os.Getenv(kernelpath.Env) != "" {
		t.Skipf("%s=%s: this is a re-run", kernelpath.Env, os.Getenv(kernelpath.Env))
	}
	for l := kernelpath.Portable; l < kernelpath.Path(); l++ {
		cmd := exec.Command(os.Args[0], "-test.run", run, "-test.count=1", "-test.v")
		cmd.Env = append(os.Environ(), kernelpath.Env+"="+l.String())
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Errorf("%s=%s: %v\n%s", kernelpath.Env, l, err, out)
			continue
		}
		if !strings.Contains(string(out), "--- PASS") {
			t.Errorf("%s=%s: no test matching %q passed:\n%s", kernelpath.Env, l, run, out)
		}
	}
}
