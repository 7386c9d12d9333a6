package artifacts

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// LockStale is how old a lock's heartbeat may get before another host may
// take it over. Holders refresh it every LockStale/4. On the same host a
// lock whose process is gone is taken over at once.
const LockStale = 2 * time.Minute

// ErrLocked is returned by TryLock when another live process holds the lock.
var ErrLocked = errors.New("locked by another process")

// LockedError is TryLock's error for a lock a live process holds: the
// cell's key and who holds it ("pid 123 on node7"). It wraps ErrLocked.
type LockedError struct {
	Key    Key
	Holder string
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("cell %s: %v (%s)", e.Key.Short(), ErrLocked, e.Holder)
}

func (e *LockedError) Unwrap() error { return ErrLocked }

// lockInfo is the content of a lock file.
type lockInfo struct {
	PID  int    `json:"pid"`
	Host string `json:"host"`
	Boot string `json:"boot"` // kernel boot id: a pid is only meaningful within one boot
	// Start is the holder's start time (clock ticks after boot, field 22
	// of /proc/<pid>/stat): a live process with the holder's PID but
	// another start time is not the holder (the PID was reused after the
	// holder died by kill -9). Empty in locks written before it, and where
	// /proc is missing: the PID alone decides then.
	Start string `json:"start,omitempty"`
}

// lockUnreadableGrace is how long a lock file that does not parse is
// taken for one being written: its holder writes it in one write(2) right
// after creating it, so a lock still unreadable after this is garbage (a
// crash mid-write, a full disk) and is taken over, rather than waited on
// for LockStale.
const lockUnreadableGrace = 10 * time.Second

// Lock is a held per-cell lock. Call Unlock when the cell is done.
type Lock struct {
	path string
	stop chan struct{}
	done chan struct{}
}

func (s *Store) lockPath(k Key) string { return filepath.Join(s.root, "locks", k.String()+".lock") }

// TryLock takes the lock of cell k, or returns ErrLocked (wrapped, with the
// holder) if a live process holds it. A lock left by a dead process on this
// host, or whose heartbeat is older than LockStale, is taken over.
func (s *Store) TryLock(k Key) (*Lock, error) {
	path := s.lockPath(k)
	me := lockInfo{PID: os.Getpid(), Host: hostname(), Boot: bootID(), Start: procStart(os.Getpid())}
	b, _ := json.Marshal(me)
	for attempt := 0; attempt < 3; attempt++ {
		f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err == nil {
			_, werr := f.Write(b)
			cerr := f.Close()
			if werr != nil || cerr != nil {
				os.Remove(path)
				return nil, fmt.Errorf("lock %s: %w", k.Short(), errors.Join(werr, cerr))
			}
			l := &Lock{path: path, stop: make(chan struct{}), done: make(chan struct{})}
			go l.heartbeat()
			return l, nil
		}
		if !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("lock %s: %w", k.Short(), err)
		}
		holder, alive := s.lockAlive(path, me)
		if alive {
			return nil, &LockedError{Key: k, Holder: holder}
		}
		// Take over: rename the stale lock away first, so that of two
		// processes taking it over at once only one removes it.
		stale := path + ".stale." + strconv.Itoa(me.PID)
		if err := os.Rename(path, stale); err == nil {
			os.Remove(stale)
		}
	}
	return nil, &LockedError{Key: k, Holder: "contended: taken over by another process at once"}
}

// lockAlive reports whether the lock at path is held by a live process.
func (s *Store) lockAlive(path string, me lockInfo) (string, bool) {
	fi, err := os.Stat(path)
	if err != nil {
		return "", false // vanished: retry
	}
	b, err := os.ReadFile(path)
	var li lockInfo
	if err != nil || json.Unmarshal(b, &li) != nil {
		// Being written right now, or garbage. Young: assume alive.
		return "an unreadable lock file", s.now().Sub(fi.ModTime()) < lockUnreadableGrace
	}
	holder := fmt.Sprintf("pid %d on %s", li.PID, li.Host)
	if li.Host == me.Host && li.Boot == me.Boot {
		if !processAlive(li.PID) {
			return holder, false
		}
		// The PID lives; is it still the holder?
		if li.Start != "" {
			if now := procStart(li.PID); now != "" && now != li.Start {
				return holder + " (that PID is now another process)", false
			}
		}
		return holder, true
	}
	return holder, s.now().Sub(fi.ModTime()) < LockStale
}

func (l *Lock) heartbeat() {
	defer close(l.done)
	t := time.NewTicker(LockStale / 4)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case now := <-t.C:
			os.Chtimes(l.path, now, now)
		}
	}
}

// Unlock releases the lock.
func (l *Lock) Unlock() {
	close(l.stop)
	<-l.done
	os.Remove(l.path)
}

func processAlive(pid int) bool {
	if pid <= 0 {
		return false
	}
	err := syscall.Kill(pid, 0)
	if err == nil || errors.Is(err, syscall.EPERM) {
		// A zombie still answers kill(0); check its state.
		b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
		if err == nil {
			// Field 3, after the parenthesised command name.
			for i := len(b) - 1; i >= 0; i-- {
				if b[i] == ')' {
					if i+2 < len(b) && b[i+2] == 'Z' {
						return false
					}
					break
				}
			}
		}
		return true
	}
	return false
}

// procStart is process pid's start time (field 22 of /proc/<pid>/stat,
// clock ticks after boot), or "" when /proc does not say.
func procStart(pid int) string {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return ""
	}
	// The fields after the command name, which is in parentheses and may
	// hold spaces: state is field 3, starttime field 22.
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 20 {
		return ""
	}
	return f[19]
}

func hostname() string {
	h, err := os.Hostname()
	if err != nil {
		return "unknown"
	}
	return h
}

func bootID() string {
	b, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	return string(b)
}

// Hostname is the host name recorded in provenance and locks.
func Hostname() string { return hostname() }
