//go:build cgo

package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/objstore"
	"github.com/dpfeat/dpfeat/internal/orttest"
	"github.com/dpfeat/dpfeat/internal/s3test"
)

// objects lists the objects below a remote folder, two levels deep
// (the shard folder's generations), relative to it.
func objects(t *testing.T, dir string) []string {
	t.Helper()
	ctx := context.Background()
	var out []string
	for _, pat := range []string{"*", "*/*", "*/*/*"} {
		names, err := objstore.List(ctx, dir, pat)
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range names {
			out = append(out, strings.TrimPrefix(n, dir+"/"))
		}
	}
	slices.Sort(out)
	return out
}

// TestRunnerObjectStore (#42 item 2): a distributed extraction whose
// manifest and shards are on object storage (Beam's in-memory file
// system, and S3's real client against an S3 on loopback), read back
// equal to the single-machine file; fits on it, with the passes' results
// under temp_location on object storage, equal to the single-machine
// fits; a second run needs --force and replaces the shards only once its
// manifest is written; a failed run leaves its finished shards to
// --resume, which makes only the others.
func TestRunnerObjectStore(t *testing.T) {
	orttest.Need(t)
	s3test.Serve(t, "cli-test")
	// Not subtests: a failure's message then stands under this test's
	// name, which is all that CI's summary shows of a failing test.
	for _, store := range []string{"memfs", "s3"} {
		t.Logf("object store %s", store)
		testObjectStore(t, store+"://cli-test")
	}
}

