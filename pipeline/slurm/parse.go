package slurm

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// State is a Slurm job state as squeue, sacct and scontrol print it,
// reduced to its first word ("CANCELLED by 0" is CANCELLED).
type State string

// The states the executor branches on. Any other state is taken to be
// live (the job is still Slurm's business: PENDING, RUNNING, COMPLETING,
// CONFIGURING, REQUEUED, SUSPENDED, ...).
const (
	StateCompleted   State = "COMPLETED"
	StateFailed      State = "FAILED"
	StateTimeout     State = "TIMEOUT"
	StateOutOfMemory State = "OUT_OF_MEMORY"
	StateNodeFail    State = "NODE_FAIL"
	StateCancelled   State = "CANCELLED"
	StateBootFail    State = "BOOT_FAIL"
	StateDeadline    State = "DEADLINE"
	StatePreempted   State = "PREEMPTED"
	StateRevoked     State = "REVOKED"
	// StateUnknown is ours, not Slurm's: the job is in no queue and no
	// accounting record; only the store can tell what became of the cell.
	StateUnknown State = "UNKNOWN"
)

// Terminal reports whether a job in state s will not run again.
func (s State) Terminal() bool {
	switch s {
	case StateCompleted, StateFailed, StateTimeout, StateOutOfMemory, StateNodeFail,
		StateCancelled, StateBootFail, StateDeadline, StatePreempted, StateRevoked, StateUnknown:
		return true
	}
	return false
}

// parseState normalizes a state field: "CANCELLED by 1000" and the
// truncated "CANCELLED+" both become CANCELLED.
func parseState(s string) State {
	s = strings.TrimSpace(s)
	if i := strings.IndexAny(s, " +"); i >= 0 {
		s = s[:i]
	}
	return State(strings.ToUpper(s))
}

// status is what Slurm says about one job.
type status struct {
	State    State
	Reason   string // squeue/scontrol reason, e.g. NonZeroExitCode
	ExitCode string // "code:signal", when known
	Source   string // which command said so: squeue, sacct, scontrol, store
}

// parseSbatch reads the job ID from `sbatch --parsable` output:
// "123" or "123;cluster".
func parseSbatch(out []byte) (string, error) {
	s := strings.TrimSpace(string(out))
	if i := strings.LastIndexByte(s, '\n'); i >= 0 { // warnings may precede it
		s = s[i+1:]
	}
	if i := strings.IndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	if !isJobID(s) {
		return "", fmt.Errorf("sbatch: unexpected output %q", firstLines(string(out), 2))
	}
	return s, nil
}

