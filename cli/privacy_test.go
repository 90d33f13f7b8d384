package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/accounting"
)

func run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errb bytes.Buffer
	code = Run(context.Background(), append([]string{"dpfeat"}, args...), &out, &errb)
	return code, out.String(), errb.String()
}

func TestPrivacyCommands(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want []string // substrings of stdout
	}{
		{"dp-sgd epsilon", []string{"privacy", "epsilon", "--sigma", "1.1", "--steps", "10000", "--sampling-rate", "0.01", "--delta", "1e-5"}, []string{"ε = ", "accountant: rdp", "10000 Poisson-sampled"}},
		{"full-batch sigma", []string{"privacy", "sigma", "--epsilon", "1", "--delta", "1e-5", "--releases", "3"}, []string{"σ = 6.46", "accountant: gdp", "3 full-batch"}},
		{"rho epsilon", []string{"privacy", "epsilon", "--rho", "0.5", "--delta", "1e-7"}, []string{"ε = 5.67086", "zcdp"}},
		{"rho simple", []string{"privacy", "epsilon", "--rho", "0.5", "--delta", "1e-7", "--conversion", "simple"}, []string{"ε = 6.17", "Bun & Steinke"}},
		{"mu epsilon", []string{"privacy", "epsilon", "--mu", "1", "--delta", "1e-5"}, []string{"gdp, μ = 1"}},
		{"delta", []string{"privacy", "delta", "--epsilon", "1", "--sigma", "5", "--releases", "3"}, []string{"δ = 0.00031"}},
		{"zcdp accountant", []string{"privacy", "epsilon", "--sigma", "2", "--releases", "3", "--delta", "1e-5", "--accountant", "zcdp"}, []string{"accountant: zcdp"}},
		{"version", []string{"version"}, []string{"dpfeat", "gonum"}},
	}
	for _, c := range cases {
		code, out, errs := run(t, c.args...)
		if code != 0 {
			t.Errorf("%s: exit %d, stderr %q", c.name, code, errs)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(out, w) {
				t.Errorf("%s: output lacks %q:\n%s", c.name, w, out)
			}
		}
	}
}

