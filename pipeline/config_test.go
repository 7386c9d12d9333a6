package pipeline

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/BurntSushi/toml"
)

const goodConfig = `# a comment
[settings]
store = "st"
default_profile = "paper"

[executor.slurm]
jobs = 7

[[item]]
name = "a"
[item.sub]
eta = 0.02

[[item]]
name = "b"
max = 3
[item.sub]
eta = 0.5
hidden = [1, 2]

[[group]]
name = "g"
[[group.row]]
x = 1
[[group.row]]
x = 2
[[group]]
name = "h"
[[group.row]]
x = 3
`

type item struct {
	Name string         `toml:"name"`
	Max  int            `toml:"max"`
	Sub  toml.Primitive `toml:"sub"`
}

func decodeItems(c *Config) ([]item, error) {
	p, _ := c.Section("item")
	var prims []toml.Primitive
	if err := c.DecodeAt(p, &prims, "item"); err != nil {
		return nil, err
	}
	var out []item
	for i, prim := range prims {
		var it item
		if err := c.DecodeAt(prim, &it, fmt.Sprintf("item[%d]", i)); err != nil {
			return nil, err
		}
		var sub subParams
		if err := c.DecodeAt(it.Sub, &sub, fmt.Sprintf("item[%d].sub", i)); err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, nil
}

func TestParseConfigGood(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig("pipeline.toml", goodConfig)
	if err != nil {
		t.Fatal(err)
	}
	if c.Settings.Store != "st" || c.Settings.DefaultProfile != "paper" || c.Executor.Slurm.Jobs != 7 {
		t.Fatalf("settings %+v, executor %+v", c.Settings, c.Executor)
	}
	items, err := decodeItems(c)
	if err != nil || len(items) != 2 || items[1].Max != 3 {
		t.Fatalf("items %+v, %v", items, err)
	}
	if err := c.Finish(); err == nil || !strings.Contains(err.Error(), "group") {
		// Nothing decoded [[group]]: Finish must name it.
		t.Fatalf("Finish = %v, want unknown key group...", err)
	}
	for key, line := range map[string]int{
		"item[0]": 9, "item[1]": 14, "item[1].max": 16, "item[1].sub.hidden": 19, "item.sub": 11,
		"group[0].row[1]": 25, "group[1].row[0].x": 30, "group[1]": 27, "settings.store": 3,
	} {
		if got := c.KeyLine(key); got != line {
			t.Errorf("KeyLine(%s) = %d, want %d", key, got, line)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, from, to, want string
		line                 int
	}{
		{"unknown settings key", "store = \"st\"", "store = \"st\"\nbogus = 1", "settings.bogus", 4},
		{"settings type", `store = "st"`, `store = 3`, "settings.store", 3},
		{"syntax", "max = 3", "max = ", "", 16},
		// The decoder names the key without its array index; DecodeAt
		// puts it back, so the error is at the edited element's line.
		{"type error in the first element", `name = "a"`, `name = 1`, "item[0].name", 10},
		{"type error in a middle element", "max = 3", `max = "3"`, "item[1].max", 16},
		{"type error in a sub-table", "hidden = [1, 2]", `hidden = "x"`, "item[1].sub.hidden", 19},
		{"unknown key in an element", "max = 3", "max = 3\nmux = 1", "item.mux", 17},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			src := strings.Replace(goodConfig, tc.from, tc.to, 1)
			c, err := ParseConfig("p.toml", src)
			if err == nil {
				if _, err = decodeItems(c); err == nil {
					p, _ := c.Section("group")
					var g []struct {
						Name string `toml:"name"`
						Row  []struct {
							X int `toml:"x"`
						} `toml:"row"`
					}
					c.DecodeAt(p, &g, "group")
					err = c.Finish()
				}
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error = %v (%T), want *ConfigError", err, err)
			}
			if ce.Line != tc.line {
				t.Errorf("error %q at line %d, want %d", err, ce.Line, tc.line)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "p.toml:") {
				t.Errorf("error %q does not name %q and the file", err, tc.want)
			}
		})
	}
}

// FuzzParseConfig: parsing never panics, every error is a *ConfigError,
// and every key the index lists is found again by KeyLine at its line or
// an earlier one.
func FuzzParseConfig(f *testing.F) {
	f.Add(goodConfig)
	f.Add("[settings]\n")
	f.Add("[[item]]\nname=1")
	f.Add("[[a.b]]\n[[a]]\n[a.b]\nx=1")
	f.Fuzz(func(t *testing.T, src string) {
		c, err := ParseConfig("f.toml", src)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			return
		}
		for _, k := range c.keys {
			if l := c.KeyLine(k.path); l == 0 || l > k.line {
				t.Fatalf("KeyLine(%q) = %d, listed at line %d", k.path, l, k.line)
			}
		}
		decodeItems(c)
		c.Finish()
	})
}

// TestLoadConfigBounded re-runs the review's probe (plan --config
// /dev/zero ran out of memory): a configuration is read through a size
// limit, whatever the file is.
func TestLoadConfigBounded(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	big := filepath.Join(dir, "big.toml")
	if err := os.WriteFile(big, []byte("# "+strings.Repeat("x", MaxConfigBytes)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, path, want string }{
		{"endless device", "/dev/zero", "/dev/zero: more than the 16 MiB such a file may have"},
		{"large file", big, "bytes, more than the 16 MiB such a file may have"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := os.Stat(tc.path); err != nil {
				t.Skip(err)
			}
			_, err := LoadConfig(tc.path)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("LoadConfig(%s) = %v, want an error saying %q", tc.path, err, tc.want)
			}
		})
	}
	ok := filepath.Join(dir, "ok.toml")
	os.WriteFile(ok, []byte("[settings]\nstore = \"s\"\n"), 0o644)
	if _, err := ReadFileLimit(ok, MaxConfigBytes); err != nil {
		t.Fatalf("ReadFileLimit of a small file: %v", err)
	}
}
