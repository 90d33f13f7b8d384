// Command prototypes benchmarks the DP prototype methods on imbalanced data:
// the private half made long-tailed at IR ∈ {1, 10, 100} (Cui et al.
// profile), the public half without labels as the public set, the test set
// for evaluation. For dpplmean, dpplpublic, dpplpublick, dpls and dpfc and
// ε ∈ {0.01, 0.1, 1, 8}: median balanced accuracy and minority-class
// accuracy over 5 seeds, and median seconds per fit. Markdown on stdout.
// Run it through bench/prototypes.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/bench/internal/benchutil"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/train"
)

func main() {
	train := flag.String("train", "", "private-half feature file")
	test := flag.String("test", "", "test feature file")
	public := flag.String("public", "", "public-half feature file (labels ignored)")
	label := flag.String("label", "", "name for the table")
	seeds := flag.Int("seeds", 5, "seeds per cell")
	flag.Parse()
	if err := run(*train, *test, *public, *label, *seeds); err != nil {
		fmt.Fprintln(os.Stderr, "bench/prototypes:", err)
		os.Exit(1)
	}
}

// writeSubset writes the given rows (ascending) of a feature file to path.
func writeSubset(src string, rows []int, path string) error {
	f, err := features.Open(src, features.ReadOptions{})
	if err != nil {
		return err
	}
	defer f.Close()
	return features.CopyRows(f, rows, path, f.Metadata())
}

// scores returns balanced accuracy and minority accuracy (test examples of
// the 25% classes with the fewest training rows).
func scores(c *models.Classifier, te *features.Matrix, trainCounts []int64) (float64, float64) {
	k := len(c.Classes)
	rows, right := make([]float64, k), make([]float64, k)
	for i, p := range benchutil.Predict(c, te.Rows, te.Row) {
		y := te.Labels[i]
		rows[y]++
		if p == y {
			right[y]++
		}
	}
	idx := make([]int, k)
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return trainCounts[idx[a]] < trainCounts[idx[b]] })
	var bal, mr, mn float64
	for j := 0; j < k; j++ {
		bal += right[j] / rows[j]
	}
	for _, j := range idx[:int(math.Ceil(0.25*float64(k)))] {
		mr += right[j]
		mn += rows[j]
	}
	return bal / float64(k), mr / mn
}

func run(trainPath, testPath, publicPath, label string, seeds int) error {
	tr, err := features.ReadAll(trainPath, features.ReadOptions{})
	if err != nil {
		return err
	}
	te, err := features.ReadAll(testPath, features.ReadOptions{})
	if err != nil {
		return err
	}
	pf, err := features.Open(publicPath, features.ReadOptions{})
	if err != nil {
		return err
	}
	publicRows := pf.Rows()
	pf.Close()
	tmp, err := os.MkdirTemp("", "dpfeat-bench-prototypes-*")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp) // made by MkdirTemp above, for this benchmark alone
	classes := tr.Meta.Classes
	epsilons := []float64{0.01, 0.1, 1, 8}
	methods := []string{"dpplmean", "dpplpublic", "dpplpublick", "dpls", "dpfc"}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: public set %d unlabeled rows, test %d rows\n\n", label, publicRows, te.Rows)
	for _, ir := range []float64{1, 10, 100} {
		rule, err := features.NewImbalance(len(classes), ir, features.ProfileCui, 1, 0)
		if err != nil {
			return err
		}
		rows, _ := rule.Select(tr)
		// Minority classes by the public profile (as the sweep ranks them),
		// not by the subset's realized counts.
		var profile []int64
		pc, err := features.ImbalancedCounts(1<<30, len(classes), ir, features.ProfileCui)
		if err != nil {
			return err
		}
		for _, c := range pc {
			profile = append(profile, int64(c))
		}
		counts := make([]int64, len(classes))
		for _, i := range rows {
			counts[tr.Labels[i]]++
		}
		// The subset is written as a feature file and fitted through
		// train.Fit, as `dpfeat imbalance` then `dpfeat fit` would.
		subPath := filepath.Join(tmp, fmt.Sprintf("ir%g.arrow", ir))
		if err := writeSubset(trainPath, rows, subPath); err != nil {
			return err
		}
		cache := &train.Cache{}
		fmt.Fprintf(&b, "IR = %g (%d training rows, class sizes %d…%d). Cells: median balanced accuracy / minority-class accuracy over %d seeds.\n\n", ir, len(rows), counts[0], counts[len(counts)-1], seeds)
		fmt.Fprintf(&b, "| method | ε = 0.01 | ε = 0.1 | ε = 1 | ε = 8 | s/fit |\n|---|---|---|---|---|---|\n")
		for _, m := range methods {
			fmt.Fprintf(&b, "| %s |", m)
			var times []float64
			for _, eps := range epsilons {
				var bals, mins []float64
				for s := 0; s < seeds; s++ {
					req := train.Request{Method: m, Train: subPath, Cache: cache,
						Options: solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: eps, Delta: 1e-5, Noise: accounting.SeededNoise(uint64(s))}}}
					if strings.HasPrefix(m, "dpplpublic") {
						req.Public = publicPath
					}
					t0 := time.Now()
					r, err := train.Fit(context.Background(), req)
					if err != nil {
						return fmt.Errorf("%s IR %g ε %g: %w", m, ir, eps, err)
					}
					times = append(times, time.Since(t0).Seconds())
					bal, min := scores(r.Classifier, te, profile)
					bals, mins = append(bals, bal), append(mins, min)
				}
				fmt.Fprintf(&b, " %.3f / %.3f |", benchutil.Median(bals), benchutil.Median(mins))
				fmt.Fprintf(os.Stderr, "%s IR=%g %s ε=%g: %.3f / %.3f\n", label, ir, m, eps, benchutil.Median(bals), benchutil.Median(mins))
			}
			fmt.Fprintf(&b, " %.2f |\n", benchutil.Median(times))
		}
		fmt.Fprintln(&b)
	}
	fmt.Print(b.String())
	return nil
}
