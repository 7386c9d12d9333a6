package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestEveryCommandRefusesExtraArguments: one positional argument more
// than a command takes is a usage error (exit 2) before it runs, for every
// command (dag and status ignored them; the review's probe).
func TestEveryCommandRefusesExtraArguments(t *testing.T) {
	t.Parallel()
	for _, c := range allCommands() {
		if c.maxArgs < 0 {
			continue // exec-cell: any number of keys, each parsed
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			args := []string{c.name}
			for i := range c.maxArgs + 1 {
				args = append(args, fmt.Sprintf("extra%d", i))
			}
			var stdout, stderr bytes.Buffer
			code := runMain(context.Background(), args, &stdout, &stderr, func(string) string { return "" })
			if code != 2 || !strings.Contains(stderr.String(), "repro "+c.name+": takes ") || !strings.Contains(stderr.String(), "extra") {
				t.Errorf("repro %s: exit %d, stderr %q; want exit 2 naming the extra argument", strings.Join(args, " "), code, stderr.String())
			}
		})
	}
}

// TestNoEmptyStringFlag: every string flag of every command refuses an
// empty value (exit 2): run --profile "" ran the default profile.
func TestNoEmptyStringFlag(t *testing.T) {
	t.Parallel()
	for _, c := range allCommands() {
		c.flags.VisitAll(func(f *flag.Flag) {
			if _, ok := f.Value.(nonEmptyString); !ok {
				if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
					t.Errorf("repro %s --%s is a plain string flag: it would take an empty value", c.name, f.Name)
				}
				return
			}
			if name, _ := flag.UnquoteUsage(f); name == "value" {
				t.Errorf("repro %s --%s: its help says \"value\"; name it in backquotes in the usage", c.name, f.Name)
			}
			var stdout, stderr bytes.Buffer
			args := []string{c.name, "--" + f.Name + "="}
			code := runMain(context.Background(), args, &stdout, &stderr, func(string) string { return "" })
			if code != 2 || !strings.Contains(stderr.String(), "empty (an unset shell variable?)") {
				t.Errorf("repro %s: exit %d, stderr %q; want exit 2", strings.Join(args, " "), code, stderr.String())
			}
		})
	}
}

// TestEmptyOrWrongArguments re-runs the review's probes with the CLI.
func TestEmptyOrWrongArguments(t *testing.T) {
	t.Parallel()
	dir := remoteWorkdir(t, "[settings.remotes.shared]\npath = \"no/such/folder\"\n", tinyDAG)
	for _, tc := range []struct {
		args []string
		code int
		want string
	}{
		{[]string{"run", "--profile", ""}, 2, "invalid value \"\" for flag -profile: empty"},
		{[]string{"push", "--remote="}, 2, "invalid value \"\" for flag -remote: empty"},
		{[]string{"pull"}, 1, "remote shared: stat " + filepath.Join(dir, "no", "such", "folder") + ": no such file or directory: nothing to pull"},
		{[]string{"dag", "x"}, 2, `repro dag: takes no arguments, got ["x"]`},
		{[]string{"status", "x"}, 2, `repro status: takes no arguments, got ["x"]`},
		{[]string{"plan", "--config", "/dev/zero"}, 1, "/dev/zero: more than the 16 MiB"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			t.Parallel()
			stdout, stderr, code := reproSplit(t, dir, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.want) || strings.Contains(stdout, "pulled 0 cells") {
				t.Errorf("repro %q: exit %d, stdout %q, stderr %q; want exit %d and %q", tc.args, code, stdout, stderr, tc.code, tc.want)
			}
		})
	}
}

// TestHelp: '<cmd> --help' prints on stdout and exits 0, as 'repro help
// <cmd>' does; every command has a description; the exit statuses are
// documented; a bad flag is still a usage error on stderr.
func TestHelp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range allCommands() {
		if strings.TrimSpace(c.long) == "" {
			t.Errorf("repro help %s: no description", c.name)
		}
		want, _, code := reproSplit(t, dir, "help", c.name)
		if code != 0 {
			t.Fatalf("repro help %s: exit %d", c.name, code)
		}
		for _, flag := range []string{"--help", "-h"} {
			out, errOut, code := reproSplit(t, dir, c.name, flag)
			if code != 0 || out != want || errOut != "" {
				t.Errorf("repro %s %s: exit %d, stderr %q, stdout %q; want exit 0 and %q", c.name, flag, code, errOut, out, want)
			}
		}
	}
	out, _, code := reproSplit(t, dir, "help")
	if code != 0 || !strings.Contains(out, "exit status:") || !strings.Contains(out, "130  interrupted") {
		t.Errorf("repro help: exit %d, no exit statuses:\n%s", code, out)
	}
	if out, errOut, code := reproSplit(t, dir, "plan", "--bogus"); code != 2 || out != "" || !strings.Contains(errOut, "usage: repro plan") {
		t.Errorf("repro plan --bogus: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// A bare repro asks for nothing: usage on stderr, exit 2; a typo gets a
	// suggestion.
	if out, errOut, code := reproSplit(t, dir); code != 2 || out != "" || !strings.Contains(errOut, "usage: repro") {
		t.Errorf("repro: exit %d, stdout %q, stderr %q; want usage on stderr, exit 2", code, out, errOut)
	}
	if _, errOut, code := reproSplit(t, dir, "stauts"); code != 2 || !strings.Contains(errOut, `unknown command "stauts" (did you mean status?)`) {
		t.Errorf("repro stauts: exit %d, stderr %q", code, errOut)
	}
}

func TestDidYouMean(t *testing.T) {
	names := []string{"status", "show", "plan", "ablation"}
	for in, want := range map[string]string{
		"stauts": " (did you mean status?)", "ablaton": " (did you mean ablation?)", "pln": " (did you mean plan?)", "xyzzy": "",
	} {
		if got := didYouMean(in, names); got != want {
			t.Errorf("didYouMean(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestVersionAndFlagNames: repro --version names the build, and help
// writes flags with two dashes, as the README does; a misspelt flag gets a
// suggestion.
func TestVersionAndFlagNames(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out, _, code := reproSplit(t, dir, "--version")
	if code != 0 || !strings.HasPrefix(out, "repro ") || !strings.Contains(out, runtime.Version()) || !strings.Contains(out, "kernels ") {
		t.Errorf("repro --version: exit %d, %q", code, out)
	}
	help, _, _ := reproSplit(t, dir, "help", "plan")
	if !strings.Contains(help, "\n  --all\n") || strings.Contains(help, "\n  -all") || !strings.Contains(help, "--only GLOB") {
		t.Errorf("help plan:\n%s", help)
	}
	_, errOut, code := reproSplit(t, dir, "plan", "--profle", "smoke")
	if code != 2 || !strings.Contains(errOut, "unknown flag --profle (did you mean --profile?)") {
		t.Errorf("plan --profle: exit %d, %q", code, errOut)
	}
}
