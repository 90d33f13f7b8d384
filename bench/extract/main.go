// Command extract benchmarks and checks `dpfeat extract` on the shared
// encoders and Fashion-MNIST's test set:
//
//   - images/s end to end (read IDX, decode, preprocess, encode, write the
//     feature file), versus images/s of bare ONNX Runtime Run calls on
//     ready tensors with the same batch size and threads, and their ratio
//     (target ≥ 0.95), the two alternating;
//   - with -tensors (from torch_tensors.py), the features dpfeat wrote
//     against a bare Run on tensors PyTorch prepared (target: ≤ 1e-5).
//
// Run it through bench/extract.sh, which prepares everything.
package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"slices"
	"time"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

type result struct {
	Model             string  `json:"model"`
	Images            int64   `json:"images"`
	Batch             int     `json:"batch"`
	Threads           int     `json:"threads"`
	Workers           int     `json:"workers"`
	EndToEndPerSecond float64 `json:"end_to_end_images_per_second"`
	BareRunPerSecond  float64 `json:"bare_run_images_per_second"`
	Ratio             float64 `json:"ratio"`
	// MedianPairRatio is the median over repetitions of one pipeline run
	// against the bare loop run right after it.
	MedianPairRatio   float64 `json:"median_pair_ratio"`
	TensorsChecked    int     `json:"tensors_checked,omitempty"`
	MaxAbsDiffVsTorch float64 `json:"max_abs_diff_vs_torch_tensors,omitempty"`
	Spin              bool    `json:"ort_spinning"`
	Runtime           string  `json:"onnxruntime"`
	CPUs              int     `json:"cpus"`
}

func main() {
	model := flag.String("model", "", "ONNX encoder (manifest beside it)")
	data := flag.String("data", "/usr/share/datasets/fashion-mnist", "Fashion-MNIST IDX folder")
	batch := flag.Int("batch", 64, "images per Run")
	threads := flag.Int("threads", runtime.NumCPU(), "ONNX Runtime intra-op threads")
	workers := flag.Int("workers", max(1, runtime.NumCPU()/4), "decode/preprocess goroutines (dpfeat extract's default)")
	tensors := flag.String("tensors", "", "raw float32 NCHW tensors from torch_tensors.py")
	reps := flag.Int("reps", 5, "repetitions; the best is reported")
	limit := flag.Int64("limit", 0, "images (0: the whole test set); a ViT-B/16-sized model takes ~0.1 s an image on 2 cores")
	spin := flag.Bool("spin", false, "let ONNX Runtime threads busy-wait")
	device := flag.String("device", "cpu", "cpu, cuda, cuda:N")
	split := flag.String("split", "test", "the dataset's split (\"\" for an image folder without splits)")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the run")
	flag.Parse()
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench/extract:", err)
			os.Exit(1)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	res, err := run(*model, *data, *batch, *threads, *workers, *tensors, *reps, *spin, *limit, *device, *split)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bench/extract:", err)
		pprof.StopCPUProfile()
		os.Exit(1)
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.Encode(res)
}

func run(model, data string, batch, threads, workers int, tensors string, reps int, spin bool, limit int64, device, split string) (*result, error) {
	m, _, err := models.ManifestFor(model)
	if err != nil {
		return nil, err
	}
	dev, err := encode.ParseDevice(device)
	if err != nil {
		return nil, err
	}
	sess, err := encode.OpenSession(model, m, encode.SessionOptions{Threads: threads, Spin: spin, Device: dev})
	if err != nil {
		return nil, err
	}
	defer sess.Close()
	prep := encode.NewPreprocessor(m.Input)
	dir, err := os.MkdirTemp("", "dpfeat-bench-extract-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir) // made by MkdirTemp above, for this benchmark alone
	out := filepath.Join(dir, "test.arrow")
	res := &result{Spin: spin, Model: filepath.Base(model), Batch: batch, Threads: threads, Workers: workers, Runtime: encode.RuntimeVersion(), CPUs: runtime.NumCPU()}

	// Bare Run on ready tensors: the same images, preprocessed beforehand;
	// the two alternate, so that both see the machine in the same state.
	ds, err := features.OpenDataset(data, features.DatasetOptions{Split: split})
	if err != nil {
		return nil, err
	}
	size := prep.Size()
	var all []float32
	for limit <= 0 || int64(len(all)/size) < limit {
		ex, err := ds.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, err
		}
		px, _ := features.DecodeImage(ex)
		all = slices.Grow(all, size)[:len(all)+size]
		if err := prep.Apply(px, all[len(all)-size:]); err != nil {
			return nil, err
		}
	}
	ds.Close()
	n := len(all) / size
	outBuf := make([]float32, batch*sess.Dim())
	var pairs []float64
	for r := 0; r < reps; r++ {
		os.Remove(out)
		ds, err := features.OpenDataset(data, features.DatasetOptions{Split: split})
		if err != nil {
			return nil, err
		}
		t0 := time.Now()
		ex, err := encode.Extract(context.Background(), ds, sess, prep, out, encode.ExtractOptions{Batch: batch, Workers: workers, Limit: limit,
			Meta: features.Metadata{Classes: ds.Classes(), Source: "bench"}, Identity: map[string]string{"bench": "1"}})
		ds.Close()
		if err != nil {
			return nil, err
		}
		res.Images = ex.Rows
		e2e := float64(ex.Rows) / time.Since(t0).Seconds()
		res.EndToEndPerSecond = math.Max(res.EndToEndPerSecond, e2e)

		t0 = time.Now()
		for i := 0; i < n; i += batch {
			k := min(batch, n-i)
			if err := sess.Run(all[i*size:(i+k)*size], k, outBuf); err != nil {
				return nil, err
			}
		}
		bare := float64(n) / time.Since(t0).Seconds()
		res.BareRunPerSecond = math.Max(res.BareRunPerSecond, bare)
		pairs = append(pairs, e2e/bare)
	}
	res.Ratio = res.EndToEndPerSecond / res.BareRunPerSecond
	slices.Sort(pairs)
	res.MedianPairRatio = pairs[len(pairs)/2]

	if tensors != "" {
		raw, err := os.ReadFile(tensors)
		if err != nil {
			return nil, err
		}
		tn := len(raw) / 4 / size
		x := make([]float32, tn*size)
		for i := range x {
			x[i] = math.Float32frombits(binary.LittleEndian.Uint32(raw[4*i:]))
		}
		feats := make([]float32, tn*sess.Dim())
		for i := 0; i < tn; i += batch {
			k := min(batch, tn-i)
			if err := sess.Run(x[i*size:(i+k)*size], k, feats[i*sess.Dim():]); err != nil {
				return nil, err
			}
		}
		got, err := features.ReadAll(out, features.ReadOptions{})
		if err != nil {
			return nil, err
		}
		for i := 0; i < tn*sess.Dim(); i++ {
			res.MaxAbsDiffVsTorch = math.Max(res.MaxAbsDiffVsTorch, math.Abs(float64(got.Data[i]-feats[i])))
		}
		res.TensorsChecked = tn
	}
	return res, nil
}
