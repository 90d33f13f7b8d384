package cli

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/objstore"
	"github.com/dpfeat/dpfeat/internal/orttest"
	"github.com/dpfeat/dpfeat/internal/s3test"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/sweep"
)

// startJobServer starts `dpfeat job-server --port 0` as a process of its
// own (env added to this one's), waits for the endpoint it prints and
// returns it with the process; the test's cleanup kills it.
func startJobServer(t *testing.T, bin string, env ...string) (string, *exec.Cmd) {
	t.Helper()
	cmd := exec.Command(bin, "job-server", "--port", "0")
	// The workers' binary cache (os.UserCacheDir) goes to the test's folder.
	cmd.Env = append(append(os.Environ(), "XDG_CACHE_HOME="+t.TempDir()), env...)
	var logs bytes.Buffer
	cmd.Stderr = &logs
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("job server's log:\n%s", logs.String())
		}
	})
	line := make(chan string, 1)
	go func() {
		s := bufio.NewScanner(out)
		s.Scan()
		line <- s.Text()
		for s.Scan() {
		}
	}()
	select {
	case l := <-line:
		ep, _, ok := strings.Cut(strings.TrimPrefix(l, "job server at "), " ")
		if !ok || !strings.HasPrefix(ep, "localhost:") {
			t.Fatalf("job server printed %q", l)
		}
		return ep, cmd
	case <-time.After(30 * time.Second):
		t.Fatal("the job server printed no endpoint in 30 s")
	}
	return "", nil
}

