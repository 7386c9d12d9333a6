package slurm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strings"
)

// Runner runs one Slurm client command (sbatch, squeue, sacct, scontrol,
// scancel) and returns its standard output and standard error. A command
// that ran and exited non-zero returns a *CmdError, with the output
// collected so far. Implementations must be safe for concurrent use. Tests
// substitute a fake; ExecRunner runs the real programs.
type Runner interface {
	Run(ctx context.Context, name string, args ...string) (stdout, stderr []byte, err error)
}

// ExecRunner runs commands with os/exec, as argv (no shell). Dir, if set,
// is a directory holding the Slurm client programs; otherwise they are
// looked up in PATH. Env, if non-nil, replaces the environment.
type ExecRunner struct {
	Dir string
	Env []string
}

// Run implements Runner.
func (r ExecRunner) Run(ctx context.Context, name string, args ...string) ([]byte, []byte, error) {
	path := name
	if r.Dir != "" {
		path = r.Dir + "/" + name
	}
	cmd := exec.CommandContext(ctx, path, args...)
	if r.Env != nil {
		cmd.Env = r.Env
	}
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	if err != nil {
		var ee *exec.ExitError
		if errors.As(err, &ee) && ctx.Err() == nil {
			return out.Bytes(), errb.Bytes(), &CmdError{Name: name, Args: args, Stderr: errb.String(), Err: err}
		}
		if ctx.Err() != nil {
			return out.Bytes(), errb.Bytes(), fmt.Errorf("%s: %w", name, ctx.Err())
		}
		return out.Bytes(), errb.Bytes(), fmt.Errorf("%s: %w", name, err)
	}
	return out.Bytes(), errb.Bytes(), nil
}

// CmdError is a Slurm command that ran and failed.
type CmdError struct {
	Name   string
	Args   []string
	Stderr string
	Err    error
}

func (e *CmdError) Error() string {
	msg := strings.TrimSpace(e.Stderr)
	if msg == "" {
		msg = e.Err.Error()
	}
	return fmt.Sprintf("%s: %s", e.Name, firstLines(msg, 3))
}

func (e *CmdError) Unwrap() error { return e.Err }

// firstLines keeps at most n lines of s, so one chatty command cannot
// flood an error message.
func firstLines(s string, n int) string {
	lines := strings.SplitN(s, "\n", n+1)
	if len(lines) > n {
		lines = append(lines[:n], "...")
	}
	return strings.Join(lines, "; ")
}
