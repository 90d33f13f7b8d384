package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFitWithATransformBasis (#41): --transform-basis gives auto, below
// n·μ = 100, DPPL-Mean on the basis's principal directions; the fit says so,
// records it, and the guarantee lists the basis as public. Bad uses are
// refused in one line with nothing written.
func TestFitWithATransformBasis(t *testing.T) {
	dir := t.TempDir()
	classes := []string{"a", "b", "c"}
	train, basis := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "basis.arrow")
	blobFile(t, train, 600, 24, classes, "sha-1", 1)
	blobFile(t, basis, 400, 24, classes, "sha-1", 2)
	out := filepath.Join(dir, "clf.safetensors")
	code, stdout, errs := run(t, "fit", "--method", "auto", "--train", train, "--transform-basis", basis, "--epsilon", "0.3", "--delta", "1e-5", "--out", out, "--json") // n·μ ≈ 50
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errs)
	}
	var rep fitReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Method != "dpplmean" || rep.Hyperparameters["transform"] != "pca" || !strings.Contains(errs, "directions from the basis features") {
		t.Errorf("auto with a basis: method %s, hyperparameters %v\n%s", rep.Method, rep.Hyperparameters, errs)
	}
	g, _ := json.Marshal(rep.Guarantee)
	if !strings.Contains(string(g), "basis.arrow") {
		t.Errorf("the guarantee does not list the basis: %s", g)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--transform-basis", train}, "--transform-basis " + train + " is the training file"},
		{[]string{"--transform-basis", basis, "--public", basis}, "--transform-basis and --public"},
		{[]string{"--transform-basis", basis, "--method", "dpls", "--transform", "standardize"}, "goes with --transform pca or whiten"},
	} {
		bad := filepath.Join(dir, "bad.safetensors")
		args := append([]string{"fit", "--method", "auto", "--train", train, "--epsilon", "1", "--delta", "1e-5", "--out", bad}, c.args...)
		code, _, errs := run(t, args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d, %q; want 1 and %q", c.args, code, errs, c.want)
		}
		if _, err := os.Stat(bad); err == nil {
			t.Errorf("%v wrote %s", c.args, bad)
		}
	}
}

// TestFitWithABasisSubspace (#41): --transform-basis-subspace whitens
// privately within the basis's top directions, and auto does so at
// n·μ 100–300 with at most 16·D rows; both say so and list the basis.
func TestFitWithABasisSubspace(t *testing.T) {
	dir := t.TempDir()
	classes := []string{"a", "b", "c"}
	train, basis := filepath.Join(dir, "train.arrow"), filepath.Join(dir, "basis.arrow")
	blobFile(t, train, 600, 80, classes, "sha-1", 1)
	blobFile(t, basis, 400, 80, classes, "sha-1", 2)
	for _, c := range []struct {
		args   []string
		method string
		dims   float64
	}{
		{[]string{"--method", "dpplmean", "--transform", "whiten", "--transform-basis-subspace", "--transform-dims", "8"}, "dpplmean", 8},
		{[]string{"--method", "auto", "--epsilon", "1"}, "dpplmean", 32}, // n·μ ≈ 161, 600 ≤ 16·80 rows
	} {
		out := filepath.Join(dir, c.method+c.args[1]+".safetensors")
		args := append([]string{"fit", "--train", train, "--transform-basis", basis, "--epsilon", "1", "--delta", "1e-5", "--out", out, "--json"}, c.args...)
		code, stdout, errs := run(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", c.args, code, errs)
		}
		var rep fitReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		h := rep.Hyperparameters
		if rep.Method != c.method || h["transform"] != "whiten" || h["transform_subspace"] != true || h["transform_dims"] != c.dims {
			t.Errorf("%v: method %s, hyperparameters %v\n%s", c.args, rep.Method, h, errs)
		}
		g, _ := json.Marshal(rep.Guarantee)
		if !strings.Contains(string(g), "basis.arrow") || !strings.Contains(string(g), "whiten subspace") {
			t.Errorf("%v: the guarantee does not list the basis's subspace: %s", c.args, g)
		}
	}
}
