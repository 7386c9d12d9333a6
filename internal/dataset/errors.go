package dataset

import "errors"

// ErrMalformed is wrapped by every decoding error for release files whose
// bytes do not have the documented layout (bad magic, truncated payload,
// labels out of range). Callers test for it with errors.Is.
var ErrMalformed = errors.New("malformed data file")

// ErrChecksum is wrapped by a ChecksumError.
var ErrChecksum = errors.New("checksum mismatch")

// ChecksumError reports a file whose SHA-256 differs from the published one.
type ChecksumError struct {
	File     string // base name of the file
	Source   string // URL or path it came from
	Expected string // published digest, hex
	Actual   string // digest of the bytes received, hex
}

func (e *ChecksumError) Error() string {
	return "file " + e.File + " from " + e.Source + ": sha256 " + e.Actual + ", expected " + e.Expected
}

// Unwrap lets errors.Is(err, ErrChecksum) hold.
func (e *ChecksumError) Unwrap() error { return ErrChecksum }
