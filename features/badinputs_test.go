package features

import (
	"strings"
	"testing"

	"github.com/dpfeat/dpfeat/internal/badinputs"
)

// TestBadInputCorpus (#35 items 6, 7, 8, 15): every file of the corpus
// slice is refused with an error naming what is wrong, before anything the
// file claims is allocated (the claims add up to terabytes: a test that
// allocated them would die here); a damaged entry is refused, not read.
func TestBadInputCorpus(t *testing.T) {
	dir := t.TempDir()
	cases, err := badinputs.Write(dir, 3_000_000)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range cases {
		if c.Extract {
			continue
		}
		f, err := Open(dir+"/"+c.File, ReadOptions{})
		if err == nil {
			f.Close()
			t.Errorf("%s: opened", c.Name)
			continue
		}
		if !strings.Contains(err.Error(), c.Want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v", c.Name, err)
		}
	}
}
