package experiments

import (
	"strings"
	"testing"

	"repro/stages"
)

// releaseConfig adds a CIFAR-100 experiment and a declared CIFAR-100
// release (its table at line 57) to matrixConfig.
var releaseConfig = matrixConfig + "\n" + TestExperiments(TestExperiment{Name: "c100", Dataset: "cifar100", Protocols: []string{"sequential"}}) + `[release.cifar100.sha256]
"train.bin" = "1111111111111111111111111111111111111111111111111111111111111111"
"test.bin" = "2222222222222222222222222222222222222222222222222222222222222222"
`

// TestDeclaredRelease: a declared release's digests are in its download
// cell's params (so in its key, and every cell downstream), sorted by
// member; other data sets' download cells keep their params.
func TestDeclaredRelease(t *testing.T) {
	t.Parallel()
	g := mustBuild(t, releaseConfig, "paper")
	want := "test.bin 2222222222222222222222222222222222222222222222222222222222222222,train.bin 1111111111111111111111111111111111111111111111111111111111111111"
	if got := strings.Join(g.Cell("download/cifar100").Params.(*stages.DownloadParams).Members, ","); got != want {
		t.Errorf("download/cifar100 members %q, want %q", got, want)
	}
	if got := g.Cell("download/mnist").Params.(*stages.DownloadParams).Members; got != nil {
		t.Errorf("download/mnist members %q, want none", got)
	}
}

func TestDeclaredReleaseErrors(t *testing.T) {
	t.Parallel()
	cases := []struct{ from, to, want string }{
		{"[release.cifar100.sha256]", "[release.svhn.sha256]", `pipeline.toml:57: release.svhn: unknown data set "svhn"`},
		{"[release.cifar100.sha256]", "[release.mnist.sha256]", `release.mnist: mnist: a declared release needs an archive release`},
		{`"test.bin" = "2222`, `"tests.bin" = "2222`, `release.cifar100: cifar100: declared release lacks member test.bin`},
		{`= "1111111111111111111111111111111111111111111111111111111111111111"`, `= "11"`, `member train.bin: "11" is not a hex SHA-256`},
		{`"train.bin" = "1111`, `"meta.txt" = "3333333333333333333333333333333333333333333333333333333333333333"` + "\n" + `"train.bin" = "1111`, `names 3 members, the data set has 2`},
	}
	for _, c := range cases {
		t.Run(c.want, func(t *testing.T) {
			t.Parallel()
			_, err := loadMatrix(strings.Replace(releaseConfig, c.from, c.to, 1))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("err %v, want %q", err, c.want)
			}
		})
	}
}
