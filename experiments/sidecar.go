package experiments

import (
	"encoding/json"
	"fmt"
	"os"

	"repro/stages"
)

// ReadTableSidecar reads a table's committed sidecar
// (paper/tables/<table>.ids.json): every number of the table with its ID,
// place, text and the cells and digests it came from.
func ReadTableSidecar(path string) (*stages.Sidecar, error) {
	return readJSON[stages.Sidecar](path)
}

// ReadFigureSidecar reads a figure's committed sidecar
// (paper/figures/<name>.ids.json): every plotted point with its ID, seeds
// and digests.
func ReadFigureSidecar(path string) (*stages.FigureSidecar, error) {
	return readJSON[stages.FigureSidecar](path)
}

// readJSON decodes a JSON file; a decoding error names the file.
func readJSON[T any](path string) (*T, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}
