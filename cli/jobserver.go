package cli

import (
	"fmt"

	ucli "github.com/urfave/cli/v2"
)

// jobServerCommand starts a standalone Beam job server (Prism's) that
// --runner universal submits to; its workers are dpfeat-beam processes
// (environment_type=PROCESS) or the submitting process (LOOPBACK).
func jobServerCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "job-server",
		Usage: "run a standalone Apache Beam job server (Prism) for --runner universal; see docs/distributed.md",
		UsageText: "dpfeat job-server [--port N] [--idle-shutdown DURATION]\n\n" +
			"It prints its endpoint and serves until Ctrl-C. Prism listens on every interface: keep the port\n" +
			"behind a firewall. DPFEAT_BEAM_LOG=info shows Prism's own log.\n\nExample:\n" +
			"   dpfeat job-server --port 8073 &\n" +
			"   dpfeat extract --encoder enc.onnx --data photos --out train.json --runner universal \\\n" +
			"       --runner-option endpoint=localhost:8073 --runner-option environment_type=PROCESS \\\n" +
			"       --runner-option 'environment_config={\"command\": \"'$(command -v dpfeat-beam)'\"}'",
		Flags: []ucli.Flag{
			&ucli.IntFlag{Name: "port", Value: 8073, Usage: "the job service's port (0: a free one, printed)"},
			&ucli.DurationFlag{Name: "idle-shutdown", Usage: "stop after this long without a job (0: never)"},
		},
		Action: func(c *ucli.Context) error {
			port := c.Int("port")
			if port < 0 || port > 65535 {
				return userErrorf("--port %d: expected 0 to 65535", port)
			}
			if c.Duration("idle-shutdown") < 0 {
				return userErrorf("--idle-shutdown %v: expected a duration ≥ 0", c.Duration("idle-shutdown"))
			}
			return serveJobs(c.Context, port, c.Duration("idle-shutdown"), c.App.ErrWriter, func(ep string) {
				fmt.Fprintf(c.App.Writer, "job server at %s (--runner universal --runner-option endpoint=%s)\n", ep, ep)
			})
		},
	}
}
