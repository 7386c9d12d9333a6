package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"repro/artifacts"
	"repro/pipeline"
)

func cmdInit() *command {
	var g globalFlags
	fs := newFlags("init", &g)
	return &command{
		name: "init", usage: "[--store DIR]",
		short: "create the store (even in a directory that holds other files)",
		long: `Init creates the artifact store named by --store, REPRO_STORE or
settings.store. Other commands create a store only where the directory is
missing or empty, and refuse a directory that holds other files; init makes
a store there anyway (its entries go beside the files already present),
unless one of them has a store's name (README, blobs, cells, ...): the store
would take it for its own. An existing store is left as it is.`,
		flags: fs,
		run: func(ctx context.Context, e *env, args []string) error {
			if len(args) > 0 {
				return usageErr("init takes no arguments, got %q", args)
			}
			dir, err := storeDir(e, &g)
			if err != nil {
				return err
			}
			_, statErr := os.Stat(filepath.Join(dir, "README"))
			st, err := artifacts.Open(dir, artifacts.Options{Create: true})
			if err != nil {
				return err
			}
			if statErr == nil {
				fmt.Fprintf(e.stdout, "store %s exists\n", st.Root())
			} else {
				fmt.Fprintf(e.stdout, "created store %s\n", st.Root())
			}
			return nil
		},
	}
}

// storeDir is the store directory --store, REPRO_STORE or the config names
// (the config is read only when the other two are unset).
func storeDir(e *env, g *globalFlags) (string, error) {
	if g.store != "" {
		return g.store, nil
	}
	if d := e.getenv("REPRO_STORE"); d != "" {
		return d, nil
	}
	cfg, err := pipeline.LoadConfig(g.config)
	if err != nil {
		return "", err
	}
	return cfg.StoreDir(e.getenv), nil
}