func isJobID(s string) bool {
	if s == "" || len(s) > 20 {
		return false
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// squeueFormat is the -o format parseSqueue reads: id, state, reason.
const squeueFormat = "%i|%T|%r"

// parseSqueue reads `squeue -h -o %i|%T|%r` lines into a map by job ID.
func parseSqueue(out []byte) (map[string]status, error) {
	m := make(map[string]status)
	for n, line := range splitLines(out) {
		f := strings.SplitN(line, "|", 3)
		if len(f) != 3 || !isJobID(f[0]) {
			return nil, fmt.Errorf("squeue: line %d: unexpected %q", n+1, line)
		}
		m[f[0]] = status{State: parseState(f[1]), Reason: f[2], Source: "squeue"}
	}
	return m, nil
}

// listFormat is the -o format parseList reads: id, name, state, comment
// (last, as it is free text).
const listFormat = "%i|%j|%T|%k"

// liveJob is a job found in the queue when looking for jobs to adopt.
type liveJob struct {
	ID, Name string
	State    State
	First    string // the key of the job's first cell
	Cells    int    // how many cells the job runs (a batch runs several)
}

// commentPrefix starts the comment of every job this executor submits:
// "repro cell <key>[,<key>...] <store tag>" (see cellComment).
const commentPrefix = "repro cell "

// cellComment is the comment of the job computing cell key (or the
// comma-separated keys of a batch, in the order it runs them) in the store
// whose tag is tag. A job is adopted only by a driver of the same store: the
// same key in another store is another job's business.
func cellComment(key, tag string) string { return commentPrefix + key + " " + tag }

// maxComment is the longest job comment slurmctld accepts: a longer one
// fails the submission ("Pathname of a file, directory or other parameter
// too long").
const maxComment = 1024

// maxBatch is the most cells whose keys (64 hex digits each, comma
// separated) fit one job's comment with its store tag: 15.
var maxBatch = (maxComment - len(cellComment("", storeTag(""))) + 1) / (2*sha256.Size + 1)

// storeTag is a short fixed-form name for a store directory: the first 12
// hex digits of the SHA-256 of its absolute path.
func storeTag(dir string) string {
	sum := sha256.Sum256([]byte(dir))
	return hex.EncodeToString(sum[:6])
}

// parseList reads `squeue -h -o %i|%j|%T|%k` lines and returns the live
// jobs whose comment names a cell, by "<key> <store tag>". Lines of other
// jobs are skipped; when two live jobs run one cell the lower job ID wins.
func parseList(out []byte) (map[string]liveJob, error) {
	m := make(map[string]liveJob)
	for n, line := range splitLines(out) {
		f := strings.SplitN(line, "|", 4)
		if len(f) != 4 || !isJobID(f[0]) {
			return nil, fmt.Errorf("squeue: line %d: unexpected %q", n+1, line)
		}
		rest, ok := strings.CutPrefix(f[3], commentPrefix)
		list, tag, _ := strings.Cut(rest, " ")
		keys := strings.Split(list, ",")
		if !ok || len(tag) != 12 || strings.ContainsAny(tag, " |") {
			continue
		}
		if slices.ContainsFunc(keys, func(k string) bool { return !isKey(k) }) {
			continue
		}
		st := parseState(f[2])
		if st.Terminal() {
			continue
		}
		j := liveJob{ID: f[0], Name: f[1], State: st, First: keys[0], Cells: len(keys)}
		for _, key := range keys {
			cell := key + " " + tag
			if old, dup := m[cell]; dup && lessID(old.ID, j.ID) {
				continue
			}
			m[cell] = j
		}
	}
	return m, nil
}

// lessID orders numeric job IDs.
func lessID(a, b string) bool {
	if len(a) != len(b) {
		return len(a) < len(b)
	}
	return a < b
}

// sacctFormat is the -o field list parseSacct reads.
const sacctFormat = "JobID,State,ExitCode"

// parseSacct reads `sacct -n -P -X -o JobID,State,ExitCode` lines. Step
// lines ("123.batch"), which -X should already drop, are skipped.
func parseSacct(out []byte) (map[string]status, error) {
	m := make(map[string]status)
	for n, line := range splitLines(out) {
		f := strings.Split(line, "|")
		if len(f) != 3 {
			return nil, fmt.Errorf("sacct: line %d: unexpected %q", n+1, line)
		}
		if !isJobID(f[0]) {
			continue
		}
		m[f[0]] = status{State: parseState(f[1]), ExitCode: f[2], Source: "sacct"}
	}
	return m, nil
}

// accountingDisabled reports whether sacct's complaint means this cluster
// keeps no accounting (no slurmdbd), so asking again is pointless.
func accountingDisabled(stderr []byte) bool {
	return strings.Contains(strings.ToLower(string(stderr)), "accounting storage is disabled")
}

// invalidJobID reports whether a squeue/scontrol failure only means the
// controller no longer knows the job(s).
func invalidJobID(stderr []byte) bool {
	return strings.Contains(strings.ToLower(string(stderr)), "invalid job id")
}

var scontrolField = regexp.MustCompile(`(?:^|\s)(JobId|JobState|Reason|ExitCode)=(\S*)`)

// parseScontrol reads the output of `scontrol show job -o ID` (one line,
// Key=Value pairs) for the job id. Only JobId, JobState, Reason and
// ExitCode are read, first occurrence each; the executor's job names never
// contain spaces, so a name cannot fake a field.
func parseScontrol(out []byte, id string) (status, bool, error) {
	for _, line := range splitLines(out) {
		fields := map[string]string{}
		for _, m := range scontrolField.FindAllStringSubmatch(line, -1) {
			if _, seen := fields[m[1]]; !seen {
				fields[m[1]] = m[2]
			}
		}
		if fields["JobId"] != id {
			continue
		}
		st := fields["JobState"]
		if st == "" {
			return status{}, false, fmt.Errorf("scontrol: job %s: no JobState in %q", id, firstLines(line, 1))
		}
		return status{State: parseState(st), Reason: fields["Reason"], ExitCode: fields["ExitCode"], Source: "scontrol"}, true, nil
	}
	return status{}, false, nil
}

func splitLines(out []byte) []string {
	var lines []string
	for _, l := range strings.Split(string(out), "\n") {
		if l = strings.TrimRight(l, "\r "); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// isKey reports whether s is a full cell key: 64 lower-case hex digits.
func isKey(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// alreadyGone reports whether scancel failed only because every job it was
// given had already ended or been forgotten, which is what cancelling
// wanted anyway.
func alreadyGone(stderr []byte) bool {
	lines := splitLines(stderr)
	for _, l := range lines {
		l = strings.ToLower(l)
		if !strings.Contains(l, "already completing or completed") && !strings.Contains(l, "invalid job id") {
			return false
		}
	}
	return len(lines) > 0
}
