package spec

import "testing"

// TestBootArgs: a PROCESS environment's start (Prism quotes the id) is a
// boot, read whatever the flags' spelling; a worker start or a command is
// not.
func TestBootArgs(t *testing.T) {
	for _, c := range []struct {
		args   []string
		boot   bool
		worker bool
		want   BootArgs
	}{
		{[]string{"--id='job-1_go'", "--provision_endpoint=localhost:4000"}, true, true, BootArgs{ID: "job-1_go", Provision: "localhost:4000"}},
		{[]string{"-id", "7", "-provision_endpoint", "h:1", "--semi_persist_dir=/tmp/s"}, true, true, BootArgs{ID: "7", Provision: "h:1", SemiPersist: "/tmp/s"}},
		{[]string{"--worker=true", "--id=7", "--control_endpoint=h:1"}, false, true, BootArgs{ID: "7"}},
		{[]string{"--worker", "--id=7", "--provision_endpoint=h:1"}, false, true, BootArgs{ID: "7", Provision: "h:1"}},
		{[]string{"fit", "--method", "dpls", "--id", "x"}, false, false, BootArgs{ID: "x"}},
		{[]string{"extract", "--id"}, false, false, BootArgs{}},
	} {
		if got := ParseBoot(c.args); got != c.want {
			t.Errorf("ParseBoot(%q) = %+v, want %+v", c.args, got, c.want)
		}
		if IsBoot(c.args) != c.boot || IsWorker(c.args) != c.worker {
			t.Errorf("%q: IsBoot %v IsWorker %v, want %v %v", c.args, IsBoot(c.args), IsWorker(c.args), c.boot, c.worker)
		}
	}
}
