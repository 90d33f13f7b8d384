// Command scale writes a synthetic feature file of ImageNet's shape for the
// scale benchmark (bench/scale.sh): by default 1,281,167 rows of D = 1664
// float32 features in m = 1000 classes, labels uniformly random, rows
// x = μ_y + noise with random class means, so that a fitted classifier has
// something to find. Generation is deterministic in -seed.
//
//	go run ./bench/scale -out train.arrow [-rows N] [-dim D] [-classes M] [-seed S]
package main

import (
	"flag"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"runtime"
	"sync"

	"github.com/dpfeat/dpfeat/features"
)

func main() {
	out := flag.String("out", "", "feature file to write")
	rows := flag.Int("rows", 1281167, "rows")
	dim := flag.Int("dim", 1664, "feature dimension D")
	classes := flag.Int("classes", 1000, "classes m")
	seed := flag.Uint64("seed", 1, "seed (the class means depend only on it; train and test files share them)")
	stream := flag.Uint64("stream", 0, "row stream: use another value for a test file")
	noise := flag.Float64("noise", 2, "noise norm relative to the class means' norm")
	batch := flag.Int("batch", 4096, "rows per record batch")
	flag.Parse()
	if *out == "" || *rows < 1 || *dim < 1 || *classes < 2 || *batch < 1 {
		fmt.Fprintln(os.Stderr, "usage: scale -out FILE [-rows N] [-dim D] [-classes M] [-seed S] [-stream K]")
		os.Exit(2)
	}
	if err := run(*out, *rows, *dim, *classes, *seed, *stream, *noise, *batch); err != nil {
		fmt.Fprintln(os.Stderr, "scale:", err)
		os.Exit(1)
	}
}

func run(out string, rows, d, m int, seed, stream uint64, noise float64, batch int) error {
	r := rand.New(rand.NewPCG(seed, 0))
	means := make([]float32, m*d)
	s := 1 / math.Sqrt(float64(d))
	for i := range means {
		means[i] = float32(r.NormFloat64() * s)
	}
	names := make([]string, m)
	for i := range names {
		names[i] = fmt.Sprintf("c%04d", i)
	}
	w, err := features.Create(out, d, features.Metadata{EncoderName: "synthetic", Classes: names,
		Source: fmt.Sprintf("bench/scale: %d×%d, %d classes, seed %d, stream %d, noise %g", rows, d, m, seed, stream, noise)}, features.WriterOptions{})
	if err != nil {
		return err
	}
	nb := (rows + batch - 1) / batch
	// Batches are generated in parallel, each from its own stream, and
	// written in order.
	ready := make([]chan features.Batch, nb)
	for i := range ready {
		ready[i] = make(chan features.Batch, 1)
	}
	sem := make(chan struct{}, runtime.NumCPU()+1)
	var wg sync.WaitGroup
	go func() {
		for i := 0; i < nb; i++ {
			sem <- struct{}{}
			wg.Add(1)
			go func(i int) {
				defer wg.Done()
				n := min(batch, rows-i*batch)
				rr := rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, stream<<32|uint64(i)))
				b := features.Batch{Dim: d, Features: make([]float32, n*d), Labels: make([]int32, n)}
				ns := noise * s
				for j := 0; j < n; j++ {
					c := rr.IntN(m)
					b.Labels[j] = int32(c)
					mu := means[c*d : (c+1)*d]
					x := b.Features[j*d : (j+1)*d]
					for k := range x {
						x[k] = mu[k] + float32(rr.NormFloat64()*ns)
					}
				}
				ready[i] <- b
			}(i)
		}
	}()
	for i := 0; i < nb; i++ {
		b := <-ready[i]
		<-sem
		if err := w.Write(b); err != nil {
			w.Abort()
			return err
		}
		if i%50 == 0 {
			fmt.Fprintf(os.Stderr, "\rscale: %d/%d rows", int64(i)*int64(batch), rows)
		}
	}
	wg.Wait()
	fmt.Fprintf(os.Stderr, "\rscale: %d/%d rows\n", rows, rows)
	return w.Close()
}
