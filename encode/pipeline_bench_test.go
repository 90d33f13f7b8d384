package encode

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"io"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// jpegDataset serves the same n JPEG-encoded photos (the GPU bench's
// 256×256) as an image folder would, without the disk.
type jpegDataset struct {
	imgs [][]byte
	n    int
	next int
}

func (d *jpegDataset) Classes() []string { return []string{"a", "b"} }
func (d *jpegDataset) Len() int64        { return int64(d.n) }
func (d *jpegDataset) Source() string    { return "memory jpeg" }
func (d *jpegDataset) Close() error      { return nil }
func (d *jpegDataset) Next() (features.Example, error) {
	if d.next >= d.n {
		return features.Example{}, io.EOF
	}
	i := d.next
	d.next++
	return features.Example{Encoded: d.imgs[i%len(d.imgs)], Label: int32(i % 2), ID: fmt.Sprintf("img%05d.jpg", i), Index: int64(i)}, nil
}

// photoJPEGs makes k w×h photo-like JPEGs (smooth gradients and noise, so
// that the entropy decoder has work), quality 90.
func photoJPEGs(tb testing.TB, k, w, h int) [][]byte {
	tb.Helper()
	r := rand.New(rand.NewPCG(1, 2))
	var out [][]byte
	for i := 0; i < k; i++ {
		img := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				n := uint8(r.IntN(24))
				img.Set(x, y, color.RGBA{uint8(x*255/w) + n, uint8(y*255/h) + n, uint8((x+y+i*40)%256) + n, 255})
			}
		}
		var b bytes.Buffer
		if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 90}); err != nil {
			tb.Fatal(err)
		}
		out = append(out, b.Bytes())
	}
	return out
}

// nullEncoder is a model that does nothing: the pipeline's own ceiling.
type nullEncoder struct{}

func (nullEncoder) Dim() int { return 8 }
func (nullEncoder) Run(x []float32, n int, out []float32) error {
	size := len(x) / n
	for i := 0; i < n; i++ {
		copy(out[i*8:(i+1)*8], x[i*size:i*size+8])
	}
	return nil
}

// nullHalf is a float16 model that does nothing (halfEncoder): its
// batches are converted by the workers, as a float16 Session's are.
type nullHalf struct{ nullEncoder }

func (nullHalf) HalfInput() bool { return true }
func (nullHalf) RunHalf(h []uint16, n int, out []float32) error {
	size := len(h) / n
	for i := 0; i < n; i++ {
		for k := range 8 {
			out[i*8+k] = f16ToF32(h[i*size+k])
		}
	}
	return nil
}

// BenchmarkPipelineNullModel (#38 goal 2): extract's whole pipeline —
// read, decode, resize, crop, normalise, convert, copy, write — around a
// model that does nothing, over 256×256 JPEGs to ViT-B/16's 224×224
// (float32 and float16 inputs), with 1 and 2 workers: images/s per worker
// is the per-core figure, and the ratio of the two how it scales.
func BenchmarkPipelineNullModel(b *testing.B) {
	imgs := photoJPEGs(b, 16, 256, 256)
	const n = 512
	for _, dtype := range []string{"float32", "float16"} {
		in := input(b, models.Input{Layout: "NCHW", Channels: 3, Height: 224, Width: 224, Resize: "bilinear", Crop: "center", ResizeSize: 256,
			Mean: []float64{0.485, 0.456, 0.406}, Std: []float64{0.229, 0.224, 0.225}, DType: dtype})
		prep := NewPreprocessor(in)
		for _, workers := range []int{1, 2} {
			b.Run(fmt.Sprintf("%s/workers=%d", dtype, workers), func(b *testing.B) {
				dir := b.TempDir()
				i := 0
				for b.Loop() {
					out := filepath.Join(dir, fmt.Sprintf("f%d.arrow", i))
					i++
					var enc Encoder = nullEncoder{}
					if dtype == "float16" {
						enc = nullHalf{}
					}
					_, err := Extract(context.Background(), &jpegDataset{imgs: imgs, n: n}, enc, prep, out,
						ExtractOptions{Batch: 64, Workers: workers, Meta: features.Metadata{Classes: []string{"a", "b"}, Source: "memory"}})
					if err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds(), "images/s")
				b.ReportMetric(float64(n)*float64(b.N)/b.Elapsed().Seconds()/float64(workers), "images/s/worker")
			})
		}
	}
}
