package kernelpath

import (
	"os"
	"testing"

	"golang.org/x/sys/cpu"
)

func TestParse(t *testing.T) {
	for v, want := range map[string]Level{"": AVX512, "auto": AVX512, "avx512": AVX512, "avx2": AVX2, "portable": Portable} {
		if l, err := parse(v); l != want || err != nil {
			t.Errorf("parse(%q) = %v, %v; want %v", v, l, err, want)
		}
	}
	for _, v := range []string{"Portable", "sse", "0"} {
		l, err := parse(v)
		if err == nil || l != Portable {
			t.Errorf("parse(%q) = %v, %v; want portable and an error", v, l, err)
		}
	}
}

func TestPath(t *testing.T) {
	p := Path()
	if !cpu.X86.HasAVX2 && p != Portable {
		t.Errorf("no AVX2: path %v", p)
	}
	if os.Getenv(Env) == "portable" && (p != Portable || Allow(AVX2)) {
		t.Errorf("%s=portable: path %v, AVX2 allowed %v", Env, p, Allow(AVX2))
	}
	if os.Getenv(Env) == "avx2" && (p > AVX2 || Allow(AVX512)) {
		t.Errorf("%s=avx2: path %v, AVX-512 allowed %v", Env, p, Allow(AVX512))
	}
	if built == Portable && (p != Portable || Allow(AVX2)) {
		t.Errorf("purego build: path %v, AVX2 allowed %v", p, Allow(AVX2))
	}
	if !Allow(Portable) {
		t.Error("the portable code is not allowed")
	}
	if CPUModel() == "" {
		t.Error("no CPU model")
	}
	t.Logf("CPU %q, kernel path %v", CPUModel(), p)
}
