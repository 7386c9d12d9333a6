package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// Ref records the key a cell ID had when it was last planned under a
// profile. Plans compare against it to say why a cell must run ("config
// changed: train.eta 0.02 -> 0.01"); nothing else depends on it.
type Ref struct {
	Profile string `json:"profile"`
	CellID  string `json:"cell"`
	Key     Key    `json:"key"`
}

func (s *Store) refPath(profile, cellID string) string {
	h := sha256.Sum256([]byte(cellID))
	return filepath.Join(s.root, "refs", safeName(profile), hex.EncodeToString(h[:16])+".json")
}

func safeName(s string) string {
	return strings.Map(func(r rune) rune {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			return r
		}
		return '_'
	}, s)
}

// PutRef records that cellID had key k under profile.
func (s *Store) PutRef(profile, cellID string, k Key) error {
	b, _ := json.Marshal(Ref{Profile: profile, CellID: cellID, Key: k})
	return WriteFile(s.refPath(profile, cellID), append(b, '\n'), 0o644)
}

// GetRef returns the key cellID had when last planned under profile.
func (s *Store) GetRef(profile, cellID string) (Key, error) {
	b, err := os.ReadFile(s.refPath(profile, cellID))
	if errors.Is(err, fs.ErrNotExist) {
		return Key{}, ErrNotFound
	}
	if err != nil {
		return Key{}, err
	}
	var r Ref
	if err := json.Unmarshal(b, &r); err != nil || r.CellID != cellID {
		return Key{}, fmt.Errorf("ref %s: %w", cellID, ErrCorrupt)
	}
	return r.Key, nil
}
