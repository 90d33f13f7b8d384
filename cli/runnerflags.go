package cli

import (
	"os"
	"path/filepath"
	"strings"

	ucli "github.com/urfave/cli/v2"

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

// runnerTemp makes the folder where a runner's results for the driver go:
// a new folder beside path (a shared folder on remote runners, as the data
// must be). It never falls back to another folder: the caller removes
// what it returns, which must be only what this run created.
func runnerTemp(flag, path string) (string, error) {
	dir, err := os.MkdirTemp(filepath.Dir(path), ".dpfeat-runner-")
	if err != nil {
		return "", userErrorf("--%s %s: the runner's scratch folder cannot be made beside it: %v", flag, path, err)
	}
	return dir, nil
}
