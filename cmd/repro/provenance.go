package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"repro/artifacts"
	"repro/internal/ledgerprov"
)

func cmdProvenance() *command {
	var g globalFlags
	fs := newFlags("provenance", &g)
	remote := nonEmpty(fs, "remote", "", "the `remote` whose records to count (default: the only one of settings.remotes)")
	write := fs.Bool("write", false, "also write the statement into the remote's README (its generated section)")
	check := fs.Bool("check", false, "exit 1 when the remote's README states anything else")
	return &command{
		name: "provenance", usage: "[--profile P] [--remote NAME] [--write | --check]",
		short: "which commits computed the records a remote holds for the profile",
		long: `Provenance counts the code behind the results ledger: over the records of a
remote (the ledger, paper/cells) that the profile's plan reaches, the
commit each record names (provenance.revision), with the records per stage,
how many of them a recompute wrote ('repro verify --recompute --push': the
cell was re-run and its outputs were bit-identical to the record's it
replaced) and how many name no commit (revision unknown; there should be
none). When every record names one clean commit it says so in one sentence.

--write puts the statement into the remote's README, between two marker
lines ('make ledger-readme' runs it after the ledger changed); --check
exits 1 when the README's section differs from the records, so that the
README cannot state a provenance the records do not have.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 || (*write && *check) {
				return usageErr("provenance takes no arguments, and --write or --check, not both")
			}
			w, err := openWorkspace(e, &g)
			if err != nil {
				return err
			}
			r, _, err := w.remoteFlag(*remote)
			if err != nil {
				return err
			}
			t, err := tallyRemote(ctx, w, r)
			if err != nil {
				return err
			}
			section := ledgerprov.Section(t)
			fmt.Fprint(e.stdout, t.Statement())
			readme := filepath.Join(r.Root(), "README")
			if !*write && !*check {
				return nil
			}
			b, err := os.ReadFile(readme)
			if err != nil {
				return fmt.Errorf("remote %s: %w (a push writes it)", r.Name(), err)
			}
			if *check {
				stated, ok, err := ledgerprov.Stated(string(b))
				switch {
				case err != nil:
					return fmt.Errorf("%s: %w", readme, err)
				case !ok:
					return &exitError{code: 1, err: fmt.Errorf("%s states no provenance (no %q line): 'make ledger-readme' writes it", readme, ledgerprov.Begin)}
				case stated != section:
					return &exitError{code: 1, err: fmt.Errorf("%s states another provenance than its records (above): 'make ledger-readme' rewrites it", readme)}
				}
				fmt.Fprintf(e.stdout, "%s states this\n", readme)
				return nil
			}
			out, err := ledgerprov.Splice(string(b), section)
			if err != nil {
				return fmt.Errorf("%s: %w", readme, err)
			}
			if out == string(b) {
				fmt.Fprintf(e.stdout, "%s already states this\n", readme)
				return nil
			}
			if err := artifacts.WriteFile(readme, []byte(out), 0o644); err != nil {
				return err
			}
			fmt.Fprintf(e.stdout, "wrote this into %s\n", readme)
			return nil
		},
	}
}

// tallyRemote counts the sources of the records r holds for the cells of
// the workspace's plan.
func tallyRemote(ctx context.Context, w *workspace, r artifacts.Remote) (*ledgerprov.Tally, error) {
	p, err := w.plan()
	if err != nil {
		return nil, err
	}
	var ms []*artifacts.Manifest
	for _, pc := range p.Cells {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if !pc.KeyKnown {
			continue
		}
		m, err := r.Manifest(pc.Key)
		if errors.Is(err, artifacts.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("remote %s: %s: %w", r.Name(), pc.Cell.ID, err)
		}
		ms = append(ms, m)
	}
	return ledgerprov.Of(w.profile, ms), nil
}
