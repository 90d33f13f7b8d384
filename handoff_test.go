package main

import "testing"

// TestUsesRunner: the command lines the nobeam build hands to dpfeat-beam.
func TestUsesRunner(t *testing.T) {
	for _, c := range []struct {
		args []string
		want bool
	}{
		{[]string{"fit", "--train", "a.arrow"}, false},
		{[]string{"fit", "--runner", "prism"}, true},
		{[]string{"fit", "--runner=flink"}, true},
		{[]string{"job-server"}, true},
		{[]string{"fit", "--train", "gs://bucket/train.json"}, true},
		{[]string{"fit", "--train=s3://bucket/train.json"}, true},
		{[]string{"predict", "--features", "memfs://x.arrow"}, true},
		{[]string{"fit", "--train", "hdfs://nn/train.json"}, false}, // (no build has it: the error says so)
		{[]string{"fit", "--", "--runner", "gs://b/x"}, false},
	} {
		if got := usesRunner(c.args); got != c.want {
			t.Errorf("%v: %v, want %v", c.args, got, c.want)
		}
	}
}
