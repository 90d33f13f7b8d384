package randproc

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/cmplx"
	"math/rand/v2"
	"slices"
	"strings"

	"gonum.org/v1/gonum/dsp/fourier"

	"github.com/dpfeat/dpfeat/features"
)

// Process generates images of one random-process family.
type Process interface {
	// Name is the family's name, as --process takes it.
	Name() string
	// Image draws one image of w×h pixels and c channels (1 or 3) from r.
	Image(r *rand.Rand, w, h, c int) features.Pixels
}

// Processes lists the families by name.
var Processes = []string{"deadleaves", "spectrum"}

// New returns the named process with its default parameters.
func New(name string) (Process, error) {
	switch name {
	case "deadleaves":
		return DeadLeaves{RMin: 0.03, RMax: 1, MaxLeaves: 20000}, nil
	case "spectrum":
		return Spectrum{BetaMin: 1.5, BetaMax: 3}, nil
	}
	return nil, fmt.Errorf("unknown process %q; expected one of %s", name, strings.Join(Processes, ", "))
}

// Stream returns the random stream of image i of a process: keyed by the
// seed, the process's name and the index only.
func Stream(seed uint64, process string, i int64) *rand.Rand {
	h := sha256.New()
	var b [16]byte
	binary.LittleEndian.PutUint64(b[:8], seed)
	binary.LittleEndian.PutUint64(b[8:], uint64(i))
	h.Write(b[:])
	h.Write([]byte(process))
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return rand.New(rand.NewChaCha8(key))
}

// DeadLeaves is the scale-invariant dead leaves model: discs with radii
// p(r) ∝ r⁻³ on [RMin, RMax] (fractions of the image's larger side),
// uniform random centres and colours, occluding in the order they fall,
// until the image is covered or MaxLeaves have fallen (a pixel no disc
// covered then keeps the last disc's colour, which at the defaults does
// not happen on images of a few hundred pixels a side).
type DeadLeaves struct {
	RMin, RMax float64
	MaxLeaves  int
}

func (DeadLeaves) Name() string { return "deadleaves" }

// Radius maps u ∈ [0, 1) to a radius of density ∝ r⁻³ on [a, b] (the
// inverse of its distribution function F(r) = (a⁻² − r⁻²)/(a⁻² − b⁻²)).
func Radius(u, a, b float64) float64 {
	return 1 / math.Sqrt(1/(a*a)-u*(1/(a*a)-1/(b*b)))
}

func (d DeadLeaves) Image(r *rand.Rand, w, h, c int) features.Pixels {
	px := features.Pixels{Width: w, Height: h, Channels: c, Data: make([]uint8, w*h*c)}
	covered := make([]bool, w*h)
	left := w * h
	side := float64(max(w, h))
	colour := make([]uint8, c)
	for n := 0; n < d.MaxLeaves && left > 0; n++ {
		rad := Radius(r.Float64(), d.RMin, d.RMax) * side
		cx, cy := r.Float64()*float64(w), r.Float64()*float64(h)
		for k := range colour {
			colour[k] = uint8(r.IntN(256))
		}
		x0, x1 := max(0, int(math.Floor(cx-rad))), min(w-1, int(math.Ceil(cx+rad)))
		y0, y1 := max(0, int(math.Floor(cy-rad))), min(h-1, int(math.Ceil(cy+rad)))
		for y := y0; y <= y1; y++ {
			dy := float64(y) + 0.5 - cy
			for x := x0; x <= x1; x++ {
				dx := float64(x) + 0.5 - cx
				if covered[y*w+x] || dx*dx+dy*dy > rad*rad {
					continue
				}
				covered[y*w+x] = true
				left--
				copy(px.Data[(y*w+x)*c:(y*w+x+1)*c], colour)
			}
		}
	}
	if left > 0 {
		for i, ok := range covered {
			if !ok {
				copy(px.Data[i*c:(i+1)*c], colour)
			}
		}
	}
	return px
}

// Spectrum is a Gaussian random field of power spectrum ∝ 1/|f|^β, β
// uniform on [BetaMin, BetaMax] per image, each channel a field of its
// own mixed by a random colour matrix, scaled to mean 128 and standard
// deviation 40 (clipped to 0…255).
type Spectrum struct {
	BetaMin, BetaMax float64
}

func (Spectrum) Name() string { return "spectrum" }

