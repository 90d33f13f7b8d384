package models

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestSharedManifestsLoad(t *testing.T) {
	// Copies of ../shared/encoders/*.json, which must load as they are.
	paths, _ := filepath.Glob("../testdata/encoders/fmnist-*.json")
	// The originals too, where ../shared is present (never required).
	shared, _ := filepath.Glob("../../shared/encoders/fmnist-*.json")
	paths = append(paths, shared...)
	if len(paths) < 2 {
		t.Fatalf("found %d manifests", len(paths))
	}
	for _, p := range paths {
		m, err := LoadManifest(p)
		if err != nil {
			t.Fatal(err)
		}
		if m.Input.Layout != "NCHW" || m.Input.Channels != 3 || m.Input.Height != 32 || m.Output.Dim == 0 || m.Input.Crop != "none" {
			t.Errorf("%s: %+v", p, m)
		}
		if m.Input.Scale != 1.0/255 || m.Input.Mean[2] != 0.286 || m.Input.Std[0] != 0.353 || m.SHA256 == "" {
			t.Errorf("%s: input %+v", p, m.Input)
		}
	}
}

func TestRepositoryManifestsLoad(t *testing.T) {
	for _, p := range []string{"demo/fmnist-cnn.json", "../testdata/encoders/tiny-cnn.json", "../testdata/encoders/tiny-vit.json", "../testdata/encoders/tiny-fp16.json"} {
		m, err := LoadManifest(p)
		if err != nil {
			t.Fatal(err)
		}
		onnx := filepath.Join(filepath.Dir(p), m.File)
		if _, err := m.CheckFile(onnx); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}

func TestManifestErrors(t *testing.T) {
	base := `{"name": "x", "input": {"layout": "NCHW", "channels": 3, "height": 8, "width": 8}, "output": {"pool": "none"}}`
	cases := []struct {
		json, want string
	}{
		{`{"name": "x", "inptu": {}}`, `unknown key "inptu"`},
		{strings.Replace(base, `"width": 8`, `"width": 8, "mena": [0.5]`, 1), `unknown key "mena"`},
		{strings.Replace(base, `"channels": 3`, `"channels": 4`, 1), "input.channels 4"},
		{strings.Replace(base, `"NCHW"`, `"CHW"`, 1), `input.layout "CHW"`},
		{strings.Replace(base, `"none"}`, `"max"}`, 1), `output.pool "max"`},
		{strings.Replace(base, `"width": 8`, `"width": 8, "mean": [0.1, 0.2]`, 1), "need 3 values"},
		{strings.Replace(base, `"width": 8`, `"width": 8, "std": [0, 1, 1]`, 1), "std must be positive"},
		{strings.Replace(base, `"width": 8`, `"width": 8, "crop": "center", "crop_pct": 2`, 1), "input.crop_pct 2"},
		{strings.Replace(base, `"width": 8`, `"width": "8"`, 1), `key "input.width": expected int`},
		{`{"name": "x",`, "not valid JSON"},
		{strings.Replace(base, `"name": "x"`, `"name": "x", "basis": {"sha256": "ab"}`, 1), "basis.file"},
		{strings.Replace(base, `"name": "x"`, `"name": "x", "basis": {"file": "b.arrow", "sha256": "ab"}`, 1), `basis.sha256 "ab"`},
		{strings.Replace(base, `"name": "x"`, `"name": "x", "basis": {"file": "b.arrow", "path": "c"}`, 1), `unknown key "path"`},
	}
	for _, c := range cases {
		_, err := ParseManifest([]byte(c.json))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want %q", c.json, err, c.want)
		}
	}
	m, err := ParseManifest([]byte(strings.Replace(base, `"width": 8`, `"width": 8, "crop": "center"`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if m.Input.ResizeSize != 9 || m.Input.CropPct != 0.875 || m.Input.Resize != "bilinear" {
		t.Errorf("center-crop defaults: %+v", m.Input)
	}
	// A basis file is relative to the manifest, unless absolute.
	m, err = ParseManifest([]byte(strings.Replace(base, `"name": "x"`, `"name": "x", "basis": {"file": "b.arrow", "sha256": "`+strings.Repeat("AB", 32)+`"}`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if p := m.BasisPath("/enc/x.json"); p != "/enc/b.arrow" || m.Basis.SHA256 != strings.Repeat("ab", 32) {
		t.Errorf("basis %s, sha256 %s", p, m.Basis.SHA256)
	}
	if m.Basis.File = "/data/b.arrow"; m.BasisPath("/enc/x.json") != "/data/b.arrow" {
		t.Errorf("an absolute basis: %s", m.BasisPath("/enc/x.json"))
	}
	if m.Basis = nil; m.BasisPath("/enc/x.json") != "" {
		t.Errorf("no basis: %q", m.BasisPath("/enc/x.json"))
	}
}

func TestPresets(t *testing.T) {
	for _, n := range PresetNames() {
		m, err := Preset(n)
		if err != nil {
			t.Fatal(err)
		}
		if m.Input.Crop != "center" || m.Input.ResizeSize < m.Input.Height {
			t.Errorf("%s: %+v", n, m.Input)
		}
	}
	if m, _ := Preset("timm-vit-base-patch16-224"); m.Input.ResizeSize != 248 {
		t.Errorf("timm crop_pct 0.9 of 224 should resize to 248, got %d", m.Input.ResizeSize)
	}
	if _, err := Preset("resnet-9000"); err == nil || !strings.Contains(err.Error(), "known:") {
		t.Errorf("unknown preset: %v", err)
	}
}

func TestCheckFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "m.onnx")
	os.WriteFile(p, []byte("model bytes"), 0o644)
	m := &Manifest{SHA256: strings.Repeat("0", 64)}
	if _, err := m.CheckFile(p); err == nil || !strings.Contains(err.Error(), "wrong file or wrong manifest") {
		t.Errorf("hash mismatch: %v", err)
	}
	m.SHA256 = ""
	if sum, err := m.CheckFile(p); err != nil || len(sum) != 64 {
		t.Errorf("no hash in manifest: %q %v", sum, err)
	}
}
