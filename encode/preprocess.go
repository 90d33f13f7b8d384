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
//
// Its memory does not grow with the image: the horizontal pass reads the
// 8-bit pixels directly and computes only the columns the crop keeps, for
// only the rows the vertical pass reads, so a 10240×10240 image costs a
// few megabytes beyond its pixels (a float copy of every plane once made an
// image of 10⁸ pixels cost 1.2 GB per worker).
type Preprocessor struct {
	in models.Input
	// coefs caches resampling weights by (input size, output size, the
	// window of outputs kept): a dataset has few distinct image sizes.
	coefs sync.Map // coefKey → []taps
	bufs  sync.Pool
}

type coefKey struct{ in, out, from, n int }

// scratch holds one image's working buffers, reused across images.
type scratch struct {
	tmp   []float32
	plane []float32
}

// NewPreprocessor returns the preprocessing of a (normalized) manifest input.
func NewPreprocessor(in models.Input) *Preprocessor { return &Preprocessor{in: in} }

// coefficients returns the taps of outputs [from, from+n) of a resize
// from in to out pixels.
func (p *Preprocessor) coefficients(in, out, from, n int) []taps {
	k := coefKey{in, out, from, n}
	if c, ok := p.coefs.Load(k); ok {
		return c.([]taps)
	}
	c := coefficients(in, out, from, n, p.in.Resize)
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

// maxResized bounds a side of the resized image (before the crop): an
// image of extreme aspect ratio resized by its shorter side would
// otherwise ask for billions of output rows.
const maxResized = 1 << 20

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
	// 1. Resize (and crop): the resized image's size, and the window of
	// it the crop keeps.
	w, h := px.Width, px.Height
	var cropX, cropY, rw, rh int
	if in.Crop == "center" {
		rw, rh = shorterSide(w, h, in.ResizeSize)
		if rw > maxResized || rh > maxResized {
			return fmt.Errorf("preprocess: an image of %d×%d resizes to %d×%d; expected sides of at most %d", w, h, rw, rh, maxResized)
		}
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
	hx := p.coefficients(w, rw, cropX, in.Width)
	hy := p.coefficients(h, rh, cropY, in.Height)
	// The source rows the kept output rows read.
	lo, hi := hy[0].start, 0
	for _, t := range hy {
		lo, hi = min(lo, t.start), max(hi, t.start+len(t.w))
	}
	sc.plane = grow(sc.plane, in.Width*in.Height)
	sc.tmp = grow(sc.tmp, in.Width*(hi-lo))
	plane := sc.plane
	hw := in.Height * in.Width
	// 2. Channels: grey → RGB by replication (after resizing, which is
	// per channel and gives the same result, so a grey image is resized
	// once); RGB → grey by the ITU-R 601-2 luma transform, as PIL's
	// convert("L"), before resizing.
	planes := px.Channels
	if px.Channels == 3 && in.Channels == 1 {
		planes = 0 // luma
	}
	done := -1
	for c := 0; c < in.Channels; c++ {
		if sp := min(c, max(planes, 1)-1); sp != done {
			resampleRows(px, planes, sp, lo, hi, sc.tmp, hx)
			resampleCols(sc.tmp, in.Width, lo, plane, hy)
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

// taps are the resampling weights of one output pixel: input pixels
// [start, start+len(w)).
type taps struct {
	start int
	w     []float32
}

// coefficients computes separable resampling weights from in to out pixels
// as PIL's ImagingResample does (and torch's antialiased interpolate), for
// the outputs [from, from+n) (a crop keeps no others): the output pixel x
// has centre (x + ½)·in/out in input coordinates; the filter is stretched
// by in/out when downscaling (antialiasing) and the weights of in-range
// taps are normalised to sum to 1. Bilinear upscaling thus equals
// torch.nn.functional.interpolate(mode="bilinear", align_corners=False).
func coefficients(in, out, from, n int, kind string) []taps {
	scale := float64(in) / float64(out)
	res := make([]taps, n)
	if kind == "nearest" {
		for k := range res {
			x := from + k
			// PIL NEAREST and torch "nearest-exact": floor((x + ½)·scale).
			res[k] = taps{start: min(int(math.Floor((float64(x)+0.5)*scale)), in-1), w: []float32{1}}
		}
		return res
	}
	filter, support := triangle, 1.0
	if kind == "bicubic" {
		filter, support = cubic, 2.0
	}
	fscale := math.Max(scale, 1)
	support *= fscale
	for k := range res {
		x := from + k
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
		res[k] = trim(t)
	}
	return res
}

// trim drops the taps of weight exactly 0 at either end (they add an
// exact 0 to a finite sum: the result is the same to the bit), so that a
// resize by 1 — a 256×256 image resized to 256 and cropped — is one tap
// of weight 1 per pixel, which the passes copy.
func trim(t taps) taps {
	for len(t.w) > 1 && t.w[0] == 0 {
		t.start, t.w = t.start+1, t.w[1:]
	}
	for len(t.w) > 1 && t.w[len(t.w)-1] == 0 {
		t.w = t.w[:len(t.w)-1]
	}
	return t
}

// unit reports whether every output takes one input with weight 1 (a
// resize by 1, perhaps cropped): the passes then copy.
func unit(c []taps) bool {
	for _, t := range c {
		if len(t.w) != 1 || t.w[0] != 1 {
			return false
		}
	}
	return true
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

// resampleRows resizes rows [lo, hi) of channel c of the 8-bit pixels
// (planes 0: the luma of RGB pixels) to the outputs of c's taps, into dst
// (len(c) × (hi − lo)).
func resampleRows(px features.Pixels, planes, ch, lo, hi int, dst []float32, c []taps) {
	w, stride := px.Width, px.Channels
	ow := len(c)
	copyTaps := unit(c)
	var row []float32
	if planes == 0 {
		row = make([]float32, w) // one row's luma
	}
	for y := lo; y < hi; y++ {
		data := px.Data[y*w*stride : (y+1)*w*stride]
		out := dst[(y-lo)*ow : (y-lo+1)*ow]
		if planes == 0 {
			for i := range row {
				r, g, b := float32(data[3*i]), float32(data[3*i+1]), float32(data[3*i+2])
				row[i] = (r*299 + g*587 + b*114) / 1000
			}
			for x, t := range c {
				var s float32
				for i, wt := range t.w {
					s += wt * row[t.start+i]
				}
				out[x] = s
			}
			continue
		}
		if copyTaps {
			for x, t := range c {
				out[x] = float32(data[t.start*stride+ch])
			}
			continue
		}
		for x, t := range c {
			var s float32
			for i, wt := range t.w {
				s += wt * float32(data[(t.start+i)*stride+ch])
			}
			out[x] = s
		}
	}
}

// resampleCols resizes the columns of src (w wide, rows from lo) to the
// outputs of c's taps, into dst (w × len(c)).
// Each output row is built tap by tap over whole rows, in the order the
// per-pixel sum took (0 + w₀a₀ + w₁a₁ + …: the same float32 operations,
// so the same bits), which the compiler keeps in tight loops.
func resampleCols(src []float32, w, lo int, dst []float32, c []taps) {
	for y, t := range c {
		out := dst[y*w : (y+1)*w]
		first := src[(t.start-lo)*w : (t.start-lo+1)*w]
		if wt := t.w[0]; wt == 1 {
			copy(out, first)
		} else {
			for x, v := range first {
				out[x] = 0 + wt*v
			}
		}
		for i := 1; i < len(t.w); i++ {
			wt := t.w[i]
			row := src[(t.start-lo+i)*w : (t.start-lo+i+1)*w]
			for x, v := range row {
				out[x] += wt * v
			}
		}
	}
}
