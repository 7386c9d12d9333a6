// Command repro regenerates the paper's tables from raw data through a DAG
// of content-addressed, cached cells. Run `repro help` for the commands.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path"
	"runtime"
	"sort"
	"strings"
	"syscall"

	"repro/internal/buildstamp"
	"repro/internal/kernelpath"
)

// command is one subcommand (as cmd/go's base.Command).
type command struct {
	name, usage, short, long string
	flags                    *flag.FlagSet
	// maxArgs is how many positional arguments the command takes at
	// most (-1: any number); runMain refuses more before the command runs,
	// so that no command ignores an argument (the zero value takes none).
	maxArgs int
	run     func(ctx context.Context, env *env, args []string) error
}

// env is what every command shares: streams and the process environment.
type env struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

// globalFlags are accepted by every command that reads the pipeline.
type globalFlags struct {
	config   string
	profile  string
	store    string
	noRemote bool
}

func (g *globalFlags) register(fs *flag.FlagSet) {
	nonEmptyVar(fs, &g.config, "config", "pipeline.toml", "pipeline `file`")
	nonEmptyVar(fs, &g.profile, "profile", "", "`profile` (default: settings.default_profile)")
	nonEmptyVar(fs, &g.store, "store", "", "store `directory` (default: REPRO_STORE or settings.store)")
	fs.BoolVar(&g.noRemote, "no-remote", false, "use no remote of settings.remotes: compute what the store lacks")
}

// nonEmptyString is a string flag that refuses "": an empty value (an
// unset shell variable, --profile ”) must be an error, never the flag's
// default in disguise.
type nonEmptyString struct{ p *string }

func (v nonEmptyString) String() string {
	if v.p == nil {
		return ""
	}
	return *v.p
}

func (v nonEmptyString) Set(s string) error {
	if s == "" {
		return errors.New("empty (an unset shell variable?): leave the flag out for its default")
	}
	*v.p = s
	return nil
}

// nonEmptyVar defines a string flag into p, with default value def, that
// refuses an empty value. Its usage should name the value in backquotes
// (flag.UnquoteUsage): flag cannot tell a Value holds a string.
func nonEmptyVar(fs *flag.FlagSet, p *string, name, def, usage string) {
	*p = def
	fs.Var(nonEmptyString{p}, name, usage)
}

// nonEmpty is nonEmptyVar into a new string.
func nonEmpty(fs *flag.FlagSet, name, def, usage string) *string {
	p := new(string)
	nonEmptyVar(fs, p, name, def, usage)
	return p
}

// exitError carries a specific exit status.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// allCommands builds the command table afresh (tests run many commands in
// one process, and flag values must not leak between them).
func allCommands() []*command {
	cs := []*command{cmdRun(), cmdPlan(), cmdStatus(), cmdWhy(), cmdVerify(), cmdGC(), cmdDag(), cmdExecCell(), cmdInit(), cmdKey(), cmdPush(), cmdPull(), cmdShow(), cmdCheck(), cmdReport(), cmdDiff(), cmdProvenance(), cmdCrate()}
	sort.Slice(cs, func(i, j int) bool { return cs[i].name < cs[j].name })
	return cs
}

func main() {
	// SIGHUP (a closed terminal or ssh session) stops a run as Ctrl-C
	// does: locks released, a summary, exit 130.
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM, syscall.SIGHUP)
	defer stop()
	os.Exit(runMain(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv))
}

// runMain is main without the process: tests call it directly. It returns
// the exit status: 0 ok, 1 failure, 2 usage, 130 interrupted.
func runMain(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	commands := allCommands()
	if len(args) == 0 || args[0] == "help" || args[0] == "-h" || args[0] == "--help" {
		if len(args) > 1 {
			for _, c := range commands {
				if c.name == args[1] {
					help(stdout, c)
					return 0
				}
			}
			fmt.Fprintf(stderr, "repro help: unknown command %q\n", args[1])
			usage(stderr, commands)
			return 2
		}
		if len(args) == 0 {
			// A bare "repro" asked for nothing: usage, as for any
			// command line that cannot run.
			usage(stderr, commands)
			return 2
		}
		usage(stdout, commands)
		return 0
	}
	if args[0] == "--version" || args[0] == "-version" || args[0] == "version" {
		fmt.Fprintln(stdout, versionText())
		return 0
	}
	var cmd *command
	for _, c := range commands {
		if c.name == args[0] {
			cmd = c
		}
	}
	if cmd == nil {
		var names []string
		for _, c := range commands {
			names = append(names, c.name)
		}
		fmt.Fprintf(stderr, "repro: unknown command %q%s\n", args[0], didYouMean(args[0], names))
		usage(stderr, commands)
		return 2
	}
	cmd.flags.SetOutput(io.Discard) // the error is printed below, with a suggestion
	cmd.flags.Usage = func() {}     // printed below, where help and errors part
	rest, err := parseInterspersed(cmd.flags, args[1:])
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			// Asked for, help is output like 'repro help <command>'.
			help(stdout, cmd)
			return 0
		}
		msg := err.Error()
		if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
			var names []string
			cmd.flags.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
			name = strings.TrimPrefix(name, "-")
			msg = "unknown flag --" + name + strings.Replace(didYouMean(name, names), "mean ", "mean --", 1)
		}
		fmt.Fprintf(stderr, "repro %s: %s\n", cmd.name, msg)
		fmt.Fprintf(stderr, "usage: repro %s %s\n", cmd.name, cmd.usage)
		printFlags(stderr, cmd.flags)
		return 2
	}
	if cmd.maxArgs >= 0 && len(rest) > cmd.maxArgs {
		if cmd.maxArgs == 0 {
			fmt.Fprintf(stderr, "repro %s: takes no arguments, got %q\n", cmd.name, rest)
		} else {
			fmt.Fprintf(stderr, "repro %s: takes at most %d argument(s), got %q\n", cmd.name, cmd.maxArgs, rest)
		}
		fmt.Fprintf(stderr, "usage: repro %s %s\n", cmd.name, cmd.usage)
		return 2
	}
	if err := kernelpath.Check(); err != nil {
		fmt.Fprintf(stderr, "repro %s: %v\n", cmd.name, err)
		return 2
	}
	e := &env{stdout: stdout, stderr: stderr, getenv: getenv}
	err = cmd.run(ctx, e, rest)
	// One switch sets the exit status (restic's main does the same).
	var ee *exitError
	switch {
	case err == nil:
		return 0
	case errors.Is(err, context.Canceled) || ctx.Err() != nil:
		fmt.Fprintln(stderr, "repro: interrupted")
		return 130
	case errors.As(err, &ee):
		if ee.err != nil {
			fmt.Fprintf(stderr, "repro %s: %v\n", cmd.name, ee.err)
		}
		return ee.code
	default:
		fmt.Fprintf(stderr, "repro %s: %v\n", cmd.name, err)
		return 1
	}
}

