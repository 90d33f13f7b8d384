package runner

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/apache/beam/sdks/v2/go/container/tools"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/artifact"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"
	"google.golang.org/protobuf/proto"

	"github.com/dpfeat/dpfeat/internal/filehash"
	"github.com/dpfeat/dpfeat/runner/spec"
)

// Boot is the PROCESS environment's boot loader (Beam's worker contract,
// https://s.apache.org/beam-fn-api-container-contract, as the Go SDK's
// container boot keeps it): a runner starts the environment's command
// with --id and --provision_endpoint; Boot asks the provision service
// for the job's endpoints and options, retrieves the staged worker binary
// (the driver's worker_binary: this dpfeat, or the one a cluster was
// given) into a cache of worker binaries by SHA-256 (workerBinary), and
// runs it with --worker as a child process, which is then the worker the
// runner talks to. Boot returns the worker's exit status. The worker is
// killed if the boot loader is (a runner stops a PROCESS worker by
// killing the command it started), and the boot loader if the job server
// that started it dies; nothing is written for a single start, since
// nothing would be left alive to remove it.
//
// So dpfeat-beam is its own PROCESS environment:
// environment_type=PROCESS, environment_config={"command": "/path/to/dpfeat-beam"}.
func Boot(args []string) int {
	a := spec.ParseBoot(args)
	if a.ID == "" || a.Provision == "" {
		fmt.Fprintln(os.Stderr, "dpfeat: a worker boot needs --id and --provision_endpoint (a Beam runner's PROCESS environment passes them)")
		return 1
	}
	code, err := boot(a)
	if err != nil {
		fmt.Fprintf(os.Stderr, "dpfeat: worker %s: %v\n", a.ID, err)
		return 1
	}
	return code
}

func boot(a spec.BootArgs) (int, error) {
	dieWithParent()
	if os.Getenv("DPFEAT_BEAM_LOG") == "" {
		log.SetOutput(io.Discard) // Beam's artifact retrieval logs each file
	}
	ctx := grpcx.WriteWorkerID(context.Background(), a.ID)
	info, err := tools.ProvisionInfo(ctx, a.Provision)
	if err != nil {
		return 0, fmt.Errorf("provision service at %s: %w", a.Provision, err)
	}
	control, logging, arts := info.GetControlEndpoint().GetUrl(), info.GetLoggingEndpoint().GetUrl(), info.GetArtifactEndpoint().GetUrl()
	if control == "" || logging == "" || arts == "" {
		return 0, fmt.Errorf("the provision service at %s gave no control, logging or artifact endpoint", a.Provision)
	}
	prog, err := workerBinary(ctx, arts, info.GetDependencies(), info.GetRetrievalToken())
	if err != nil {
		return 0, err
	}
	opts, err := tools.ProtoToJSON(info.GetPipelineOptions())
	if err != nil {
		return 0, fmt.Errorf("the job's pipeline options: %w", err)
	}
	persist := a.SemiPersist
	if persist == "" {
		persist = os.TempDir()
	}
	// The options go as a flag (the harness still reads it), not a file:
	// a runner ends a PROCESS worker by killing it, so nothing written
	// for one start could be removed after it.
	cmd := exec.Command(prog, "--worker=true", "--id="+a.ID, "--logging_endpoint="+logging,
		"--control_endpoint="+control, "--semi_persist_dir="+persist, "--options="+opts)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	cmd.Env = os.Environ()
	if ep := info.GetStatusEndpoint().GetUrl(); ep != "" {
		cmd.Env = append(cmd.Env, "STATUS_ENDPOINT="+ep)
	}
	if caps := info.GetRunnerCapabilities(); len(caps) > 0 {
		cmd.Env = append(cmd.Env, "RUNNER_CAPABILITIES="+strings.Join(caps, " "))
	}
	cmd.SysProcAttr = childOf()
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGINT, syscall.SIGTERM)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		return 0, err
	}
	go func() {
		for s := range sigs {
			cmd.Process.Signal(s)
		}
	}()
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		if st, ok := exit.Sys().(syscall.WaitStatus); ok && st.Signaled() {
			return 128 + int(st.Signal()), nil
		}
		return exit.ExitCode(), nil
	}
	return 0, err
}

