// Package refruns reads and writes the authors' code's per-seed results as
// the repository keeps them: paper/reference-runs/<config>.tsv, one file
// per configuration of the authors' scripts (<config>.<split>.tsv for
// run_seq.py's runs on another held-out split, FileName), written by `make
// reference-runs` (tools/refcheck/reference_runs.py) from the checkpoints
// their own runs left. The product reads these files and nothing of the
// authors' code; the runs are never a dependency of `make paper`.
//
// A file is a header of "# key: value" lines (config, command, reference,
// split, source; in that order, each once), a column line and one line per
// seed, ascending. The column line says which of the authors' scripts ran:
//
//	seed	final_acc	forgetting	replay_used
//
// for run_seq.py's continual runs (--val): the run seed, the final accuracy
// and the forgetting in percent (x100, two decimals as written), and the
// replay micro-batches the run applied;
//
//	seed	test_acc
//
// for run_mnist.py's i.i.d. runs (the substrate ladder): the run seed and
// the accuracy on the official test set after training, in percent.
//
// Either column line may end in a machine column (SeqColumns+MachineColumn):
// the CPU model and the instruction set the math library (torch's CPU
// capability) used for that seed, as "<cpu>; <isa>". The authors' code is
// deterministic at one thread on one machine but not across CPU
// generations (the same seed gave 90.10 on one and 90.77 on another), so a
// seed's line is only expected to repeat on the machine that wrote it.
// Files written before the column have none; their runs' Machine is "".
package refruns

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
)

// Run is one seed of the authors' code.
type Run struct {
	Seed int64
	// FinalAcc is the accuracy a row is judged on, a percentage (x100) in
	// [0, 100]: run_seq's final accuracy, run_mnist's test accuracy.
	FinalAcc float64
	// Forgetting (a percentage) and ReplayUsed (replay micro-batches
	// applied, >= 0) are run_seq's; 0 in a run_mnist file.
	Forgetting float64
	ReplayUsed int64
	// Machine is where the seed ran, "<cpu>; <isa>" (MachineColumn);
	// "" in a file without the column, Unrecorded for a seed whose machine
	// the file does not know.
	Machine string
}

// MachineColumn ends a column line that records each seed's machine.
const MachineColumn = "\tmachine"

// Unrecorded is the machine of a seed run before machines were recorded.
const Unrecorded = "unrecorded"

// File is one configuration's runs and what produced them.
type File struct {
	// Config is the authors' configuration name (run_seq.py --configs).
	Config string
	// Command is the command line that ran each seed (S for the seed).
	Command string
	// Reference names the authors' files and commits that ran.
	Reference string
	// Split says which evaluation set the runs scored.
	Split string
	// Source says where the results were read from and by what.
	Source string
	// Columns is the file's column line, SeqColumns or TestColumns.
	Columns string
	// Runs are the seeds, ascending.
	Runs []Run
}

// headerKeys are the header's keys, in the order a file gives them.
var headerKeys = []string{"config", "command", "reference", "split", "source"}

// The column lines: SeqColumns for run_seq.py's runs, TestColumns for
// run_mnist.py's.
const (
	SeqColumns  = "seed\tfinal_acc\tforgetting\treplay_used"
	TestColumns = "seed\ttest_acc"
)

