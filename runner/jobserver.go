package runner

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"time"

	"github.com/apache/beam/sdks/v2/go/pkg/beam/runners/prism"
)

// JobServer is a standalone Beam job server: Prism's, as the Beam Go SDK's
// cmd/prism starts it, without its web UI. Pipelines reach it with
// --runner universal --runner-option endpoint=localhost:PORT; its workers
// are processes (environment_type=PROCESS, dpfeat-beam its own boot
// loader: Boot) or the submitting process (LOOPBACK).
type JobServer struct {
	// Port to listen on (0: a free one).
	Port int
	// Idle stops the server after this long without a job (0: never).
	Idle time.Duration
	// Log is where Prism's own log goes (nil: nowhere).
	Log *slog.Logger
}

// Serve starts the server, calls ready with its endpoint once it accepts
// jobs, and returns when ctx ends or the server has been idle for Idle.
//
// Prism listens on every interface (its job service takes a port, not an
// address; Beam's own cmd/prism is the same): keep the port behind a
// firewall, as the data its jobs read is private.
func (s JobServer) Serve(ctx context.Context, ready func(endpoint string)) (err error) {
	port := s.Port
	if port == 0 {
		if port, err = freePort(); err != nil {
			return err
		}
	}
	if s.Log != nil {
		slog.SetDefault(slog.New(quietStops{s.Log.Handler()}))
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	// Prism panics when the port is taken.
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = fmt.Errorf("job server on port %d: %v", port, r)
			}
		}()
		_, err = prism.CreateJobServer(ctx, prism.Options{Port: port, IdleShutdownTimeout: s.Idle, CancelFn: cancel})
	}()
	if err != nil {
		return err
	}
	ready("localhost:" + strconv.Itoa(port))
	<-ctx.Done()
	return nil
}

// freePort asks the system for a free TCP port on the loopback address.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("no free port for the job server: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// quietStops drops the error Prism logs each time it ends a job's PROCESS
// worker as it should — by killing it ("process failed while running",
// "signal: killed") — which otherwise reads as a failure after every job.
type quietStops struct{ slog.Handler }

func (q quietStops) Handle(ctx context.Context, r slog.Record) error {
	if r.Message == "process failed while running" {
		killed := false
		r.Attrs(func(a slog.Attr) bool {
			killed = killed || strings.Contains(a.Value.String(), "signal: killed")
			return !killed
		})
		if killed {
			return nil
		}
	}
	return q.Handler.Handle(ctx, r)
}

func (q quietStops) WithAttrs(as []slog.Attr) slog.Handler {
	return quietStops{q.Handler.WithAttrs(as)}
}
func (q quietStops) WithGroup(g string) slog.Handler { return quietStops{q.Handler.WithGroup(g)} }
