package experiments

import (
	"encoding/json"
	"fmt"

	"repro/numbers"
	"repro/pipeline"
)

// ReadTableSidecar reads a table's committed sidecar
// (paper/tables/<table>.ids.json): every number of the table with its ID,
// place, text and the cells and digests it came from.
func ReadTableSidecar(path string) (*numbers.Sidecar, error) {
	return readJSON[numbers.Sidecar](path)
}

// ReadFigureSidecar reads a figure's committed sidecar
// (paper/figures/<name>.ids.json): every plotted point with its ID, seeds
// and digests.
func ReadFigureSidecar(path string) (*numbers.FigureSidecar, error) {
	return readJSON[numbers.FigureSidecar](path)
}

// maxSidecarBytes bounds a committed sidecar: 64 MiB, about 450x the
// largest today (val.ids.json, 140 kB).
const maxSidecarBytes = 64 << 20

// readJSON decodes a JSON file (at most maxSidecarBytes); a decoding error
// names the file.
func readJSON[T any](path string) (*T, error) {
	b, err := pipeline.ReadFileLimit(path, maxSidecarBytes)
	if err != nil {
		return nil, err
	}
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