// TestStandaloneJobServer (#42 items 1 and 4): a Prism job server in a
// process of its own, as a cluster's is, and workers that are processes
// it starts (environment PROCESS, dpfeat-beam its own boot loader,
// retrieving the staged binary as a cluster's workers do) or the
// submitting process (LOOPBACK). Extraction through it equals the
// single-machine file bit for bit, and fits — one pass, a pass per step,
// Poisson-sampled steps whose sample each worker process draws from the
// key in the pipeline, a transform's passes, DP-LP, logreg, auto — on
// PROCESS and LOOPBACK workers equal the single-machine classifier
// (--seed, weights within 1e-6), as a sweep's rows do. A worker killed
// mid-shard fails Prism's job, and dpfeat runs it again for the
// unfinished shards; a job server that goes away fails the run with its
// cause named and nothing at the final name, after which --resume on
// another server redoes only the unfinished shards.
func TestStandaloneJobServer(t *testing.T) {
	orttest.Need(t)
	bin := buildBinary(t)
	dir := t.TempDir()
	data, model, single := runnerFixture(t, dir)
	want, err := features.ReadAll(single, features.ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	killed := filepath.Join(dir, "killed")
	// An S3 on loopback, for the job server's worker processes (they
	// inherit its environment) and for this one (#42 item 2).
	s3test.Serve(t, "dpfeat-test")
	ep, _ := startJobServer(t, bin, "DPFEAT_FAULT=kill-once:"+killed)
	universal := func(ep, env string) []string {
		o := []string{"--runner", "universal", "--runner-option", "endpoint=" + ep, "--runner-option", "environment_type=" + env}
		if env == "PROCESS" {
			o = append(o, "--runner-option", fmt.Sprintf(`environment_config={"command": %q}`, bin))
		}
		return o
	}
	dpfeat := func(args ...string) (int, string, string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		err := cmd.Run()
		code := 0
		if err != nil {
			code = -1
			if e, ok := err.(*exec.ExitError); ok {
				code = e.ExitCode()
			}
		}
		return code, stdout.String(), stderr.String()
	}
	extract := func(out string, extra ...string) (int, string, string) {
		t.Helper()
		return dpfeat(append([]string{"extract", "--encoder", model, "--data", data, "--out", out, "--encoder-batch", "2", "--shard-rows", "4", "--json"}, extra...)...)
	}
	same := func(what, path string) {
		t.Helper()
		got, err := features.ReadAll(path, features.ReadOptions{})
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !slices.Equal(got.Data, want.Data) || !slices.Equal(got.IDs, want.IDs) || !slices.Equal(got.Labels, want.Labels) {
			t.Fatalf("%s: the features differ from the single-machine file", what)
		}
	}

	// A worker process killed mid-shard: Prism fails the job, and dpfeat
	// runs it again for the unfinished shards, as a cluster's runner
	// retries a bundle: the single-machine file, with one line said.
	proc := filepath.Join(dir, "process.json")
	code, stdout, errs := extract(proc, universal(ep, "PROCESS")...)
	if _, err := os.Stat(killed); err != nil {
		t.Fatalf("no worker process ran the extraction (exit %d: %s)", code, errs)
	}
	if code != 0 || !strings.Contains(errs, "a worker process stopped mid-bundle; running the unfinished shards again (retry 1 of 2)") || !strings.Contains(stdout, `"runner": "universal"`) {
		t.Fatalf("a worker killed mid-shard: exit %d, %q", code, errs)
	}
	same("PROCESS workers", proc)
	loop := filepath.Join(dir, "loopback.json")
	if code, _, errs := extract(loop, universal(ep, "LOOPBACK")...); code != 0 {
		t.Fatalf("LOOPBACK: exit %d: %s", code, errs)
	}
	same("LOOPBACK workers", loop)

	// Fits on worker processes equal the single-machine ones.
	for k, c := range [][]string{{"dpls"}, {"ls"}, {"dpplmean"}, {"protomean"}, {"dpsgd", "--steps", "3"}, {"dpsgd", "--steps", "3", "--batch", "5"},
		{"dpfc", "--steps", "2"}, {"dpnewton", "--steps", "2"}, {"newton", "--steps", "2"}, {"dpls", "--transform", "pca", "--transform-dims", "4"}, {"dplp", "--steps", "3"}, {"logreg", "--steps", "3"}, {"auto"}} {
		private := []string{"--epsilon", "2", "--delta", "1e-3"}
		w, code, _, errs := fitOn(t, c[0], single, filepath.Join(dir, fmt.Sprintf("%d-single.safetensors", k)), private, append([]string{"--seed", "4"}, c[1:]...)...)
		if code != 0 {
			t.Fatalf("%v on one machine: %s", c, errs)
		}
		budget := private
		if m, _ := solvers.Lookup(c[0]); !m.Private {
			budget = []string{"--epsilon", "inf"}
		}
		for _, env := range []string{"PROCESS", "LOOPBACK"} {
			out := filepath.Join(dir, fmt.Sprintf("%d-%s.safetensors", k, env))
			args := append(append([]string{"fit", "--method", c[0], "--train", proc, "--out", out, "--seed", "4"}, budget...), c[1:]...)
			if code, _, errs := dpfeat(append(args, universal(ep, env)...)...); code != 0 {
				t.Fatalf("%v on %s workers: exit %d: %s", c, env, code, errs)
			}
			g, err := models.LoadClassifier(out)
			if err != nil {
				t.Fatal(err)
			}
			if len(g.Weight) != len(w.Weight) {
				t.Fatalf("%v: %d weights on %s workers, one machine %d", c, len(g.Weight), env, len(w.Weight))
			}
			for i := range w.Weight {
				if math.Abs(float64(g.Weight[i]-w.Weight[i])) > 1e-6*math.Max(1, math.Abs(float64(w.Weight[i]))) {
					t.Fatalf("%v: weight %d = %v on %s workers, %v on one machine", c, i, g.Weight[i], env, w.Weight[i])
				}
			}
		}
	}

	// Object storage (#42 item 2): worker processes write the shards to
	// S3 and read them from there, the passes' results go through S3
	// (temp_location), and nothing of theirs is left there.
	s3out := "s3://dpfeat-test/fmnist/train.json"
	if code, _, errs := extract(s3out, universal(ep, "PROCESS")...); code != 0 {
		t.Fatalf("PROCESS workers into S3: exit %d: %s", code, errs)
	}
	same("PROCESS workers into S3", s3out)
	for k, c := range [][]string{{"dpls"}, {"dpsgd", "--steps", "3", "--batch", "5"}} {
		w, code, _, errs := fitOn(t, c[0], single, filepath.Join(dir, fmt.Sprintf("s3-%d-single.safetensors", k)), []string{"--epsilon", "2", "--delta", "1e-3"}, append([]string{"--seed", "4"}, c[1:]...)...)
		if code != 0 {
			t.Fatalf("%v on one machine: %s", c, errs)
		}
		out := filepath.Join(dir, fmt.Sprintf("s3-%d.safetensors", k))
		args := append([]string{"fit", "--method", c[0], "--train", s3out, "--out", out, "--seed", "4", "--epsilon", "2", "--delta", "1e-3",
			"--runner-option", "temp_location=s3://dpfeat-test/tmp"}, c[1:]...)
		if code, _, errs := dpfeat(append(args, universal(ep, "PROCESS")...)...); code != 0 {
			t.Fatalf("%v from S3 on PROCESS workers: exit %d: %s", c, code, errs)
		}
		g, err := models.LoadClassifier(out)
		if err != nil {
			t.Fatal(err)
		}
		for i := range w.Weight {
			if math.Abs(float64(g.Weight[i]-w.Weight[i])) > 1e-6*math.Max(1, math.Abs(float64(w.Weight[i]))) {
				t.Fatalf("%v from S3: weight %d = %v on PROCESS workers, %v on one machine", c, i, g.Weight[i], w.Weight[i])
			}
		}
	}
	if left, _ := objstore.List(context.Background(), "s3://dpfeat-test/tmp", "*/*"); len(left) != 0 {
		t.Errorf("the passes left %v under temp_location", left)
	}

	// A sweep's jobs on PROCESS workers, the configuration named by a
	// relative path (the workers' folder is the job server's): the rows
	// of one machine.
	os.WriteFile(filepath.Join(dir, "sweep.yaml"), []byte("datasets: [{train: single.arrow, validation: 0.3, test: single.arrow}]\n"+
		"methods: {dpls: {}, dplp: {}, logreg: {}}\nepsilons: [2]\ndelta: 1e-5\nseeds: 1\nnoise: seeded\n"), 0o644)
	sweepOn := func(out string, extra ...string) []sweep.Row {
		t.Helper()
		cmd := exec.Command(bin, append([]string{"sweep", "--config", "sweep.yaml", "--out", out}, extra...)...)
		cmd.Dir = dir
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("sweep %v: %v\n%s", extra, err, b)
		}
		rows, err := sweep.ReadResults(filepath.Join(dir, out))
		if err != nil {
			t.Fatal(err)
		}
		return rows
	}
	local, remote := sweepOn("local.arrow"), sweepOn("remote.arrow", universal(ep, "PROCESS")...)
	if len(local) != 3 || len(remote) != 3 {
		t.Fatalf("%d rows on one machine, %d on PROCESS workers", len(local), len(remote))
	}
	for i, r := range local {
		if g := remote[i]; g.Job != r.Job || g.Error != "" || !sameValue(g.TestAccuracy, r.TestAccuracy) || !sameValue(g.ValAccuracy, r.ValAccuracy) {
			t.Errorf("%s on PROCESS workers: %+v; one machine %+v", r.Method, g, r)
		}
	}

	// A job server that goes away mid-job, two shards or more finished.
	ep2, server := startJobServer(t, bin, "DPFEAT_FAULT=stall-after:2")
	lost := filepath.Join(dir, "lost.json")
	finished := filepath.Join(dir, "lost.shards.partial", "[0-9][0-9][0-9][0-9][0-9].arrow")
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	go func() {
		for ctx.Err() == nil {
			if n, _ := filepath.Glob(finished); len(n) >= 2 {
				server.Process.Signal(syscall.SIGKILL)
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	code, _, errs = extract(lost, universal(ep2, "PROCESS")...)
	if code != 1 || !strings.Contains(errs, "the job server at "+ep2+" went away") || !strings.Contains(errs, "--resume") {
		t.Fatalf("a job server lost mid-job: exit %d, %q", code, errs)
	}
	if _, err := os.Stat(lost); !os.IsNotExist(err) {
		t.Fatalf("a failed extraction left %s", lost)
	}
	done, _ := filepath.Glob(finished)
	code, stdout, errs = extract(lost, append(universal(ep, "PROCESS"), "--resume")...)
	if code != 0 || !strings.Contains(stdout, `"shards": 6`) || !strings.Contains(stdout, fmt.Sprintf(`"shards_made": %d`, 6-len(done))) {
		t.Fatalf("--resume after a lost job server: exit %d: %s %s", code, stdout, errs)
	}
	same("resumed after a lost job server", lost)
}

// TestDistributedWalkthrough (#42): docs/distributed.md's standalone job
// server walkthrough runs as written — bash, dpfeat and dpfeat-beam on
// the PATH, an encoder enc.onnx and an image folder photos — and makes
// what it says.
func TestDistributedWalkthrough(t *testing.T) {
	orttest.Need(t)
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	bin := buildBinary(t)
	doc, err := os.ReadFile("../docs/distributed.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "<!-- walkthrough:")
	if ok {
		_, block, ok = strings.Cut(block, "```sh\n")
	}
	if ok {
		block, _, ok = strings.Cut(block, "```")
	}
	if !ok {
		t.Fatal("docs/distributed.md has no walkthrough block")
	}
	dir := t.TempDir()
	path := filepath.Join(dir, "bin")
	os.Mkdir(path, 0o755)
	for _, name := range []string{"dpfeat", "dpfeat-beam"} {
		if err := os.Symlink(bin, filepath.Join(path, name)); err != nil {
			t.Fatal(err)
		}
	}
	for src, dst := range map[string]string{"tiny-cnn.onnx": "enc.onnx", "tiny-cnn.json": "enc.json"} {
		b, err := os.ReadFile(filepath.Join("..", "testdata", "encoders", src))
		if err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(dir, dst), b, 0o644)
	}
	imageFolder(t, filepath.Join(dir, "photos"), []string{"cat", "dog"}, 9)
	script := filepath.Join(dir, "walkthrough.sh")
	os.WriteFile(script, []byte("set -euo pipefail\n"+block), 0o644)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bash, script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "PATH="+path+string(os.PathListSeparator)+os.Getenv("PATH"), "XDG_CACHE_HOME="+filepath.Join(dir, "cache"))
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("the walkthrough failed: %v\n%s", err, out)
	}
	for _, f := range []string{"cluster.json", "cluster-auto.safetensors", "cluster-dpls.safetensors"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the walkthrough made no %s", f)
		}
	}
	if m, err := features.ReadAll(filepath.Join(dir, "cluster.json"), features.ReadOptions{}); err != nil || m.Rows != 18 {
		t.Errorf("cluster.json: %v", err)
	}
	// The job server stopped with the script (its trap).
	for i := 0; ; i++ {
		out, _ := exec.Command("pgrep", "-f", filepath.Join(path, "dpfeat")+" job-server").Output()
		if len(out) == 0 {
			break
		}
		if i == 50 {
			t.Errorf("the walkthrough left its job server running: %s", out)
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
}