func TestPrivacyJSON(t *testing.T) {
	code, out, errs := run(t, "privacy", "sigma", "--epsilon", "2", "--delta", "1e-6", "--steps", "1000", "-q", "0.01", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var res struct {
		Query           string           `json:"query"`
		NoiseMultiplier float64          `json:"noise_multiplier"`
		Epsilon         accounting.Float `json:"epsilon"`
		Delta           float64          `json:"delta"`
		Accountant      string           `json:"accountant"`
		Order           float64          `json:"rdp_order"`
		Mechanisms      []accounting.Mechanism
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	if res.Query != "sigma" || res.Accountant != "rdp" || res.Delta != 1e-6 || float64(res.Epsilon) > 2 || res.Order <= 1 {
		t.Errorf("unexpected result %+v", res)
	}
	// The printed σ must reproduce the guarantee through the same accountant.
	g, err := accounting.Account(accounting.SampledGaussianSteps("s", 0.01, 1000)(res.NoiseMultiplier), 1e-6, accounting.AccountantRDP, accounting.Options{})
	if err != nil || float64(g.Epsilon) > 2 {
		t.Errorf("σ = %v gives ε = %v (err %v), want ≤ 2", res.NoiseMultiplier, g.Epsilon, err)
	}
	if len(res.Mechanisms) != 1 || res.Mechanisms[0].Count != 1000 {
		t.Errorf("mechanisms: %+v", res.Mechanisms)
	}
}

func TestPrivacyBadInput(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string // substring of stderr
	}{
		{"ε ≤ 0", []string{"privacy", "sigma", "--epsilon", "0", "--delta", "1e-5"}, "--epsilon must be a positive"},
		{"ε < 0", []string{"privacy", "sigma", "--epsilon", "-1", "--delta", "1e-5"}, "--epsilon must be a positive"},
		{"ε NaN", []string{"privacy", "sigma", "--epsilon", "NaN", "--delta", "1e-5"}, "--epsilon must be a positive"},
		{"ε inf", []string{"privacy", "sigma", "--epsilon", "inf", "--delta", "1e-5"}, "--epsilon must be a positive finite"},
		{"δ = 0", []string{"privacy", "epsilon", "--sigma", "1", "--delta", "0"}, "--delta: invalid privacy parameter: δ must be in (0, 1)"},
		{"δ = 1", []string{"privacy", "epsilon", "--sigma", "1", "--delta", "1"}, "--delta: invalid privacy parameter: δ must be in (0, 1)"},
		{"δ NaN", []string{"privacy", "epsilon", "--sigma", "1", "--delta", "nan"}, "--delta: invalid privacy parameter: δ must be in (0, 1)"},
		{"δ missing", []string{"privacy", "epsilon", "--sigma", "1"}, "--delta is required"},
		{"q = 0", []string{"privacy", "epsilon", "--sigma", "1", "--delta", "1e-5", "--sampling-rate", "0"}, "--sampling-rate must be in (0, 1]"},
		{"q > 1", []string{"privacy", "epsilon", "--sigma", "1", "--delta", "1e-5", "-q", "1.01"}, "--sampling-rate must be in (0, 1]"},
		{"steps < 1", []string{"privacy", "epsilon", "--sigma", "1", "--delta", "1e-5", "--steps", "0"}, "--steps must be at least 1"},
		{"σ NaN", []string{"privacy", "epsilon", "--sigma", "NaN", "--delta", "1e-5"}, "--sigma must be a positive"},
		{"σ text", []string{"privacy", "epsilon", "--sigma", "abc", "--delta", "1e-5"}, `invalid value "abc" for flag --sigma`},
		{"two sources", []string{"privacy", "epsilon", "--sigma", "1", "--rho", "1", "--delta", "1e-5"}, "exactly one of --sigma, --rho or --mu"},
		{"rho with steps", []string{"privacy", "epsilon", "--rho", "1", "--steps", "3", "--delta", "1e-5"}, "--steps goes with --sigma"},
		{"gdp subsampled", []string{"privacy", "epsilon", "--sigma", "1", "--delta", "1e-5", "-q", "0.1", "--accountant", "gdp"}, "full-batch Gaussian releases only"},
		{"bad accountant", []string{"privacy", "epsilon", "--sigma", "1", "--delta", "1e-5", "--accountant", "moments"}, "--accountant: unknown accountant"},
		{"bad conversion", []string{"privacy", "epsilon", "--rho", "1", "--delta", "1e-5", "--conversion", "fast"}, "--conversion must be cks or simple"},
		{"unknown flag", []string{"privacy", "epsilon", "--bogus"}, "--bogus"},
	}
	for _, c := range cases {
		code, out, errs := run(t, c.args...)
		if code != 1 {
			t.Errorf("%s: exit %d, want 1 (stderr %q)", c.name, code, errs)
		}
		if !strings.Contains(errs, c.want) {
			t.Errorf("%s: stderr %q lacks %q", c.name, errs, c.want)
		}
		if strings.Count(strings.TrimSpace(errs), "\n") != 0 {
			t.Errorf("%s: error is not one line: %q", c.name, errs)
		}
		if out != "" {
			t.Errorf("%s: printed on stdout despite the error: %q", c.name, out)
		}
	}
}

func TestInternalErrorExitCode(t *testing.T) {
	if code := exitCode(internal(errString("boom"))); code != 2 {
		t.Errorf("internal error: exit %d, want 2", code)
	}
	if code := exitCode(userErrorf("bad flag")); code != 1 {
		t.Errorf("user error: exit %d, want 1", code)
	}
}

type errString string

func (e errString) Error() string { return string(e) }

// TestInfiniteAnswers (#16 item 15): an infinite ε (and μ) is a valid
// answer, printed as "inf" in JSON and "+Inf" in text, exit 0; an absurd
// --sigma for fit is refused by name.
func TestInfiniteAnswers(t *testing.T) {
	code, out, errs := run(t, "privacy", "epsilon", "--sigma", "1e-300", "--delta", "1e-5", "--json")
	if code != 0 || !strings.Contains(out, `"epsilon": "inf"`) || !strings.Contains(out, `"mu": "inf"`) {
		t.Errorf("JSON: exit %d, %s %s", code, out, errs)
	}
	if code, out, _ := run(t, "privacy", "epsilon", "--sigma", "1e-300", "--delta", "1e-5"); code != 0 || !strings.Contains(out, "ε = +Inf") {
		t.Errorf("text: exit %d, %s", code, out)
	}
	dir := t.TempDir()
	train := filepath.Join(dir, "t.arrow")
	blobFile(t, train, 30, 3, []string{"a", "b"}, "s", 1)
	code, _, errs = run(t, "fit", "--method", "dpls", "--train", train, "--epsilon", "1", "--sigma", "1e-300", "--delta", "1e-5", "--out", filepath.Join(dir, "c.safetensors"))
	if code != 1 || !strings.Contains(errs, "--sigma 1e-300 is outside") {
		t.Errorf("fit --sigma 1e-300: exit %d, %q", code, errs)
	}
}
