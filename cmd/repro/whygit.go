package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"

	"repro/artifacts"
)

// earlierFunc returns the builds that produced a record's outputs before
// it, oldest first (none known: nil).
type earlierFunc func(m *artifacts.Manifest) []artifacts.Build

// gitEarlier finds, for a record of a recompute that names no earlier
// build, the earlier versions of its file in a directory remote kept in
// git (the results ledger): a reader of a fresh clone sees which commit
// first computed the outputs. Without git, or outside a repository, it
// finds none.
func (w *workspace) gitEarlier(ctx context.Context) earlierFunc {
	return func(m *artifacts.Manifest) []artifacts.Build {
		for _, r := range w.remotes {
			d, ok := r.(*artifacts.DirRemote)
			if !ok {
				continue
			}
			file := d.ManifestPath(m.Key)
			if _, err := os.Stat(file); err != nil {
				continue
			}
			if bs, err := gitHistory(ctx, file, m); err == nil && len(bs) > 0 {
				return bs
			}
		}
		return nil
	}
}

// gitHistory returns the builds named by the committed versions of the
// record file that record m's key and outputs, oldest first, each once,
// m's own build left out.
func gitHistory(ctx context.Context, file string, m *artifacts.Manifest) ([]artifacts.Build, error) {
	dir, name := filepath.Split(file)
	git := func(args ...string) ([]byte, error) {
		cmd := exec.CommandContext(ctx, "git", append([]string{"-C", dir}, args...)...)
		out, err := cmd.Output()
		if err != nil {
			return nil, fmt.Errorf("git %s: %w", strings.Join(args, " "), err)
		}
		return out, nil
	}
	log, err := git("log", "--format=%H", "--", name)
	if err != nil {
		return nil, err
	}
	commits := strings.Fields(string(log))
	type id struct {
		rev, diff, host, executor string
		end                       int64
		dirty                     bool
	}
	idOf := func(b artifacts.Build) id {
		return id{b.Revision, b.DirtyDiff, b.Host, b.Executor, b.End.UnixNano(), b.Dirty}
	}
	seen := map[id]bool{idOf(m.Provenance.Build()): true}
	var builds []artifacts.Build
	for i := len(commits) - 1; i >= 0; i-- {
		b, err := git("show", commits[i]+":./"+name)
		if err != nil {
			return nil, err
		}
		// Leniently: an older record may carry fields since dropped.
		var old artifacts.Manifest
		if json.Unmarshal(b, &old) != nil || old.Key != m.Key || !reflect.DeepEqual(old.Outputs, m.Outputs) {
			continue
		}
		for _, b := range old.Provenance.History() {
			if !seen[idOf(b)] {
				seen[idOf(b)] = true
				builds = append(builds, b)
			}
		}
	}
	return builds, nil
}
