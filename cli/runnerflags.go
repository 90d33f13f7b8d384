package cli

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/internal/interrupt"
	"github.com/dpfeat/dpfeat/internal/objstore"
	"github.com/dpfeat/dpfeat/runner/spec"
)

// runnerFlags are the flags that run a command's parallel work on an
// Apache Beam runner (package runner).
func runnerFlags(what string) []ucli.Flag {
	return []ucli.Flag{
		&ucli.StringFlag{Name: "runner", Usage: what + " as an Apache Beam pipeline on " + strings.Join(spec.Runners, ", ") + " (prism runs in this process); see docs/distributed.md"},
		&ucli.StringSliceFlag{Name: "runner-option", Usage: "a Beam pipeline option as name=value (repeatable): endpoint, environment_type, environment_config, project, region, temp_location, …"},
		&ucli.IntFlag{Name: "runner-workers", Usage: "shards one worker process handles at once (0: its cores; on prism, 1 and 2 compare one worker with two)"},
	}
}

// runnerFrom reads runnerFlags: nil without --runner.
func runnerFrom(c *ucli.Context) (*spec.Options, error) {
	name := c.String("runner")
	if name == "" {
		if c.IsSet("runner-option") || c.IsSet("runner-workers") || c.IsSet("shard-rows") {
			return nil, userErrorf("--runner-option, --runner-workers and --shard-rows go with --runner")
		}
		return nil, nil
	}
	o := &spec.Options{Runner: name, Workers: c.Int("runner-workers"), Flags: map[string]string{}}
	for _, kv := range c.StringSlice("runner-option") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, userErrorf("--runner-option %q: expected name=value", kv)
		}
		o.Flags[strings.TrimLeft(k, "-")] = v
	}
	if err := checkRunner(*o); err != nil {
		return nil, userErrorf("--runner: %v", err)
	}
	return o, nil
}

// runnerTemp makes the folder where a runner's results for the driver go
// (exact per-pass sums of private data): a new folder beside path (a
// shared folder on remote runners, as the data must be), named after it.
// It never falls back to another folder. The folder is removed by the
// returned remove, or at once if the process is stopped (package
// interrupt): only what this run created. The caller holds path's lock,
// so folders of that name left by a run that crashed before removing its
// own are this output's: they go first (#36 note).
func runnerTemp(flag, path string) (dir string, remove func(), err error) {
	prefix := "." + filepath.Base(path) + ".runner-"
	stale, _ := filepath.Glob(filepath.Join(filepath.Dir(path), prefix+"*"))
	for _, s := range stale {
		removeScratch(s)
	}
	if dir, remove, err = scratchFolder(filepath.Dir(path), prefix); err != nil {
		return "", nil, userErrorf("--%s %s: the runner's scratch folder cannot be made beside it: %v", flag, path, err)
	}
	return dir, remove, nil
}

// scratchFolder makes a new folder in parent, named prefix and a random
// suffix, registered with package interrupt; remove removes it (the
// folder made here, nothing else).
func scratchFolder(parent, prefix string) (dir string, remove func(), err error) {
	if dir, err = os.MkdirTemp(parent, prefix); err != nil {
		return "", nil, err
	}
	untrack := interrupt.Temporary(dir)
	return dir, func() {
		os.RemoveAll(dir) // the folder made just above, nothing else
		untrack()
	}, nil
}

// passScratch is where a fit's passes leave their results for the driver:
// under the Beam option temp_location when it is given (a folder, or a
// prefix on object storage such as gs://bucket/tmp: what a cluster whose
// workers share no disk with the driver needs), in a folder or prefix of
// this run's own; else runnerTemp's folder beside path. Each result is
// removed once read; remove removes what is left of this run's.
func passScratch(o *spec.Options, flag, path string) (dir string, remove func(), err error) {
	loc := o.Flags["temp_location"]
	if loc == "" {
		return runnerTemp(flag, path)
	}
	if !objstore.IsRemote(loc) {
		if dir, remove, err = scratchFolder(loc, "dpfeat-runner-"); err != nil {
			return "", nil, userErrorf("--runner-option temp_location=%s: %v", loc, err)
		}
		return dir, remove, nil
	}
	var id [8]byte
	rand.Read(id[:])
	dir = objstore.Join(loc, "dpfeat-runner-"+hex.EncodeToString(id[:]))
	if err := objstore.CheckName(dir); err != nil {
		return "", nil, userErrorf("--runner-option temp_location=%s: %v", loc, err)
	}
	return dir, func() {
		ctx := context.Background()
		names, _ := objstore.List(ctx, dir, "dpfeat-pass-*")
		for _, n := range names {
			objstore.Remove(ctx, n) // results of this run (its own prefix)
		}
	}, nil
}

// removeScratch removes a crashed run's scratch folder (runnerTemp's name,
// under the output's lock): its files, then the folder — never a folder
// that holds anything but plain files, which runnerTemp's never does.
func removeScratch(dir string) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	for _, e := range ents {
		if !e.Type().IsRegular() {
			return
		}
	}
	for _, e := range ents {
		os.Remove(filepath.Join(dir, e.Name()))
	}
	os.Remove(dir)
}
