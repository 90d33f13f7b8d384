package cli

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestFitNotesFeaturesFarFromCentred (#40 item 10), through the command:
// embeddings with a large common mean make dpls note it, in stderr and
// in --json's warnings; the same embeddings centred do not.
func TestFitNotesFeaturesFarFromCentred(t *testing.T) {
	dir := t.TempDir()
	const n, d = 4000, 16
	write := func(name string, shift float64) string {
		r := rand.New(rand.NewPCG(1, 2))
		common, centers := make([]float64, d), make([][]float64, 4)
		for k := range common {
			common[k] = r.NormFloat64()
		}
		for j := range centers {
			centers[j] = make([]float64, d)
			for k := range centers[j] {
				centers[j][k] = r.NormFloat64()
			}
		}
		var b strings.Builder
		for k := 0; k < d; k++ {
			fmt.Fprintf(&b, "f%d,", k)
		}
		b.WriteString("label\n")
		for i := 0; i < n; i++ {
			j := i % 4
			for k := 0; k < d; k++ {
				fmt.Fprintf(&b, "%.5f,", shift*common[k]+centers[j][k]+0.8*r.NormFloat64())
			}
			fmt.Fprintf(&b, "c%d\n", j)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, c := range []struct {
		shift float64
		want  bool
	}{{0, false}, {30, true}} {
		train := write(fmt.Sprintf("shift%g.csv", c.shift), c.shift)
		code, out, errs := run(t, "fit", "--method", "dpls", "--train", train, "--classes", "c0,c1,c2,c3", "--epsilon", "1", "--delta", "1e-5",
			"--out", filepath.Join(dir, fmt.Sprintf("c%g.safetensors", c.shift)), "--json")
		if code != 0 {
			t.Fatalf("shift %g: exit %d: %s", c.shift, code, errs)
		}
		var rep fitReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatal(err)
		}
		inJSON := strings.Contains(strings.Join(rep.Warnings, "\n"), "far from centred")
		if got := strings.Contains(errs, "far from centred"); got != c.want || inJSON != c.want {
			t.Errorf("shift %g: noted on stderr %v, in --json %v; want %v\n%s", c.shift, got, inJSON, c.want, errs)
		}
	}
}
