package solvers

import (
	"context"
	"math"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
)

// TestMethodsDescribeThemselves: every hyperparameter a method declares is
// documented, its feature map names declared hyperparameters with
// declared defaults, and a fit with no settings records exactly the
// declared defaults (the method reads its description, not a literal of
// its own) and marks them as defaulted.
func TestMethodsDescribeThemselves(t *testing.T) {
	d := blobs(400, 4, 3, 1) // at ε = 4, n·μ ≈ 380: auto chooses dpsgd, registered here
	for _, m := range Methods() {
		seen := map[string]bool{}
		for _, p := range m.Params {
			if p.Name == "" || p.Doc == "" || seen[p.Name] {
				t.Errorf("%s: hyperparameter %+v: empty name or doc, or declared twice", m.Name, p)
			}
			seen[p.Name] = true
		}
		if f := m.Features; f != nil {
			for _, name := range []string{f.Clip, f.GradClip} {
				if p, ok := m.Param(name); name != "" && (!ok || p.Derived) {
					t.Errorf("%s: feature map names %q, which is not a declared hyperparameter with a declared default", m.Name, name)
				}
			}
		}
		if m.Run == nil && m.Stream == nil {
			continue
		}
		o := Options{Privacy: accounting.ReleaseOptions{Epsilon: 4, Delta: 1e-5, Noise: accounting.SeededNoise(1)}}
		if !m.Private {
			o.Privacy.Epsilon = math.Inf(1)
		}
		if m.Pure {
			continue // the prototype methods, tested in their package
		}
		res, err := Fit(context.Background(), m.Name, d, o)
		if err != nil {
			t.Errorf("%s with defaults: %v", m.Name, err)
			continue
		}
		defaulted := map[string]bool{}
		for _, k := range res.Defaulted {
			defaulted[k] = true
		}
		for _, p := range m.Params {
			v, recorded := res.Hyperparameters[p.Name]
			if !recorded {
				continue // read only in some settings (dpls's psd when private)
			}
			if !defaulted[p.Name] {
				t.Errorf("%s: %s not marked as defaulted", m.Name, p.Name)
			}
			want, ok := Setting(m.Name, p.Name, nil)
			if !ok {
				continue
			}
			var got float64
			switch v := v.(type) {
			case float64:
				got = v
			case int:
				got = float64(v)
			}
			if got != want {
				t.Errorf("%s: %s defaulted to %v, but the description declares %v", m.Name, p.Name, v, want)
			}
		}
	}
}