func (s Spectrum) Image(r *rand.Rand, w, h, c int) features.Pixels {
	beta := s.BetaMin + r.Float64()*(s.BetaMax-s.BetaMin)
	fields := make([][]float64, c)
	for k := range fields {
		fields[k] = Field(r, w, h, beta)
	}
	if c > 1 {
		// A random colour: channel k is Σ_j M_kj·field_j.
		m := make([]float64, c*c)
		for i := range m {
			m[i] = r.NormFloat64()
		}
		mixed := make([][]float64, c)
		for k := range mixed {
			mixed[k] = make([]float64, w*h)
			for j := range fields {
				for i, v := range fields[j] {
					mixed[k][i] += m[k*c+j] * v
				}
			}
		}
		fields = mixed
	}
	px := features.Pixels{Width: w, Height: h, Channels: c, Data: make([]uint8, w*h*c)}
	for k, f := range fields {
		var mean, sq float64
		for _, v := range f {
			mean += v
		}
		mean /= float64(len(f))
		for _, v := range f {
			sq += (v - mean) * (v - mean)
		}
		sd := math.Sqrt(sq / float64(len(f)))
		if sd == 0 {
			sd = 1
		}
		for i, v := range f {
			px.Data[i*c+k] = uint8(math.Min(255, math.Max(0, math.Round(128+40*(v-mean)/sd))))
		}
	}
	return px
}

// Field returns a w×h Gaussian random field (row-major) whose power
// spectrum is ∝ 1/|f|^β: white noise, its 2-D Fourier transform scaled by
// |f|^(−β/2) (the mean, f = 0, removed), transformed back.
func Field(r *rand.Rand, w, h int, beta float64) []float64 {
	z := make([]complex128, w*h)
	for i := range z {
		z[i] = complex(r.NormFloat64(), 0)
	}
	fft2(z, w, h, false)
	for y := 0; y < h; y++ {
		fy := freq(y, h)
		for x := 0; x < w; x++ {
			fx := freq(x, w)
			f := math.Hypot(fx, fy)
			if f == 0 {
				z[y*w+x] = 0
				continue
			}
			z[y*w+x] *= complex(math.Pow(f, -beta/2), 0)
		}
	}
	fft2(z, w, h, true)
	out := make([]float64, w*h)
	for i, v := range z {
		out[i] = real(v)
	}
	return out
}

// freq is the frequency (cycles per pixel) of DFT bin i of n.
func freq(i, n int) float64 {
	if i > n/2 {
		i -= n
	}
	return float64(i) / float64(n)
}

// fft2 transforms z (h rows of w) in place, rows then columns; inverse
// takes the inverse transform (unnormalised: the scale does not matter
// here).
func fft2(z []complex128, w, h int, inverse bool) {
	row, col := fourier.NewCmplxFFT(w), fourier.NewCmplxFFT(h)
	buf := make([]complex128, max(w, h))
	run := func(f *fourier.CmplxFFT, in []complex128) {
		out := buf[:len(in)]
		if inverse {
			f.Sequence(out, in)
		} else {
			f.Coefficients(out, in)
		}
		copy(in, out)
	}
	for y := 0; y < h; y++ {
		run(row, z[y*w:(y+1)*w])
	}
	c := make([]complex128, h)
	for x := 0; x < w; x++ {
		for y := range c {
			c[y] = z[y*w+x]
		}
		run(col, c)
		for y := range c {
			z[y*w+x] = c[y]
		}
	}
}

// PowerSlope estimates β of a w×h field from its radially averaged power
// spectrum: the least-squares slope of log power against log |f| over the
// bins between fmin and fmax cycles per pixel, negated.
func PowerSlope(f []float64, w, h int, fmin, fmax float64) float64 {
	z := make([]complex128, w*h)
	for i, v := range f {
		z[i] = complex(v, 0)
	}
	fft2(z, w, h, false)
	type bin struct{ sum, n float64 }
	bins := map[int]*bin{}
	const per = 8 // bins per unit of log f
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			fr := math.Hypot(freq(x, w), freq(y, h))
			if fr < fmin || fr > fmax {
				continue
			}
			k := int(math.Round(math.Log(fr) * per))
			b := bins[k]
			if b == nil {
				b = &bin{}
				bins[k] = b
			}
			b.sum += math.Pow(cmplx.Abs(z[y*w+x]), 2)
			b.n++
		}
	}
	keys := make([]int, 0, len(bins))
	for k := range bins {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var sx, sy, sxx, sxy, n float64
	for _, k := range keys {
		b := bins[k]
		lx, ly := float64(k)/per, math.Log(b.sum/b.n)
		sx, sy, sxx, sxy, n = sx+lx, sy+ly, sxx+lx*lx, sxy+lx*ly, n+1
	}
	return -(n*sxy - sx*sy) / (n*sxx - sx*sx)
}
