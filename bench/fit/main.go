// Command fit benchmarks the feature-space solvers: for each method and
// ε ∈ {0.01, 0.1, 1, 8} (δ = 1e-5), the median test accuracy over 5 seeds
// with default hyperparameters, and the median fit time; the non-private
// references once. It prints a Markdown table. Run it through bench/fit.sh.
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/bench/internal/benchutil"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/solvers"
	"github.com/dpfeat/dpfeat/train"
)

func main() {
	train := flag.String("train", "", "training feature file")
	test := flag.String("test", "", "test feature file")
	seeds := flag.Int("seeds", 5, "seeds per cell")
	label := flag.String("label", "", "name of the features, for the table")
	flag.Parse()
	if err := run(*train, *test, *seeds, *label); err != nil {
		fmt.Fprintln(os.Stderr, "bench/fit:", err)
		os.Exit(1)
	}
}

func run(trainPath, testPath string, seeds int, label string) error {
	trm, err := features.ReadAll(trainPath, features.ReadOptions{})
	if err != nil {
		return err
	}
	te, err := features.ReadAll(testPath, features.ReadOptions{})
	if err != nil {
		return err
	}
	// Every fit goes through train.Fit, as `dpfeat fit` does; the cache
	// loads the in-memory methods' rows once.
	cache := &train.Cache{}
	fit := func(method string, o solvers.Options) (*train.Outcome, error) {
		return train.Fit(context.Background(), train.Request{Method: method, Train: trainPath, Options: o, Cache: cache})
	}
	epsilons := []float64{0.01, 0.1, 1, 8}
	var b strings.Builder
	fmt.Fprintf(&b, "### %s: train %d rows × %d (%s), test %d rows\n\n", label, trm.Rows, trm.Dim, trm.Meta.EncoderName, te.Rows)
	fmt.Fprintf(&b, "Median test accuracy over %d seeds (min–max), default hyperparameters, δ = 1e-5; median fit seconds.\n\n", seeds)
	fmt.Fprintf(&b, "| method |")
	for _, e := range epsilons {
		fmt.Fprintf(&b, " ε = %g |", e)
	}
	fmt.Fprintf(&b, " fit s |\n|---|")
	for range epsilons {
		fmt.Fprintf(&b, "---|")
	}
	fmt.Fprintf(&b, "---|\n")
	for _, method := range []string{"dpls", "dpfc", "dpnewton", "dpsgd", "auto"} {
		fmt.Fprintf(&b, "| %s |", method)
		var times []float64
		for _, eps := range epsilons {
			var accs []float64
			for s := 0; s < seeds; s++ {
				t0 := time.Now()
				r, err := fit(method, solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: eps, Delta: 1e-5, Noise: accounting.SeededNoise(uint64(s))}})
				if err != nil {
					return fmt.Errorf("%s ε=%v: %w", method, eps, err)
				}
				times = append(times, time.Since(t0).Seconds())
				accs = append(accs, benchutil.Accuracy(r.Classifier, te))
			}
			sort.Float64s(accs)
			fmt.Fprintf(&b, " %.4f (%.4f–%.4f) |", benchutil.Median(accs), accs[0], accs[len(accs)-1])
			fmt.Fprintf(os.Stderr, "%s %s ε=%g: %.4f\n", label, method, eps, benchutil.Median(accs))
		}
		fmt.Fprintf(&b, " %.2f |\n", benchutil.Median(times))
	}
	for _, method := range []string{"ls", "newton"} {
		t0 := time.Now()
		r, err := fit(method, solvers.Options{Privacy: accounting.ReleaseOptions{Epsilon: math.Inf(1)}})
		if err != nil {
			return err
		}
		sec := time.Since(t0).Seconds()
		a := benchutil.Accuracy(r.Classifier, te)
		fmt.Fprintf(&b, "| %s (non-private) | %.4f | %.4f | %.4f | %.4f | %.2f |\n", method, a, a, a, a, sec)
	}
	fmt.Print(b.String())
	return nil
}
