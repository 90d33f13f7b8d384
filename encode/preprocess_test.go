package encode

import (
	"math"
	"testing"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

func input(t testing.TB, in models.Input) models.Input {
	t.Helper()
	m := models.Manifest{Input: in}
	if err := m.Normalize(); err != nil {
		t.Fatal(err)
	}
	return m.Input
}

// A 2×2 grey image resized to 4×4 by hand: each axis maps [a, b] to
// [a, ¾a+¼b, ¼a+¾b, b] (half-pixel centres, edge clamped), then grey is
// repeated to 3 channels and normalised with (x/255 − mean)/std.
func TestPreprocessByHand(t *testing.T) {
	in := input(t, models.Input{Layout: "NCHW", Channels: 3, Height: 4, Width: 4, Mean: []float64{0.5, 0, 0.25}, Std: []float64{0.5, 1, 2}})
	px := features.Pixels{Width: 2, Height: 2, Channels: 1, Data: []uint8{0, 255, 255, 255}}
	dst := make([]float32, 3*16)
	if err := NewPreprocessor(in).Apply(px, dst); err != nil {
		t.Fatal(err)
	}
	// Rows of the 2×2 image: [0, 255], [255, 255]; after resizing, row y
	// mixes them with weights (1, 0), (¾, ¼), (¼, ¾), (0, 1).
	ax := []float64{0, 63.75, 191.25, 255}
	ry := [][2]float64{{1, 0}, {0.75, 0.25}, {0.25, 0.75}, {0, 1}}
	mean, std := []float64{0.5, 0, 0.25}, []float64{0.5, 1, 2}
	for c := 0; c < 3; c++ {
		for y := 0; y < 4; y++ {
			for x := 0; x < 4; x++ {
				raw := ry[y][0]*ax[x] + ry[y][1]*255
				want := (raw/255 - mean[c]) / std[c]
				if got := float64(dst[c*16+y*4+x]); math.Abs(got-want) > 1e-6 {
					t.Errorf("c%d (%d,%d): %v, want %v", c, x, y, got, want)
				}
			}
		}
	}
}

func TestPreprocessLayoutAndCrop(t *testing.T) {
	// A 6×4 RGB image, center-cropped (resize shorter side 4 → 4, i.e. no
	// resize) to 2×2: columns 2..3 of rows 1..2; NHWC layout; no
	// normalisation beyond /255.
	px := features.Pixels{Width: 6, Height: 4, Channels: 3, Data: make([]uint8, 6*4*3)}
	for y := 0; y < 4; y++ {
		for x := 0; x < 6; x++ {
			for c := 0; c < 3; c++ {
				px.Data[(y*6+x)*3+c] = uint8(100*c + 10*y + x)
			}
		}
	}
	in := input(t, models.Input{Layout: "NHWC", Channels: 3, Height: 2, Width: 2, Crop: "center", ResizeSize: 4})
	dst := make([]float32, 12)
	if err := NewPreprocessor(in).Apply(px, dst); err != nil {
		t.Fatal(err)
	}
	for y := 0; y < 2; y++ {
		for x := 0; x < 2; x++ {
			for c := 0; c < 3; c++ {
				want := float32(100*c+10*(y+1)+x+2) / 255
				if got := dst[(y*2+x)*3+c]; math.Abs(float64(got-want)) > 1e-6 {
					t.Errorf("(%d,%d,%d) = %v, want %v", x, y, c, got, want)
				}
			}
		}
	}
	// RGB → grey for a 1-channel model uses PIL's luma weights.
	grey := input(t, models.Input{Layout: "NCHW", Channels: 1, Height: 1, Width: 1, Scale: 1})
	one := make([]float32, 1)
	if err := NewPreprocessor(grey).Apply(features.Pixels{Width: 1, Height: 1, Channels: 3, Data: []uint8{10, 20, 30}}, one); err != nil {
		t.Fatal(err)
	}
	if want := float32(10*0.299 + 20*0.587 + 30*0.114); math.Abs(float64(one[0]-want)) > 1e-4 {
		t.Errorf("luma %v, want %v", one[0], want)
	}
}

func TestCoefficientsSumToOne(t *testing.T) {
	for _, kind := range []string{"bilinear", "bicubic", "nearest"} {
		for _, sz := range [][2]int{{28, 32}, {300, 224}, {1000, 7}, {5, 5}, {1, 9}} {
			for x, tp := range coefficients(sz[0], sz[1], 0, sz[1], kind) {
				var s float64
				for _, w := range tp.w {
					s += float64(w)
				}
				if math.Abs(s-1) > 1e-5 || tp.start < 0 || tp.start+len(tp.w) > sz[0] {
					t.Errorf("%s %v→%v pixel %d: taps [%d,+%d) sum %v", kind, sz[0], sz[1], x, tp.start, len(tp.w), s)
				}
			}
		}
	}
}

// BenchmarkPreprocess: one image's preprocessing at ImageNet's shape (a
// 500×375 RGB photo, shorter side to 256, center crop 224) and
// Fashion-MNIST's (28×28 grey to 32×32 RGB), and a 4096×4096 photo whose
// rows the crop does not keep are not computed.
func BenchmarkPreprocess(b *testing.B) {
	for _, c := range []struct {
		name     string
		w, h, ch int
		in       models.Input
	}{
		{"imagenet-500x375", 500, 375, 3, models.Input{Layout: "NCHW", Channels: 3, Height: 224, Width: 224, Resize: "bilinear", Crop: "center", ResizeSize: 256}},
		{"fmnist-28x28", 28, 28, 1, models.Input{Layout: "NCHW", Channels: 3, Height: 32, Width: 32, Resize: "bilinear"}},
		{"photo-4096x4096", 4096, 4096, 3, models.Input{Layout: "NCHW", Channels: 3, Height: 224, Width: 224, Resize: "bicubic", Crop: "center", ResizeSize: 256}},
	} {
		b.Run(c.name, func(b *testing.B) {
			px := features.Pixels{Width: c.w, Height: c.h, Channels: c.ch, Data: make([]uint8, c.w*c.h*c.ch)}
			for i := range px.Data {
				px.Data[i] = uint8(i * 31)
			}
			in := input(b, c.in)
			p := NewPreprocessor(in)
			dst := make([]float32, p.Size())
			b.SetBytes(int64(len(px.Data)))
			for b.Loop() {
				if err := p.Apply(px, dst); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
