package runner

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestRetryLost: a job that loses a worker process runs again, at most
// lostRetries times, and the last error says how often it ran; any other
// failure, and a cancelled run, are not retried.
func TestRetryLost(t *testing.T) {
	lost := &workerLost{errors.New("prism: a worker process stopped mid-bundle; SDK worker disconnected")}
	for _, c := range []struct {
		name  string
		fails []error // the error of each run; nil after them
		runs  int
		want  string // in the error ("" for none)
	}{
		{"ok", nil, 1, ""},
		{"lost once", []error{lost}, 2, ""},
		{"lost twice", []error{lost, lost}, 3, ""},
		{"lost always", []error{lost, lost, lost, lost}, 3, "[run 3 times]"},
		{"another failure", []error{errors.New("shard 2: bad image")}, 1, "bad image"},
	} {
		runs := 0
		err := retryLost(context.Background(), "the test job", func() error {
			runs++
			if runs <= len(c.fails) {
				return c.fails[runs-1]
			}
			return nil
		})
		if runs != c.runs || (c.want == "") != (err == nil) || err != nil && !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %d runs, %v; want %d runs and %q", c.name, runs, err, c.runs, c.want)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	runs := 0
	retryLost(ctx, "the test job", func() error { runs++; return lost })
	if runs != 1 {
		t.Errorf("a cancelled run ran %d times", runs)
	}
}
