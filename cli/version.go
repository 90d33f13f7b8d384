package cli

import (
	"runtime"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/internal/backend"
)

type versionInfo struct {
	Version string `json:"version"`
	Go      string `json:"go"`
	OS      string `json:"os"`
	Arch    string `json:"arch"`
	Backend string `json:"backend"`
}

func versionCommand() *ucli.Command {
	return &ucli.Command{
		Name:      "version",
		Usage:     "print dpfeat's version and the backends it was built with",
		UsageText: "dpfeat version [--json]\n\nExample:\n   dpfeat version --json",
		Flags:     []ucli.Flag{jsonFlag()},
		Action: func(c *ucli.Context) error {
			v := versionInfo{Version: Version, Go: runtime.Version(), OS: runtime.GOOS, Arch: runtime.GOARCH, Backend: backend.Name()}
			if c.Bool("json") {
				return writeJSON(c.App.Writer, v)
			}
			return printf(c.App.Writer, "dpfeat %s (%s, %s/%s)\nlinear algebra: %s\n", v.Version, v.Go, v.OS, v.Arch, v.Backend)
		},
	}
}
