package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/internal/orttest"
	"github.com/dpfeat/dpfeat/models"
)

// TestPretrainThenFinetune (#23): synth → pretrain → finetune. pretrain
// trains the embedding graph's parameters on synthetic images, copies the
// head, records its data; finetune takes the result as --params and its
// guarantee says Phase I used no private data; the output is not replaced
// without --force.
func TestPretrainThenFinetune(t *testing.T) {
	orttest.Need(t)
	dir := t.TempDir()
	data, manifest, graph, params := mlpFinetune(t, dir)
	synth := filepath.Join(dir, "synth")
	if code, _, errs := run(t, "synth", "--size", "8x4", "--channels", "1", "--count", "40", "--out", synth); code != 0 {
		t.Fatal(errs)
	}
	training := filepath.Join("..", "testdata", "training")
	out := filepath.Join(dir, "phase1.safetensors")
	args := []string{"pretrain", "--embed", filepath.Join(training, "mlp-embed.onnx"), "--vjp", filepath.Join(training, "mlp-vjp.onnx"),
		"--params", params, "--manifest", manifest, "--data", synth, "--steps", "12", "--batch", "8", "--augment", "flip", "--out", out}
	code, stdout, errs := run(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("pretrain: exit %d: %s", code, errs)
	}
	var rep pretrainReport
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || rep.Images != 40 || rep.Config.Steps != 12 {
		t.Fatalf("report %+v, %v", rep, err)
	}
	b, _ := os.ReadFile(out)
	ts, md, err := models.DecodeSafetensors(b)
	if err != nil || len(ts) != 4 || md[MetaPretrain] == "" {
		t.Fatalf("output: %d tensors, metadata %v, %v", len(ts), md, err)
	}
	b0, _ := os.ReadFile(params)
	init, _, _ := models.DecodeSafetensors(b0)
	if string(f32bytes(ts["3.weight"].Data)) != string(f32bytes(init["3.weight"].Data)) || string(f32bytes(ts["1.weight"].Data)) == string(f32bytes(init["1.weight"].Data)) {
		t.Error("pretrain must train the extractor (1.*) and copy the head (3.*)")
	}
	if code, _, errs := run(t, args...); code != 1 || !strings.Contains(errs, "exists") {
		t.Errorf("a second run over --out: exit %d, %q", code, errs)
	}
	ft := filepath.Join(dir, "ft.safetensors")
	code, stdout, errs = run(t, "finetune", "--graph", graph, "--params", out, "--manifest", manifest, "--data", data, "--head", "3.weight,3.bias",
		"--epsilon", "4", "--delta", "1e-3", "--out", ft, "--phase2-steps", "3", "--phase3-steps", "3", "--batch", "30", "--json")
	if code != 0 {
		t.Fatalf("finetune: exit %d: %s", code, errs)
	}
	var frep finetuneReport
	if err := json.Unmarshal([]byte(stdout), &frep); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(frep.Guarantee.Public, "; "), "Phase I, pretrained by dpfeat pretrain without privacy on "+synth+" (40 images, 12 steps; checked not to be the data fine-tuned here)") {
		t.Errorf("finetune's guarantee does not name Phase I: %q", frep.Guarantee.Public)
	}
	// Phase I on the private images themselves (#36 item 7): finetune
	// refuses the parameters, by path and, for a copy of the images, by
	// their data identity.
	copyDir := filepath.Join(dir, "copy")
	if err := os.CopyFS(copyDir, os.DirFS(data)); err != nil {
		t.Fatal(err)
	}
	for k, phase1 := range []string{data, copyDir} {
		onPrivate := filepath.Join(dir, fmt.Sprintf("phase1-private%d.safetensors", k))
		pre := append(slices.Clone(args[:len(args)-6]), "--data", phase1, "--steps", "2", "--batch", "8", "--augment", "flip", "--out", onPrivate)
		if code, _, errs := run(t, pre...); code != 0 {
			t.Fatalf("pretrain on %s: exit %d: %s", phase1, code, errs)
		}
		code, _, errs = run(t, "finetune", "--graph", graph, "--params", onPrivate, "--manifest", manifest, "--data", data, "--head", "3.weight,3.bias",
			"--epsilon", "4", "--delta", "1e-3", "--out", filepath.Join(dir, "ft2.safetensors"), "--phase2-steps", "3", "--phase3-steps", "3", "--batch", "30")
		if code != 1 || !strings.Contains(errs, "Phase I must not see the private data") {
			t.Errorf("finetune on the data Phase I saw (%s): exit %d, %q", phase1, code, errs)
		}
	}
	// Data with a budget is private: pretrain, which reads it without
	// privacy, is refused (and with --force recorded as spending it all).
	ledgerDir := filepath.Join(dir, "ledger")
	if code, _, errs := run(t, "budget", "init", "--name", "photos", "--epsilon", "4", "--delta", "1e-5", "--ledger", ledgerDir); code != 0 {
		t.Fatal(errs)
	}
	pre := append(slices.Clone(args[:len(args)-6]), "--data", data, "--steps", "2", "--batch", "8", "--augment", "flip",
		"--out", filepath.Join(dir, "budgeted.safetensors"), "--ledger", ledgerDir, "--ledger-name", "photos")
	if code, _, errs := run(t, pre...); code != 1 || !strings.Contains(errs, "budget") {
		t.Errorf("pretrain on budgeted data: exit %d, %q", code, errs)
	}
}

func f32bytes(v []float32) []byte {
	b, _ := json.Marshal(v)
	return b
}