func testObjectStore(t *testing.T, root string) {
	dir := t.TempDir()
	data, model, single := runnerFixture(t, dir)
	bucket := root + "/fmnist"
	out := bucket + "/train.json"
	extract := func(extra ...string) (extractReport, int, string) {
		t.Helper()
		args := append([]string{"extract", "--encoder", model, "--data", data, "--out", out, "--encoder-batch", "2", "--runner", "prism",
			"--runner-workers", "2", "--shard-rows", "5", "--json"}, extra...)
		code, stdout, errs := run(t, args...)
		var rep extractReport
		if code == 0 {
			if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
				t.Fatal(err)
			}
		}
		return rep, code, errs
	}
	rep, code, errs := extract()
	if code != 0 || rep.Shards != 4 || rep.ShardsMade != 4 || rep.Rows != 21 {
		t.Fatalf("extract to %s: exit %d, %+v: %s", out, code, rep, errs)
	}
	want, _ := features.ReadAll(single, features.ReadOptions{})
	equal := func(what string) {
		t.Helper()
		got, err := features.ReadAll(out, features.ReadOptions{})
		if err != nil || !slices.Equal(got.Data, want.Data) || !slices.Equal(got.IDs, want.IDs) || !slices.Equal(got.Labels, want.Labels) {
			t.Fatalf("%s: the features on object storage differ from the single-machine file (%v)", what, err)
		}
	}
	equal("first run")
	m, err := features.ReadShardManifest(out)
	if err != nil {
		t.Fatal(err)
	}
	gen := strings.Split(m.Shards[0].Path, "/")[1]
	var names []string
	for i := range 4 {
		p := fmt.Sprintf("train.shards/%s/%05d.arrow", gen, i)
		if m.Shards[i].Path != p {
			t.Errorf("shard %d is named %s, want %s", i, m.Shards[i].Path, p)
		}
		names = append(names, p, p+".json")
	}
	names = append(names, "train.json")
	slices.Sort(names)
	if got := objects(t, bucket); !slices.Equal(got, names) {
		t.Errorf("objects after the run: %v\nwant %v", got, names)
	}

	// Fits read the manifest on object storage: on one machine, and on
	// the runner with the passes' results under temp_location. Public
	// features on object storage too (PUBLIC: the local file for the
	// single-machine fit, its upload for the others), which DPPL-Public's
	// clipped utilities have every worker read.
	pubImages, public := filepath.Join(dir, "public-images"), filepath.Join(dir, "public.arrow")
	imageFolderVariant(t, pubImages, []string{"cat", "dog", "eel"}, 4, 1)
	if code, _, errs := run(t, "extract", "--encoder", model, "--data", pubImages, "--out", public, "--quiet"); code != 0 {
		t.Fatal(errs)
	}
	remotePublic := bucket + "/public.arrow"
	if err := objstore.Put(context.Background(), public, remotePublic); err != nil {
		t.Fatal(err)
	}
	withPublic := func(args []string, pub string) []string {
		out := slices.Clone(args)
		for i, a := range out {
			if a == "PUBLIC" {
				out[i] = pub
			}
		}
		return out
	}
	tmp := root + "/tmp"
	budget := []string{"--epsilon", "2", "--delta", "1e-3"}
	for k, c := range [][]string{{"dpls"}, {"dpsgd", "--batch", "5"}, {"auto"}, {"dplp", "--steps", "3"}, {"dpplpublic", "--public", "PUBLIC", "--d-min", "0.5"}} {
		wantClf, code, _, errs := fitOn(t, c[0], single, filepath.Join(dir, fmt.Sprintf("%d-single.safetensors", k)), budget, append([]string{"--seed", "4"}, withPublic(c[1:], public)...)...)
		if code != 0 {
			t.Fatalf("%v on the local file: %s", c, errs)
		}
		for _, how := range [][]string{nil, {"--runner", "prism", "--runner-workers", "2", "--runner-option", "temp_location=" + tmp}} {
			got, code, _, errs := fitOn(t, c[0], out, filepath.Join(dir, fmt.Sprintf("%d-%d-remote.safetensors", k, len(how))), budget, append(append([]string{"--seed", "4"}, how...), withPublic(c[1:], remotePublic)...)...)
			if code != 0 {
				t.Fatalf("%v %v on %s: exit %d: %s", c, how, out, code, errs)
			}
			for i := range wantClf.Weight {
				if math.Abs(float64(got.Weight[i]-wantClf.Weight[i])) > 1e-6*math.Max(1, math.Abs(float64(wantClf.Weight[i]))) {
					t.Fatalf("%v %v: weight %d is %g, single machine %g", c, how, i, got.Weight[i], wantClf.Weight[i])
				}
			}
		}
	}
	objstore.Remove(context.Background(), remotePublic) // (the object list below is the extraction's)
	if left := objects(t, tmp); len(left) != 0 {
		t.Errorf("the passes left %v under temp_location", left)
	}

	// A second run needs --force; with it, the new generation replaces
	// the first once the manifest names it.
	if _, code, errs := extract(); code != 1 || !strings.Contains(errs, out+" exists: pass --force") {
		t.Errorf("a second run without --force: exit %d: %s", code, errs)
	}
	if rep, code, errs := extract("--force"); code != 0 || rep.ShardsMade != 4 {
		t.Fatalf("--force: exit %d %+v: %s", code, rep, errs)
	}
	equal("--force")
	m2, _ := features.ReadShardManifest(out)
	gen2 := strings.Split(m2.Shards[0].Path, "/")[1]
	if gen2 == gen {
		t.Errorf("the second run wrote generation %s again", gen)
	}
	for _, o := range objects(t, bucket) {
		if strings.Contains(o, gen) {
			t.Errorf("%s of the replaced run is left", o)
		}
	}

	// A run that fails (shard 2 of 4, every time) keeps its finished
	// shards and the earlier manifest; --resume makes only the others:
	// shard 2, and at most the shards the failed run said it left (how
	// many the other workers finished before the job failed depends on
	// the runner's order, and one still at work may finish after).
	t.Setenv("DPFEAT_FAULT", "fail-shard:2")
	_, code, errs = extract("--force")
	var kept int
	if code != 1 || !strings.Contains(errs, "--resume continues them") {
		t.Fatalf("a failing run: exit %d: %s", code, errs)
	}
	if m := regexp.MustCompile(`([0-3]) of 4 shards are finished`).FindStringSubmatch(errs); m == nil {
		t.Fatalf("a failing run does not say how many of its shards are finished: %s", errs)
	} else {
		kept, _ = strconv.Atoi(m[1])
	}
	if m3, _ := features.ReadShardManifest(out); m3 == nil || m3.Shards[0].Path != m2.Shards[0].Path {
		t.Fatalf("a failed run changed the manifest")
	}
	equal("after a failed run")
	t.Setenv("DPFEAT_FAULT", "")
	rep, code, errs = extract("--resume")
	if code != 0 || rep.ShardsMade < 1 || rep.ShardsMade > 4-kept || rep.Shards != 4 {
		t.Fatalf("--resume after %d of 4 shards were finished: exit %d, %+v: %s", kept, code, rep, errs)
	}
	equal("--resume")
	for _, o := range objects(t, bucket) {
		if strings.Contains(o, gen2) || strings.HasSuffix(o, "run.json") {
			t.Errorf("%s is left after the resumed run", o)
		}
	}

	// What object storage refuses, in one line each.
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"extract", "--encoder", model, "--data", data, "--out", bucket + "/one.arrow"}, "one machine writes a local feature file"},
		{[]string{"fit", "--method", "dpls", "--train", out, "--out", bucket + "/clf.safetensors", "--epsilon", "1", "--delta", "1e-5"}, "this output is written to a local path"},
		{[]string{"extract", "--encoder", model, "--data", data, "--out", root + "/x/../y.json", "--runner", "prism"}, "no . or .. elements"},
	} {
		code, _, errs := run(t, c.args...)
		if code != 1 || !strings.Contains(errs, c.want) || strings.Count(strings.TrimSpace(errs), "\n") > 0 {
			t.Errorf("%v: exit %d: %q; want one line with %q", c.args, code, errs, c.want)
		}
	}
}
