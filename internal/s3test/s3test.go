// Package s3test serves an in-memory Amazon S3 (gofakes3) on a loopback
// port for tests, so that the s3:// file system — the AWS SDK's real
// client, as Beam registers it — runs against HTTP here, in this process
// and in the worker processes a job server starts.
package s3test

import (
	"net/http/httptest"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Serve starts the server with the buckets made, and points the AWS SDK
// at it through the environment (t.Setenv: this process and the
// processes it starts; no credentials or configuration of the machine's
// are read). It returns the endpoint's URL; the server stops with t.
func Serve(t testing.TB, buckets ...string) string {
	t.Helper()
	backend := s3mem.New()
	for _, b := range buckets {
		if err := backend.CreateBucket(b); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	for k, v := range map[string]string{
		"AWS_ENDPOINT_URL": srv.URL, "AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test", "AWS_REGION": "us-east-1",
		"AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null", "AWS_EC2_METADATA_DISABLED": "true",
	} {
		t.Setenv(k, v)
	}
	return srv.URL
}