// didYouMean is " (did you mean X?)" for the name closest to s among
// names, when one is within two edits of it, else "".
func didYouMean(s string, names []string) string {
	best, bestD := "", 3
	for _, n := range names {
		if d := editDistance(s, n); d < bestD {
			best, bestD = n, d
		}
	}
	if best == "" {
		return ""
	}
	return fmt.Sprintf(" (did you mean %s?)", best)
}

// editDistance is the Levenshtein distance between a and b (in bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// parseInterspersed parses flags before and after the arguments, as in
// "repro show reproduction --summary"; after "--" everything is an
// argument.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if n := len(args) - len(rest); n > 0 && args[n-1] == "--" {
			return append(pos, rest...), nil
		}
		if len(rest) == 0 {
			return pos, nil
		}
		pos, args = append(pos, rest[0]), rest[1:]
	}
}

// newFlags returns a command's flag set with the global flags registered
// into g (when g is non-nil).
func newFlags(name string, g *globalFlags) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	if g != nil {
		g.register(fs)
	}
	return fs
}

func usage(w io.Writer, commands []*command) {
	fmt.Fprintln(w, "repro regenerates the paper's tables through a DAG of cached, content-addressed cells.")
	fmt.Fprintln(w, "\nusage: repro <command> [flags] [args]\n\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-10s %s\n", c.name, c.short)
	}
	fmt.Fprint(w, exitStatuses)
	fmt.Fprintln(w, "\n'repro help <command>' or 'repro <command> --help' describes one; 'repro --version' names this binary's source.")
}

// exitStatuses is the one table of exit codes (runMain sets them).
const exitStatuses = `
exit status:
  0    success (for check and verify: nothing wrong found)
  1    failure: a cell failed, a check or verify found a problem, an error
  2    usage: unknown command or flag, bad argument
  130  interrupted (Ctrl-C, SIGTERM, SIGHUP); run again to resume
`

// help prints one command's usage, description and flags.
func help(w io.Writer, c *command) {
	fmt.Fprintf(w, "usage: repro %s %s\n", c.name, c.usage)
	if long := strings.TrimSpace(c.long); long != "" {
		fmt.Fprintf(w, "\n%s\n", long)
	}
	printFlags(w, c.flags)
}

// printFlags is fs.PrintDefaults with each flag written "--name", as the
// README and every help text write them (the flag package takes one dash
// or two; its listing shows one).
func printFlags(w io.Writer, fs *flag.FlagSet) {
	var b strings.Builder
	out := fs.Output()
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(out)
	lines := strings.SplitAfter(b.String(), "\n")
	for i, l := range lines {
		if strings.HasPrefix(l, "  -") {
			lines[i] = "  --" + l[3:]
		}
	}
	io.WriteString(w, strings.Join(lines, ""))
}

func usageErr(format string, args ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, args...)}
}

// cellMatch reports whether the cell ID matches glob (path.Match syntax,
// whose * stops at a slash), either whole or in its leading segments: so
// "train/full" and "train/full/*" select every cell under train/full, and
// "train/*/static/*/seed0" the static seed-0 cell of every experiment.
func cellMatch(glob, id string) bool {
	if ok, _ := path.Match(glob, id); ok {
		return true
	}
	for i := range len(id) {
		if id[i] == '/' {
			if ok, _ := path.Match(glob, id[:i]); ok {
				return true
			}
		}
	}
	return false
}

// matchesSome returns a usage error when glob (given to flag) selects no
// cell of the workspace's profile: a misspelt selection must not look like
// a run with nothing to do.
func matchesSome(w *workspace, flag, glob string) error {
	for _, c := range w.graph.Cells {
		if cellMatch(glob, c.ID) {
			return nil
		}
	}
	return usageErr("%s %q matches no cell of profile %s (repro dag lists the cell IDs)", flag, glob, w.profile)
}

// versionText is repro --version: what this binary's records will name.
// The revision (with +dirty and the changes' digest for a build of an
// edited tree; "unknown" for one that cannot name its source), the Go
// toolchain, and the vector kernels and CPU the cells will run on.
func versionText() string {
	st := buildstamp.Binary()
	note := ""
	if !st.Clean() {
		note = " (its records cannot be pushed: build with make build from a clean tree)"
	}
	return fmt.Sprintf("repro %s%s; %s %s/%s; kernels %s on %s",
		st, note, runtime.Version(), runtime.GOOS, runtime.GOARCH, kernelpath.Path(), kernelpath.CPUModel())
}
