package main

// Checks on the module as a whole, which live here because this package's
// tests already read the module's files (repoRoot).

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestNoMachinePaths: no Go file of the module names a directory of one
// machine (/work/..., /home/...) in a string: data come from the project's
// mirror setting only.
func TestNoMachinePaths(t *testing.T) {
	root := repoRoot
	fset := token.NewFileSet()
	files, strs := 0, 0
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		switch {
		case err != nil:
			return err
		case d.IsDir() && path != root && strings.HasPrefix(d.Name(), "."):
			return filepath.SkipDir
		case d.IsDir() || !strings.HasSuffix(path, ".go"):
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		ast.Inspect(f, func(n ast.Node) bool {
			if lit, ok := n.(*ast.BasicLit); ok && lit.Kind == token.STRING {
				strs++
				// The prefixes are assembled so that this file holds no such path itself.
				for _, dir := range []string{"work", "home"} {
					p := `"/` + dir + "/"
					if strings.HasPrefix(lit.Value, p) {
						t.Errorf("%s: machine path %s", fset.Position(lit.Pos()), lit.Value)
					}
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Found nothing only counts if something was looked at: this file
	// alone holds strings, and the module has hundreds of Go files.
	if files < 100 || strs < 1000 {
		t.Errorf("read %d Go files with %d strings under %s, want the module's (>= 100 files)", files, strs, root)
	}
}

// TestMakeTestSetsData: make test gives the real-data tests REPRO_DATA.
func TestMakeTestSetsData(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make not installed")
	}
	cmd := exec.Command("make", "-n", "test")
	cmd.Dir = repoRoot
	out, err := cmd.Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(out), "\n") {
		if strings.Contains(line, " test -count=1") && !strings.Contains(line, "REPRO_DATA=") {
			t.Errorf("make test runs the tests without REPRO_DATA: %s", line)
		}
	}
	if !strings.Contains(string(out), "opt-in") {
		t.Errorf("make test does not list the opt-in tests:\n%s", out)
	}
}
