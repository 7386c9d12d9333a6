package pipeline

import (
	"errors"
	"strings"
	"testing"
)

const goodConfig = `# a comment
[settings]
store = "st"
default_profile = "paper"

[profile.paper]
seeds = [0, 1, 2]
split_seeds = [1234]

[profile.smoke]
seeds = [0]
split_seeds = [1234]
[profile.smoke.local]
epochs = 1

[[experiment]]
name = "full"
learner = "local"
dataset = "mnist"
protocols = ["sequential", "static"]
[experiment.local]
eta = 0.02
`

func TestParseConfigGood(t *testing.T) {
	t.Parallel()
	c, err := ParseConfig("pipeline.toml", goodConfig)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Experiments) != 1 || c.Experiments[0].Line() != 16 || c.Experiments[0].Eval != "heldout" {
		t.Fatalf("experiments = %+v", c.Experiments[0])
	}
	var sub subParams
	if err := c.Decode(c.Experiments[0].Local, &sub); err != nil || sub.Eta != 0.02 {
		t.Fatalf("Decode = %+v, %v", sub, err)
	}
	var sm subParams
	c.Decode(c.Profiles["smoke"].Local, &sm)
	if err := c.Finish(); err == nil || !strings.Contains(err.Error(), "epochs") {
		// subParams has no epochs field: Finish must name it.
		t.Fatalf("Finish = %v, want unknown key profile.smoke.local.epochs", err)
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, edit, want string
		line             int
	}{
		{"unknown top key", "[settings]\nstore = \"st\"\nbogus = 1", "settings.bogus", 4},
		{"wrong type", "seeds = [0, 1, 2]", "", 0},
		{"syntax", "[[experiment]]\nname = ", "", 0},
		{"missing learner", "learner = \"local\"", "learner", 16},
		{"inline table key", "[experiment.local]\neta = 0.02", "experiment.local.rate", 22},
		{"bad protocol", `protocols = ["sequential", "static"]`, "protocols", 16},
		{"unknown profile", `default_profile = "paper"`, "default_profile", 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			src := goodConfig
			switch tc.name {
			case "unknown top key":
				src = strings.Replace(src, "[settings]\nstore = \"st\"", tc.edit, 1)
			case "wrong type":
				src = strings.Replace(src, tc.edit, `seeds = "zero"`, 1)
			case "syntax":
				src += "\n[[experiment]]\nname = \n"
			case "missing learner":
				src = strings.Replace(src, tc.edit, "", 1)
			case "inline table key":
				src = strings.Replace(src, tc.edit, "[experiment.local]\nrate = { x = 1 }", 1)
			case "bad protocol":
				src = strings.Replace(src, tc.edit, `protocols = ["sideways"]`, 1)
			case "unknown profile":
				src = strings.Replace(src, tc.edit, `default_profile = "nope"`, 1)
			}
			c, err := ParseConfig("p.toml", src)
			if err == nil {
				var prof struct {
					Epochs int `toml:"epochs"`
				}
				c.Decode(c.Profiles["smoke"].Local, &prof)
				for _, e := range c.Experiments {
					var sub subParams
					c.Decode(e.Local, &sub)
				}
				err = c.Finish()
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error = %v (%T), want *ConfigError", err, err)
			}
			if ce.Line == 0 {
				t.Errorf("error %q has no line", err)
			}
			if tc.line != 0 && ce.Line != tc.line {
				t.Errorf("error %q at line %d, want %d", err, ce.Line, tc.line)
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.HasPrefix(err.Error(), "p.toml:") {
				t.Errorf("error %q does not name %q and the file", err, tc.want)
			}
		})
	}
}

func FuzzParseConfig(f *testing.F) {
	f.Add(goodConfig)
	f.Add("[settings]\n")
	f.Add("[[experiment]]\nname=1")
	f.Fuzz(func(t *testing.T, src string) {
		c, err := ParseConfig("f.toml", src)
		if err != nil {
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("error %v is not a *ConfigError", err)
			}
			return
		}
		for _, e := range c.Experiments {
			var sub subParams
			c.Decode(e.Local, &sub)
		}
		c.Finish()
	})
}