// workerArtifact names the staged worker binary among the artifacts: the
// only one, the one whose role says so, or the one named "worker" (the
// Go SDK boot's rule).
func workerArtifact(arts []*pipepb.ArtifactInformation) (string, error) {
	switch len(arts) {
	case 0:
		return "", errors.New("the job staged no worker binary")
	case 1:
		name, _ := artifact.MustExtractFilePayload(arts[0])
		return name, nil
	}
	for _, a := range arts {
		if a.GetRoleUrn() == artifact.URNGoWorkerBinaryRole {
			name, _ := artifact.MustExtractFilePayload(a)
			return name, nil
		}
	}
	for _, a := range arts {
		if name, _ := artifact.MustExtractFilePayload(a); name == "worker" {
			return name, nil
		}
	}
	return "", fmt.Errorf("none of the job's %d staged files is the worker binary", len(arts))
}

// workerBinary returns the staged worker binary's path in the cache
// (os.UserCacheDir()/dpfeat/workers/SHA256): a binary already there under
// the SHA-256 the job declares is used as it is; otherwise the job's
// artifacts are retrieved into a temporary folder beside it, the worker
// binary hashed and renamed into place, and the folder removed before the
// worker starts. The cache keeps the three binaries used last.
func workerBinary(ctx context.Context, endpoint string, deps []*pipepb.ArtifactInformation, token string) (string, error) {
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = os.TempDir()
	}
	cache = filepath.Join(cache, "dpfeat", "workers")
	if err := os.MkdirAll(cache, 0o700); err != nil {
		return "", fmt.Errorf("the worker binary cache: %w", err)
	}
	if sum := declaredSHA256(deps); sum != "" {
		if p := filepath.Join(cache, sum); isFile(p) {
			now := time.Now()
			os.Chtimes(p, now, now)
			return p, nil
		}
	}
	tmp, err := os.MkdirTemp(cache, ".staged-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp) // this start's own folder, made just above
	got, err := artifact.Materialize(ctx, endpoint, deps, token, tmp)
	if err != nil {
		return "", fmt.Errorf("retrieving the staged worker binary: %w", err)
	}
	name, err := workerArtifact(got)
	if err != nil {
		return "", err
	}
	src := filepath.Join(tmp, name)
	sum, err := filehash.SHA256(src)
	if err != nil {
		return "", fmt.Errorf("the staged worker binary: %w", err)
	}
	if err := os.Chmod(src, 0o700); err != nil {
		return "", err
	}
	dst := filepath.Join(cache, sum)
	if err := os.Rename(src, dst); err != nil {
		return "", fmt.Errorf("the worker binary cache: %w", err)
	}
	pruneWorkers(cache, 3)
	return dst, nil
}

// declaredSHA256 is the SHA-256 the job declares for its worker binary
// ("" when it declares none, or more than one artifact without the
// worker role).
func declaredSHA256(deps []*pipepb.ArtifactInformation) string {
	var pick *pipepb.ArtifactInformation
	for _, d := range deps {
		if d.GetRoleUrn() == artifact.URNGoWorkerBinaryRole || len(deps) == 1 {
			pick = d
		}
	}
	if pick == nil || pick.GetTypeUrn() != artifact.URNFileArtifact {
		return ""
	}
	var fp pipepb.ArtifactFilePayload
	if err := proto.Unmarshal(pick.GetTypePayload(), &fp); err != nil || !isSHA256(fp.GetSha256()) {
		return ""
	}
	return fp.GetSha256()
}

func isSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	_, err := hex.DecodeString(s)
	return err == nil && strings.ToLower(s) == s
}

func isFile(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular()
}

// pruneWorkers removes all but the keep most recently used binaries of the
// cache (files named by a SHA-256), and the retrieval folders of starts
// killed more than an hour ago; nothing else there is touched.
func pruneWorkers(cache string, keep int) {
	ents, err := os.ReadDir(cache)
	if err != nil {
		return
	}
	type bin struct {
		path string
		used time.Time
	}
	var bins []bin
	for _, e := range ents {
		info, err := e.Info()
		switch {
		case err != nil:
		case info.Mode().IsRegular() && isSHA256(e.Name()):
			bins = append(bins, bin{filepath.Join(cache, e.Name()), info.ModTime()})
		case info.IsDir() && strings.HasPrefix(e.Name(), ".staged-") && time.Since(info.ModTime()) > time.Hour:
			// a start killed while it retrieved the binary
			os.RemoveAll(filepath.Join(cache, e.Name()))
		}
	}
	slices.SortFunc(bins, func(a, b bin) int { return b.used.Compare(a.used) })
	for _, b := range bins[min(keep, len(bins)):] {
		os.Remove(b.path)
	}
}
