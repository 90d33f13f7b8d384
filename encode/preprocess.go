package encode

import (
	"fmt"
	"math"
	"sync"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// Preprocessor turns decoded pixels into one image's input tensor exactly as
// a manifest says: channel conversion, resize (and center crop), scale,
// per-channel normalisation, layout. It is safe for concurrent use.
type Preprocessor struct {
	in models.Input
	// coefs caches resampling weights by (input size, output size): a
	// dataset has few distinct image sizes.
	coefs sync.Map // coefKey → []taps
	bufs  sync.Pool
}

type coefKey struct{ in, out int }

// scratch holds one image's working buffers, reused across images.
type scratch struct {
	planes [][]float32
	tmp    []float32
	plane  []float32
}

// NewPreprocessor returns the preprocessing of a (normalized) manifest input.
func NewPreprocessor(in models.Input) *Preprocessor { return &Preprocessor{in: in} }

func (p *Preprocessor) coefficients(in, out int) []taps {
	k := coefKey{in, out}
	if c, ok := p.coefs.Load(k); ok {
		return c.([]taps)
	}
	c := coefficients(in, out, p.in.Resize)
	p.coefs.Store(k, c)
	return c
}

func grow(b []float32, n int) []float32 {
	if cap(b) < n {
		return make([]float32, n)
	}
	return b[:n]
}

// Size returns the number of floats of one image's tensor.
func (p *Preprocessor) Size() int { return p.in.Channels * p.in.Height * p.in.Width }

// Apply writes the tensor of one image (Size floats in the manifest's
// layout) to dst.
func (p *Preprocessor) Apply(px features.Pixels, dst []float32) error {
	in := p.in
	if len(dst) != p.Size() {
		return fmt.Errorf("preprocess: destination holds %d floats, need %d", len(dst), p.Size())
	}
	if px.Width < 1 || px.Height < 1 || (px.Channels != 1 && px.Channels != 3) || len(px.Data) != px.Width*px.Height*px.Channels {
		return fmt.Errorf("preprocess: image of %d×%d×%d with %d bytes; expected grey or RGB pixels", px.Width, px.Height, px.Channels, len(px.Data))
	}
	sc, _ := p.bufs.Get().(*scratch)
	if sc == nil {
		sc = &scratch{}
	}
	defer p.bufs.Put(sc)
	// 1. Channels: grey → RGB by replication (after resizing, which is
	// per channel and gives the same result, so a grey image is resized
	// once); RGB → grey by the ITU-R 601-2 luma transform, as PIL's
	// convert("L").
	src := sc.split(px)
	if px.Channels == 3 && in.Channels == 1 {
		src = [][]float32{luma(src)}
	}
	// 2. Resize (and crop) each plane.
	w, h := px.Width, px.Height
	var cropX, cropY, rw, rh int
	if in.Crop == "center" {
		rw, rh = shorterSide(w, h, in.ResizeSize)
		if rw < in.Width || rh < in.Height {
			return fmt.Errorf("preprocess: resized image %d×%d is smaller than the crop %d×%d", rw, rh, in.Width, in.Height)
		}
		// torchvision CenterCrop: top = int(round((H − h)/2)), with
		// Python's round, which rounds halves to even.
		cropX = int(math.RoundToEven(float64(rw-in.Width) / 2))
		cropY = int(math.RoundToEven(float64(rh-in.Height) / 2))
	} else {
		rw, rh = in.Width, in.Height
	}
	hx := p.coefficients(w, rw)
	hy := p.coefficients(h, rh)
	sc.plane = grow(sc.plane, in.Width*in.Height)
	sc.tmp = grow(sc.tmp, rw*h)
	plane := sc.plane
	hw := in.Height * in.Width
	done := -1
	for c := 0; c < in.Channels; c++ {
		if sp := min(c, len(src)-1); sp != done {
			resampleRows(src[sp], w, h, sc.tmp, rw, hx)
			resampleCols(sc.tmp, rw, h, plane, rh, hy, cropX, cropY, in.Width, in.Height)
			if in.RoundAfterResize {
				for i, v := range plane {
					plane[i] = float32(math.Round(float64(min(max(v, 0), 255))))
				}
			}
			done = sp
		}
		scale := float32(in.Scale)
		mean, std := float32(in.Mean[c]), float32(in.Std[c])
		if in.Layout == "NCHW" {
			out := dst[c*hw : (c+1)*hw]
			for i, v := range plane {
				out[i] = (v*scale - mean) / std
			}
		} else {
			for i, v := range plane {
				dst[i*in.Channels+c] = (v*scale - mean) / std
			}
		}
	}
	return nil
}

// shorterSide returns the size after resizing the shorter side to s,
// keeping the aspect ratio as torchvision.transforms.Resize(int) does: the
// longer side becomes int(s · long / short).
func shorterSide(w, h, s int) (int, int) {
	if w <= h {
		return s, int(float64(s) * float64(h) / float64(w))
	}
	return int(float64(s) * float64(w) / float64(h)), s
}

// split turns interleaved pixels into float planes in the scratch buffers.
func (sc *scratch) split(px features.Pixels) [][]float32 {
	n := px.Width * px.Height
	for len(sc.planes) < px.Channels {
		sc.planes = append(sc.planes, nil)
	}
	out := sc.planes[:px.Channels]
	for c := range out {
		out[c] = grow(out[c], n)
	}
	if px.Channels == 1 {
		for i, v := range px.Data[:n] {
			out[0][i] = float32(v)
		}
		return out
	}
	for i := 0; i < n; i++ {
		for c := range out {
			out[c][i] = float32(px.Data[i*px.Channels+c])
		}
	}
	return out
}

// luma is PIL's L = R·299/1000 + G·587/1000 + B·114/1000.
func luma(rgb [][]float32) []float32 {
	out := make([]float32, len(rgb[0]))
	for i := range out {
		out[i] = (rgb[0][i]*299 + rgb[1][i]*587 + rgb[2][i]*114) / 1000
	}
	return out
}

// taps are the resampling weights of one output pixel: input pixels
// [start, start+len(w)).
type taps struct {
	start int
	w     []float32
}

// coefficients computes separable resampling weights from in to out pixels
// as PIL's ImagingResample does (and torch's antialiased interpolate): the
// output pixel x has centre (x + ½)·in/out in input coordinates; the filter
// is stretched by in/out when downscaling (antialiasing) and the weights of
// in-range taps are normalised to sum to 1. Bilinear upscaling thus equals
// torch.nn.functional.interpolate(mode="bilinear", align_corners=False).
func coefficients(in, out int, kind string) []taps {
	scale := float64(in) / float64(out)
	res := make([]taps, out)
	if kind == "nearest" {
		for x := range res {
			// PIL NEAREST and torch "nearest-exact": floor((x + ½)·scale).
			res[x] = taps{start: min(int(math.Floor((float64(x)+0.5)*scale)), in-1), w: []float32{1}}
		}
		return res
	}
	filter, support := triangle, 1.0
	if kind == "bicubic" {
		filter, support = cubic, 2.0
	}
	fscale := math.Max(scale, 1)
	support *= fscale
	for x := range res {
		center := (float64(x) + 0.5) * scale
		lo := max(int(center-support+0.5), 0)
		hi := min(int(center+support+0.5), in)
		w := make([]float64, hi-lo)
		var sum float64
		for i := range w {
			w[i] = filter((float64(i+lo) - center + 0.5) / fscale)
			sum += w[i]
		}
		t := taps{start: lo, w: make([]float32, len(w))}
		for i := range w {
			if sum != 0 {
				t.w[i] = float32(w[i] / sum)
			}
		}
		res[x] = t
	}
	return res
}

func triangle(x float64) float64 {
	x = math.Abs(x)
	if x < 1 {
		return 1 - x
	}
	return 0
}

// cubic is the Keys cubic with a = −0.5, as PIL's BICUBIC and torch's
// antialiased bicubic use.
func cubic(x float64) float64 {
	const a = -0.5
	x = math.Abs(x)
	switch {
	case x < 1:
		return ((a+2)*x-(a+3))*x*x + 1
	case x < 2:
		return (((x-5)*x+8)*x - 4) * a
	}
	return 0
}

// resampleRows resizes each row of src (w×h) to dst (ow×h).
func resampleRows(src []float32, w, h int, dst []float32, ow int, c []taps) {
	for y := 0; y < h; y++ {
		row := src[y*w : (y+1)*w]
		out := dst[y*ow : (y+1)*ow]
		for x, t := range c {
			var s float32
			for i, wt := range t.w {
				s += wt * row[t.start+i]
			}
			out[x] = s
		}
	}
}

// resampleCols resizes the columns of src (w×h) to height oh and writes the
// crop [cx, cx+cw) × [cy, cy+ch) of the result to dst (cw×ch).
func resampleCols(src []float32, w, h int, dst []float32, oh int, c []taps, cx, cy, cw, ch int) {
	for y := 0; y < ch; y++ {
		t := c[y+cy]
		out := dst[y*cw : (y+1)*cw]
		for x := 0; x < cw; x++ {
			var s float32
			for i, wt := range t.w {
				s += wt * src[(t.start+i)*w+x+cx]
			}
			out[x] = s
		}
	}
}
