package pipeline

import (
	"fmt"
	"sort"
)

// Cell is one node of the DAG: one stage applied to resolved params and to
// the outputs of its input cells.
type Cell struct {
	// ID is the cell's human name, unique in a graph, "stage/..." e.g.
	// "train/full/sequential/split1234/seed3". It is not part of the key.
	ID     string
	Stage  *Stage
	Params any // the pointer type Stage.NewParams returns, fully resolved
	Inputs []CellInput
	// Tables lists the rendered tables this cell feeds (for status).
	Tables []string
	// Mem is the most memory the cell needs while it runs, in bytes,
	// estimated from its shapes by whoever builds it; 0 = no estimate (a
	// small cell: DefaultCellMem). Not part of the key.
	Mem int64
}

// CellInput binds an input name of a cell to an upstream cell.
type CellInput struct {
	Name string
	Cell *Cell
}

// Graph is a validated DAG of cells in topological order.
type Graph struct {
	Cells []*Cell
	byID  map[string]*Cell
	// Stages are the stages of the graph's cells, by name.
	Stages map[string]*Stage
}

// NewGraph checks that IDs are unique, that every input is in the graph and
// that there is no cycle, and orders the cells so that every cell comes
// after its inputs (ties broken by ID, so the order is deterministic).
func NewGraph(cells []*Cell) (*Graph, error) {
	g := &Graph{byID: make(map[string]*Cell, len(cells)), Stages: map[string]*Stage{}}
	for _, c := range cells {
		if c.Stage == nil {
			return nil, fmt.Errorf("cell %s: no stage", c.ID)
		}
		if _, dup := g.byID[c.ID]; dup {
			return nil, fmt.Errorf("cell %s: defined twice", c.ID)
		}
		g.byID[c.ID] = c
		if prev, ok := g.Stages[c.Stage.Name]; ok && prev != c.Stage {
			return nil, fmt.Errorf("cell %s: two stages named %s", c.ID, c.Stage.Name)
		}
		g.Stages[c.Stage.Name] = c.Stage
	}
	indeg := make(map[*Cell]int, len(cells))
	users := make(map[*Cell][]*Cell)
	for _, c := range cells {
		names := map[string]bool{}
		for _, in := range c.Inputs {
			if names[in.Name] {
				return nil, fmt.Errorf("cell %s: input %s bound twice", c.ID, in.Name)
			}
			names[in.Name] = true
			if g.byID[in.Cell.ID] != in.Cell {
				return nil, fmt.Errorf("cell %s: input %s: cell %s is not in the graph", c.ID, in.Name, in.Cell.ID)
			}
			indeg[c]++
			users[in.Cell] = append(users[in.Cell], c)
		}
	}
	var ready []*Cell
	for _, c := range cells {
		if indeg[c] == 0 {
			ready = append(ready, c)
		}
	}
	for len(ready) > 0 {
		sort.Slice(ready, func(i, j int) bool { return ready[i].ID < ready[j].ID })
		c := ready[0]
		ready = ready[1:]
		g.Cells = append(g.Cells, c)
		for _, u := range users[c] {
			if indeg[u]--; indeg[u] == 0 {
				ready = append(ready, u)
			}
		}
	}
	if len(g.Cells) != len(cells) {
		return nil, fmt.Errorf("the cells have a cycle")
	}
	return g, nil
}

// Cell returns the cell with the given ID, or nil.
func (g *Graph) Cell(id string) *Cell { return g.byID[id] }

// DefaultCellMem is the memory counted for a cell without an estimate
// (Cell.Mem 0): a train cell of the paper's default system was measured at
// about 0.3 GB in flight (RSS growth per cell at a large -j).
const DefaultCellMem int64 = 512 << 20

// MaxMem is the largest memory estimate among the cells want selects (all
// when want is nil), at least DefaultCellMem.
func (g *Graph) MaxMem(want func(*Cell) bool) int64 {
	m := DefaultCellMem
	for _, c := range g.Cells {
		if (want == nil || want(c)) && c.Mem > m {
			m = c.Mem
		}
	}
	return m
}
