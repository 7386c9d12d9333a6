package main

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"

	"repro/pipeline"
)

// machineMemory is the memory cells of this process may use, in bytes:
// REPRO_MEMORY when set (bytes, or a number with K, M, G or T: "16G"),
// else the machine's total (/proc/meminfo); 0 when unknown (no check).
func machineMemory(getenv func(string) string) (int64, error) {
	if v := getenv("REPRO_MEMORY"); v != "" {
		n, err := parseBytes(v)
		if err != nil {
			return 0, fmt.Errorf("REPRO_MEMORY=%q: %v", v, err)
		}
		return n, nil
	}
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, nil
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			kb, err := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			if err == nil {
				return kb << 10, nil
			}
		}
	}
	return 0, nil
}

// parseBytes reads "123", "512M", "16G", "1T" (binary multiples).
func parseBytes(s string) (int64, error) {
	s = strings.TrimSuffix(strings.TrimSuffix(strings.ToUpper(strings.TrimSpace(s)), "IB"), "B")
	shift := 0
	if s != "" {
		switch s[len(s)-1] {
		case 'K':
			shift = 10
		case 'M':
			shift = 20
		case 'G':
			shift = 30
		case 'T':
			shift = 40
		}
	}
	if shift > 0 {
		s = s[:len(s)-1]
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("want a positive size such as 16G")
	}
	return n << shift, nil
}

// capJobs lowers a local run's -j so that the cells in flight fit in
// memory: each may need up to g.MaxMem of the cells the run selects. It
// returns the jobs to use and a note when it lowered them.
func capJobs(jobs int, g *pipeline.Graph, want func(*pipeline.Cell) bool, limit int64) (int, string) {
	if limit <= 0 {
		return jobs, ""
	}
	per := g.MaxMem(want)
	most := int(max(1, limit/per))
	if jobs <= most {
		return jobs, ""
	}
	return most, fmt.Sprintf("-j %d lowered to %d: a cell of this run may need up to %.1f GiB and the machine has %.1f GiB (REPRO_MEMORY sets what cells may use)",
		jobs, most, float64(per)/(1<<30), float64(limit)/(1<<30))
}
