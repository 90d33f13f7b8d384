package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/finetune"
	"github.com/dpfeat/dpfeat/internal/orttest"
)

// mlpFinetune makes what the finetune tests train on in dir — an image
// folder of three classes of 20 images and the test MLP's manifest — and
// returns their paths with the test MLP's training graph and parameters.
func mlpFinetune(t *testing.T, dir string) (data, manifest, graph, params string) {
	t.Helper()
	data = filepath.Join(dir, "images")
	imageFolder(t, data, []string{"a", "b", "c"}, 20)
	manifest = filepath.Join(dir, "mlp.json")
	os.WriteFile(manifest, []byte(`{"name": "mlp", "input": {"layout": "NCHW", "channels": 1, "height": 4, "width": 2, "mean": [0.5], "std": [0.25]},
		"output": {"name": "loss", "dim": 1, "pool": "none"}}`), 0o644)
	graph = filepath.Join("..", "testdata", "training", "mlp.onnx")
	params = filepath.Join("..", "testdata", "training", "mlp.safetensors")
	return data, manifest, graph, params
}

func TestFinetune(t *testing.T) {
	orttest.Need(t)
	strictUmask(t)
	dir := t.TempDir()
	data, manifest, graph, params := mlpFinetune(t, dir)
	out := filepath.Join(dir, "trained.safetensors")
	base := []string{"finetune", "--graph", graph, "--params", params, "--manifest", manifest, "--data", data, "--head", "3.weight,3.bias",
		"--epsilon", "4", "--delta", "1e-3", "--out", out, "--phase2-steps", "10", "--phase3-steps", "10", "--batch", "30", "--seed", "1"}
	exported := filepath.Join(dir, "trained.onnx")
	forward := filepath.Join("..", "testdata", "training", "mlp-forward.onnx")
	code, stdout, errs := run(t, append(base, "--test", data, "--json", "--forward", forward, "--export", exported)...)
	if code != 0 {
		t.Fatalf("finetune: exit %d: %s", code, errs)
	}
	var rep finetuneReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatal(err)
	}
	if float64(rep.Epsilon) > 4 || rep.TrainRows != 60 || rep.TestAccuracy == nil || rep.Phase2.Sigma <= 0 || rep.Phase3.Sigma <= 0 || !rep.Guarantee.Seeded {
		t.Errorf("report %+v", rep)
	}
	if st, err := os.Stat(exported); err != nil || st.Size() < 500 || rep.Export != exported {
		t.Errorf("export: %v, report %q", err, rep.Export)
	}
	checkMode(t, "finetune", out, 0o600)
	checkMode(t, "finetune --export", exported, 0o600)
	if !strings.Contains(errs, "reproduction only") {
		t.Errorf("a seeded run does not say it is for reproduction only: %s", errs)
	}
	g, err := finetune.OpenGraph(graph, finetune.GraphOptions{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if _, err := finetune.LoadParams(out, g); err != nil {
		t.Errorf("the result does not load as the graph's parameters: %v", err)
	}
	bad := []struct {
		args []string
		want string
	}{
		{base, "exists: pass --resume"},
		{append(base[:len(base):len(base)], "--resume"), "no checkpoint"},
		{append(append([]string{}, base...), "--force", "--head", "9.weight"), `"9.weight" is not a parameter`},
		{append(append([]string{}, base...), "--force", "--phase2-share", "2"), "--phase2-share must be in [0, 1]"},
		{append(append([]string{}, base...), "--force", "--export", exported), "--forward and --export go together"},
		// The runtime scripts/setup.sh fetches is CPU-only.
		{append(append([]string{}, base...), "--force", "--device", "cuda"), "CUDA execution provider is not available"},
	}
	for _, c := range bad {
		if code, _, errs := run(t, c.args...); code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args[len(c.args)-2:], code, errs, c.want)
		}
	}
}

// TestFinetuneViews (#22): Phase III with --views and --mix-self trains on
// fresh views of each sampled example; the guarantee is unchanged in form
// and names the unit; a seeded run repeats itself, views included; the
// flags are checked.
func TestFinetuneViews(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	data, manifest, graph, params := mlpFinetune(t, dir)
	base := []string{"finetune", "--graph", graph, "--params", params, "--manifest", manifest, "--data", data, "--head", "3.weight,3.bias",
		"--epsilon", "4", "--delta", "1e-3", "--phase2-steps", "5", "--phase3-steps", "5", "--batch", "30", "--seed", "1",
		"--views", "4", "--augment", "crop=1,flip", "--mix-self", "2", "--json"}
	var outs [2][]byte
	for i := range outs {
		out := filepath.Join(dir, fmt.Sprintf("v%d.safetensors", i))
		code, stdout, errs := run(t, append(base, "--out", out)...)
		if code != 0 {
			t.Fatalf("finetune --views: exit %d: %s", code, errs)
		}
		var rep finetuneReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rep.Guarantee.Unit, "4 augmented views (crop=1,flip) and 2 self-mixups") || rep.Phase3.Unit == "" || float64(rep.Epsilon) > 4 {
			t.Errorf("report: unit %q, phase III %+v, ε %v", rep.Guarantee.Unit, rep.Phase3, rep.Epsilon)
		}
		outs[i], _ = os.ReadFile(out)
	}
	if len(outs[0]) == 0 || string(outs[0]) != string(outs[1]) {
		t.Error("two seeded runs with views differ")
	}
	// DP-Mix_Diff: mixups with public images (other images of the same
	// classes; the private folder itself is refused).
	public := filepath.Join(dir, "public")
	imageFolderVariant(t, public, []string{"a", "b", "c"}, 4, 1)
	other := filepath.Join(dir, "other")
	imageFolder(t, other, []string{"a", "zebra"}, 2)
	// (without --mix-self: --mix-alpha's default must reach the mixups)
	diff := append(append([]string{}, base[:len(base)-3]...), "--json", "--out", filepath.Join(dir, "diff.safetensors"), "--mix-with", public, "--mix-diff", "2")
	code, stdout, errs := run(t, diff...)
	var rep finetuneReport
	if code != 0 || json.Unmarshal([]byte(stdout), &rep) != nil || !strings.Contains(rep.Guarantee.Unit, "and 2 mixups with the public images "+public+" (soft labels") {
		t.Errorf("--mix-diff: exit %d, unit %q, %s", code, rep.Guarantee.Unit, errs)
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--views", "1", "--mix-self", "2"}, "needs --views ≥ 2"},
		{[]string{"--views", "2", "--augment", "rotate"}, "--augment"},
		{[]string{"--views", "0", "--mix-self", "1"}, "give --views K"},
		{[]string{"--views", "2", "--mix-diff", "2"}, "--mix-with SRC and --mix-diff M"},
		{[]string{"--mix-with", data, "--mix-diff", "2"}, "give --views K"},
		{[]string{"--views", "2", "--mix-with", other, "--mix-diff", "1"}, `class "zebra" is not a training class`},
	} {
		args := append(append([]string{}, base[:len(base)-7]...), "--out", filepath.Join(dir, "bad.safetensors"), "--json")
		if code, _, errs := run(t, append(args, c.args...)...); code != 1 || !strings.Contains(errs, c.want) {
			t.Errorf("%v: exit %d, %q; want %q", c.args, code, errs, c.want)
		}
	}
}