// configRe is what a configuration name may be: it names the file.
var configRe = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.+-]*$`)

// ValidConfig reports whether s can name a configuration (and its file).
func ValidConfig(s string) bool { return configRe.MatchString(s) && !strings.Contains(s, "..") }

// Parse reads a file; name is how errors call it. Every error names
// name:line and what is wrong.
func Parse(name string, r io.Reader) (*File, error) {
	f := &File{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	line, hdr, columns := 0, 0, false
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%s:%d: %s", name, line, fmt.Sprintf(format, args...))
	}
	for sc.Scan() {
		line++
		s := sc.Text()
		switch {
		case !columns && strings.HasPrefix(s, "# "):
			if hdr == len(headerKeys) {
				return nil, bad("a header line after %q", headerKeys[len(headerKeys)-1])
			}
			key, val, ok := strings.Cut(s[2:], ": ")
			if !ok || key != headerKeys[hdr] {
				return nil, bad("want the header line %q (# %s: ...)", headerKeys[hdr], headerKeys[hdr])
			}
			if val = strings.TrimSpace(val); val == "" {
				return nil, bad("header %s: empty", key)
			}
			*f.field(hdr) = val
			hdr++
		case !columns:
			if hdr < len(headerKeys) {
				return nil, bad("want the header line %q (# %s: ...)", headerKeys[hdr], headerKeys[hdr])
			}
			if base := strings.TrimSuffix(s, MachineColumn); base != SeqColumns && base != TestColumns {
				return nil, bad("want the column line %q (run_seq.py) or %q (run_mnist.py), either ending in %q", SeqColumns, TestColumns, MachineColumn)
			}
			f.Columns = s
			columns = true
		default:
			run, err := parseRun(s, f.Columns)
			if err != nil {
				return nil, bad("%v", err)
			}
			if n := len(f.Runs); n > 0 && run.Seed <= f.Runs[n-1].Seed {
				return nil, bad("seed %d after seed %d: seeds must ascend, each once", run.Seed, f.Runs[n-1].Seed)
			}
			f.Runs = append(f.Runs, run)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s:%d: %w", name, line+1, err)
	}
	if !columns {
		line++
		if hdr < len(headerKeys) {
			return nil, bad("want the header line %q (# %s: ...)", headerKeys[hdr], headerKeys[hdr])
		}
		return nil, bad("no column line (%q or %q)", SeqColumns, TestColumns)
	}
	if !ValidConfig(f.Config) {
		line = 1
		return nil, bad("config %q: want letters, digits and _ . + -", f.Config)
	}
	return f, nil
}

// field is the header field i (headerKeys' order).
func (f *File) field(i int) *string {
	return [...]*string{&f.Config, &f.Command, &f.Reference, &f.Split, &f.Source}[i]
}

// parseRun reads one seed's line under the column line columns.
func parseRun(s, columns string) (Run, error) {
	fs, names := strings.Split(s, "\t"), strings.Split(columns, "\t")
	if len(fs) != len(names) {
		return Run{}, fmt.Errorf("%d fields, want %d (%s)", len(fs), len(names), strings.Join(names, ", "))
	}
	var r Run
	var err error
	if r.Seed, err = strconv.ParseInt(fs[0], 10, 64); err != nil || r.Seed < 0 {
		return r, fmt.Errorf("seed %q: want an integer >= 0", fs[0])
	}
	base, machine := strings.CutSuffix(columns, MachineColumn)
	if machine {
		if r.Machine = fs[len(fs)-1]; strings.TrimSpace(r.Machine) == "" {
			return r, fmt.Errorf("machine: empty (write %q for a seed whose machine is not known)", Unrecorded)
		}
	}
	pct := []*float64{&r.FinalAcc}
	if base == SeqColumns {
		pct = append(pct, &r.Forgetting)
	}
	for i, dst := range pct {
		v, err := strconv.ParseFloat(fs[1+i], 64)
		if err != nil || math.IsNaN(v) || v < 0 || v > 100 {
			return r, fmt.Errorf("%s %q: want a percentage in [0, 100]", names[1+i], fs[1+i])
		}
		*dst = v
	}
	if base == SeqColumns {
		if r.ReplayUsed, err = strconv.ParseInt(fs[3], 10, 64); err != nil || r.ReplayUsed < 0 {
			return r, fmt.Errorf("replay_used %q: want an integer >= 0", fs[3])
		}
	}
	return r, nil
}

// Format writes f as Parse reads it. Percentages are written with two
// decimals (as the converter writes them), so a parsed file formats to
// its own bytes.
func Format(w io.Writer, f *File) error {
	var b bytes.Buffer
	for i, k := range headerKeys {
		fmt.Fprintf(&b, "# %s: %s\n", k, *f.field(i))
	}
	base, machine := strings.CutSuffix(f.Columns, MachineColumn)
	if base != SeqColumns && base != TestColumns {
		return fmt.Errorf("refruns: %s: columns %q, want %q or %q (either ending in %q)", f.Config, f.Columns, SeqColumns, TestColumns, MachineColumn)
	}
	b.WriteString(f.Columns + "\n")
	for _, r := range f.Runs {
		if base == SeqColumns {
			fmt.Fprintf(&b, "%d\t%.2f\t%.2f\t%d", r.Seed, r.FinalAcc, r.Forgetting, r.ReplayUsed)
		} else {
			fmt.Fprintf(&b, "%d\t%.2f", r.Seed, r.FinalAcc)
		}
		if machine {
			b.WriteString("\t" + r.Machine)
		}
		b.WriteString("\n")
	}
	_, err := w.Write(b.Bytes())
	return err
}

// FileName is the file of config's runs: <config>.tsv, or
// <config>.<split>.tsv for runs scored on another held-out split than the
// authors' usual one (split "split4321": run_seq.py --val --val-seed 4321).
func FileName(config, split string) string {
	if split == "" {
		return config + ".tsv"
	}
	return config + "." + split + ".tsv"
}

// Load reads dir/FileName(config, split) and checks that it is that
// configuration's.
func Load(dir, config, split string) (*File, error) {
	if !ValidConfig(config) {
		return nil, fmt.Errorf("reference config %q: want letters, digits and _ . + -", config)
	}
	if split != "" && !splitRe.MatchString(split) {
		return nil, fmt.Errorf("reference split %q: want split<seed>", split)
	}
	path := filepath.Join(dir, FileName(config, split))
	fh, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer fh.Close()
	f, err := Parse(path, fh)
	if err != nil {
		return nil, err
	}
	if f.Config != config {
		return nil, fmt.Errorf("%s:1: config %q, want %q (the file's name)", path, f.Config, config)
	}
	return f, nil
}

// splitRe is what names a held-out split in a file name.
var splitRe = regexp.MustCompile(`^split[0-9]+$`)
