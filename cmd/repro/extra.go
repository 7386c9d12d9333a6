package main

import "context"

// extraCommands are the paper-level commands (show, check, train).
func extraCommands() []*command { return nil }

// whyNumber resolves a rendered number (table:row:column or its ID); it
// reports whether arg was one.
func whyNumber(ctx context.Context, e *env, w *workspace, arg string) (bool, error) {
	return false, nil
}

// afterRun materialises what a run rendered (the paper's tables) into the
// work tree; partial is true for a run restricted by --only.
func afterRun(ctx context.Context, e *env, w *workspace, partial bool) error {
	return nil
}
