package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
)

// Digest names a blob: the SHA-256 of its uncompressed content.
type Digest [32]byte

// Key names a cell: the SHA-256 of its canonical description (the key text
// of pipeline.KeyDesc, which `repro key CELL` prints). It is a distinct type
// from Digest so that a cell key is never taken for a blob name.
type Key [32]byte

// Sum returns the digest of data.
func Sum(data []byte) Digest { return sha256.Sum256(data) }

// String returns the full lower-case hex form.
func (d Digest) String() string { return hex.EncodeToString(d[:]) }

// Short returns the first 12 hex digits, for humans.
func (d Digest) Short() string { return d.String()[:12] }

// IsZero reports whether d is the zero digest.
func (d Digest) IsZero() bool { return d == Digest{} }

// MarshalText encodes d as hex.
func (d Digest) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText parses a full hex digest.
func (d *Digest) UnmarshalText(b []byte) error {
	v, err := parseHex32(string(b))
	*d = Digest(v)
	return err
}

// String returns the full lower-case hex form.
func (k Key) String() string { return hex.EncodeToString(k[:]) }

// Short returns the first 12 hex digits, for humans.
func (k Key) Short() string { return k.String()[:12] }

// IsZero reports whether k is the zero key.
func (k Key) IsZero() bool { return k == Key{} }

// MarshalText encodes k as hex.
func (k Key) MarshalText() ([]byte, error) { return []byte(k.String()), nil }

// UnmarshalText parses a full hex key.
func (k *Key) UnmarshalText(b []byte) error {
	v, err := parseHex32(string(b))
	*k = Key(v)
	return err
}

// ParseDigest parses a full 64-digit hex digest.
func ParseDigest(s string) (Digest, error) { v, err := parseHex32(s); return Digest(v), err }

// ParseKey parses a full 64-digit hex key.
func ParseKey(s string) (Key, error) { v, err := parseHex32(s); return Key(v), err }

func parseHex32(s string) ([32]byte, error) {
	var v [32]byte
	if len(s) != 64 {
		return v, fmt.Errorf("id %q: want 64 hex digits, have %d", s, len(s))
	}
	if _, err := hex.Decode(v[:], []byte(s)); err != nil {
		return v, fmt.Errorf("id %q: %w", s, err)
	}
	return v, nil
}
