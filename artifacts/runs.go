package artifacts

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
)

// RunFormat opens every run record.
const RunFormat = "repro-run v1"

// RunRecord is what the scheduler saw of the last run of a profile that
// executed anything: how long it took, how many cells it ran at once, and
// how much of that capacity the cells kept busy. Idle core-seconds are
// Wall x Jobs - Busy: time a worker slot had nothing ready to run (or
// waited on the scheduler). It feeds `repro status`; no key depends on it.
type RunRecord struct {
	Format   string    `json:"format"`
	Profile  string    `json:"profile"`
	RunID    string    `json:"run"`
	Executor string    `json:"executor"`
	Jobs     int       `json:"jobs"`
	Start    time.Time `json:"start"`
	End      time.Time `json:"end"`
	WallSecs float64   `json:"wall_seconds"`
	// BusySecs sums the wall time of every job from dispatch to result.
	BusySecs float64 `json:"busy_seconds"`
	// CPUSecs sums the CPU seconds the executed cells' manifests record.
	CPUSecs  float64 `json:"cpu_seconds"`
	Executed int     `json:"executed"`
	Cached   int     `json:"cached"`
	Failed   int     `json:"failed"`
}

// IdleSecs is the worker capacity the run left unused, in core-seconds.
func (r *RunRecord) IdleSecs() float64 { return r.WallSecs*float64(r.Jobs) - r.BusySecs }

func (s *Store) runPath(profile string) string {
	return filepath.Join(s.root, "runs", safeName(profile)+".json")
}

// PutLastRun records r as the last run of its profile.
func (s *Store) PutLastRun(r *RunRecord) error {
	r.Format = RunFormat
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return WriteFile(s.runPath(r.Profile), append(b, '\n'), 0o644)
}

// GetLastRun returns the last run recorded for profile (ErrNotFound if none).
func (s *Store) GetLastRun(profile string) (*RunRecord, error) {
	b, err := readLimited(s.runPath(profile))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("run record %s: %w", profile, ErrNotFound)
	}
	if err != nil {
		return nil, err
	}
	r := new(RunRecord)
	if err := decodeRecord(b, RunFormat, r); err != nil {
		return nil, fmt.Errorf("run record %s: %w", profile, err)
	}
	return r, nil
}

// WalkManifests calls fn with every finished cell's manifest in the store.
// Records that do not parse are skipped (verify reports them).
func (s *Store) WalkManifests(fn func(*Manifest) error) error {
	return walkFiles(filepath.Join(s.root, "cells"), ".json", func(path, name string) error {
		b, err := readLimited(path)
		if err != nil {
			return nil
		}
		m, err := DecodeManifest(b)
		if err != nil {
			return nil
		}
		return fn(m)
	})
}
