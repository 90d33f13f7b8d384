package runner

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/apache/beam/sdks/v2/go/container/tools"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/artifact"
	pipepb "github.com/apache/beam/sdks/v2/go/pkg/beam/model/pipeline_v1"
	"github.com/apache/beam/sdks/v2/go/pkg/beam/util/grpcx"

	"github.com/dpfeat/dpfeat/runner/spec"
)

// Boot is the PROCESS environment's boot loader (Beam's worker contract,
// https://s.apache.org/beam-fn-api-container-contract, as the Go SDK's
// container boot keeps it): a runner starts the environment's command
// with --id and --provision_endpoint; Boot asks the provision service
// for the job's endpoints and options, retrieves the staged worker binary
// (the driver's worker_binary: this dpfeat, or the one a cluster was
// given) into a folder of its own, and runs it with --worker as a child
// process, which is then the worker the runner talks to. Boot returns
// the worker's exit status; the folder is removed after it exits, and the
// worker is killed if the boot loader is (the runner stops a worker by
// killing the command it started).
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
	parent := a.SemiPersist
	if parent == "" {
		parent = os.TempDir()
	}
	dir, err := os.MkdirTemp(parent, "dpfeat-worker-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir) // this run's own folder, made just above
	staged := filepath.Join(dir, "staged")
	got, err := artifact.Materialize(ctx, arts, info.GetDependencies(), info.GetRetrievalToken(), staged)
	if err != nil {
		return 0, fmt.Errorf("retrieving the staged worker binary: %w", err)
	}
	name, err := workerArtifact(got)
	if err != nil {
		return 0, err
	}
	prog := filepath.Join(dir, "worker")
	if err := copyExecutable(filepath.Join(staged, name), prog); err != nil {
		return 0, fmt.Errorf("the staged worker binary: %w", err)
	}
	opts, err := tools.ProtoToJSON(info.GetPipelineOptions())
	if err != nil {
		return 0, fmt.Errorf("the job's pipeline options: %w", err)
	}
	optFile := filepath.Join(dir, "pipeline_options.json")
	if err := os.WriteFile(optFile, []byte(opts), 0o600); err != nil {
		return 0, err
	}
	cmd := exec.Command(prog, "--worker=true", "--id="+a.ID, "--logging_endpoint="+logging,
		"--control_endpoint="+control, "--semi_persist_dir="+dir)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = nil, os.Stdout, os.Stderr
	cmd.Env = append(os.Environ(), "PIPELINE_OPTIONS_FILE="+optFile)
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

// copyExecutable copies src to a new executable dst (a staged file may sit
// on a volume that does not execute, and is not executable itself).
func copyExecutable(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o700)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
