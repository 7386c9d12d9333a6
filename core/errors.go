package core

import "errors"

// ErrStopped is returned by a learner whose Hooks.Stop asked it to stop.
var ErrStopped = errors.New("run stopped")
