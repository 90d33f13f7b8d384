package augment

import (
	"crypto/sha256"
	"encoding/binary"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"

	"github.com/dpfeat/dpfeat/features"
)

// Spec is what an augmented view does to an image.
type Spec struct {
	// Pad is the reflection padding of the random crop, in pixels (0: no
	// crop). A view is a window of the image's size taken at a uniformly
	// random offset in the padded image.
	Pad int
	// Flip mirrors the view horizontally with probability ½.
	Flip bool
	// Scale, when above 0, first takes a random resized crop (as
	// SimCLR's and torchvision's RandomResizedCrop): a window of a
	// uniformly random share in [Scale, 1] of the image's area and an
	// aspect ratio log-uniform in [3/4, 4/3], resized back to the image's
	// size (bilinear).
	Scale float64
	// Jitter, when above 0, last scales the view's contrast about its mean
	// by a factor uniform in [1 − Jitter, 1 + Jitter] and shifts its
	// brightness by a uniform share in [−Jitter, Jitter] of half the range.
	Jitter float64
}

// Syntax describes what Parse reads, for help texts.
const Syntax = "comma-separated crop=P (random crop of the image padded by P pixels), flip, scale=S (random resized crop of at least S of the area), jitter=J (brightness and contrast by up to J), or none"

// Parse reads a spec: "none", or a comma-separated list of crop=P (pad by
// P pixels, then crop back to size), flip, scale=S (a random resized crop
// of at least S of the area) and jitter=J (brightness and contrast).
func Parse(s string) (Spec, error) {
	var sp Spec
	s = strings.TrimSpace(s)
	if s == "" || s == "none" {
		return sp, nil
	}
	seen := map[string]bool{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		name, val, hasVal := strings.Cut(part, "=")
		if seen[name] {
			return sp, fmt.Errorf("augmentation %q: %s is given twice", s, name)
		}
		seen[name] = true
		switch {
		case name == "flip" && !hasVal:
			sp.Flip = true
		case name == "crop" && hasVal:
			p, err := strconv.Atoi(val)
			if err != nil || p < 1 || p > 1024 {
				return sp, fmt.Errorf("augmentation %q: crop=%s: expected the padding in pixels, 1 to 1024", s, val)
			}
			sp.Pad = p
		case (name == "scale" || name == "jitter") && hasVal:
			f, err := strconv.ParseFloat(val, 64)
			if err != nil || !(f > 0 && f <= 1) {
				return sp, fmt.Errorf("augmentation %q: %s=%s: expected a number in (0, 1]", s, name, val)
			}
			if name == "scale" {
				sp.Scale = f
			} else {
				sp.Jitter = f
			}
		default:
			return sp, fmt.Errorf("augmentation %q: %q is not one of crop=P, flip, scale=S, jitter=J, none", s, part)
		}
	}
	return sp, nil
}

// String is the spec as Parse reads it.
func (s Spec) String() string {
	var parts []string
	if s.Pad > 0 {
		parts = append(parts, "crop="+strconv.Itoa(s.Pad))
	}
	if s.Flip {
		parts = append(parts, "flip")
	}
	if s.Scale > 0 {
		parts = append(parts, "scale="+strconv.FormatFloat(s.Scale, 'g', -1, 64))
	}
	if s.Jitter > 0 {
		parts = append(parts, "jitter="+strconv.FormatFloat(s.Jitter, 'g', -1, 64))
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// Stream returns the random stream of one example's augmentations: keyed
// by the run's seed, the example's id and a purpose ("views", "mix"), so
// that it does not depend on any other example or on reading order.
func Stream(seed uint64, id, purpose string) *rand.Rand {
	h := sha256.New()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(purpose))
	h.Write([]byte{0})
	h.Write([]byte(id))
	var key [32]byte
	copy(key[:], h.Sum(nil))
	return rand.New(rand.NewChaCha8(key))
}

// View returns one augmented view of px drawn from r.
func (s Spec) View(px features.Pixels, r *rand.Rand) features.Pixels {
	if s.Scale > 0 {
		px = resizedCrop(px, r, s.Scale)
	}
	w, h, c := px.Width, px.Height, px.Channels
	out := features.Pixels{Width: w, Height: h, Channels: c, Data: make([]uint8, len(px.Data))}
	dx, dy := 0, 0
	if s.Pad > 0 {
		dx, dy = r.IntN(2*s.Pad+1)-s.Pad, r.IntN(2*s.Pad+1)-s.Pad
	}
	flip := s.Flip && r.IntN(2) == 1
	for y := 0; y < h; y++ {
		sy := reflect(y+dy, h)
		for x := 0; x < w; x++ {
			ox := x
			if flip {
				ox = w - 1 - x
			}
			sx := reflect(ox+dx, w)
			copy(out.Data[(y*w+x)*c:(y*w+x+1)*c], px.Data[(sy*w+sx)*c:(sy*w+sx+1)*c])
		}
	}
	if s.Jitter > 0 {
		jitter(out, r, s.Jitter)
	}
	return out
}

// resizedCrop takes a window of a share in [scale, 1] of px's area, of
// aspect ratio log-uniform in [3/4, 4/3] (ten tries, else the whole
// image), and resizes it back to px's size.
func resizedCrop(px features.Pixels, r *rand.Rand, scale float64) features.Pixels {
	w, h, c := px.Width, px.Height, px.Channels
	for range 10 {
		area := (scale + r.Float64()*(1-scale)) * float64(w*h)
		ratio := math.Exp(math.Log(3.0/4) + r.Float64()*math.Log(16.0/9))
		cw, ch := int(math.Round(math.Sqrt(area*ratio))), int(math.Round(math.Sqrt(area/ratio)))
		if cw < 1 || ch < 1 || cw > w || ch > h {
			continue
		}
		x0, y0 := r.IntN(w-cw+1), r.IntN(h-ch+1)
		win := features.Pixels{Width: cw, Height: ch, Channels: c, Data: make([]uint8, cw*ch*c)}
		for y := 0; y < ch; y++ {
			copy(win.Data[y*cw*c:(y+1)*cw*c], px.Data[((y0+y)*w+x0)*c:((y0+y)*w+x0+cw)*c])
		}
		return conform(win, w, h, c)
	}
	return px
}

// jitter scales px's contrast about its mean by a factor in [1 − j, 1 + j]
// and shifts its brightness by up to j·128, in place.
func jitter(px features.Pixels, r *rand.Rand, j float64) {
	contrast := 1 + (2*r.Float64()-1)*j
	shift := (2*r.Float64() - 1) * j * 128
	var mean float64
	for _, v := range px.Data {
		mean += float64(v)
	}
	mean /= float64(len(px.Data))
	for i, v := range px.Data {
		px.Data[i] = uint8(math.Min(255, math.Max(0, math.Round((float64(v)-mean)*contrast+mean+shift))))
	}
}

// reflect maps a coordinate of the reflection-padded image to the image
// (…, 2, 1, 0, 1, 2, …, n−2, n−1, n−2, …).
func reflect(i, n int) int {
	if n == 1 {
		return 0
	}
	period := 2 * (n - 1)
	i %= period
	if i < 0 {
		i += period
	}
	if i >= n {
		i = period - i
	}
	return i
}

// Views returns k views of px, from the example's stream.
func (s Spec) Views(px features.Pixels, k int, seed uint64, id string) []features.Pixels {
	r := Stream(seed, id, "views")
	out := make([]features.Pixels, k)
	for i := range out {
		out[i] = s.View(px, r)
	}
	return out
}

// Mix returns λ·a + (1 − λ)·b, rounded to the nearest level, b resized
// to a's size (bilinear) and to a's channels (grey repeated, or colour
// averaged) first.
func Mix(a, b features.Pixels, lambda float64) features.Pixels {
	b = conform(b, a.Width, a.Height, a.Channels)
	out := features.Pixels{Width: a.Width, Height: a.Height, Channels: a.Channels, Data: make([]uint8, len(a.Data))}
	for i, v := range a.Data {
		m := lambda*float64(v) + (1-lambda)*float64(b.Data[i])
		out.Data[i] = uint8(math.Min(255, math.Max(0, math.Round(m))))
	}
	return out
}

// conform resizes px (bilinear, pixel centres aligned) to w×h and c
// channels.
func conform(px features.Pixels, w, h, c int) features.Pixels {
	if px.Width == w && px.Height == h && px.Channels == c {
		return px
	}
	out := features.Pixels{Width: w, Height: h, Channels: c, Data: make([]uint8, w*h*c)}
	at := func(x, y, ch int) float64 {
		if px.Channels == c {
			return float64(px.Data[(y*px.Width+x)*px.Channels+ch])
		}
		if px.Channels == 1 {
			return float64(px.Data[y*px.Width+x])
		}
		var s float64
		for k := 0; k < px.Channels; k++ {
			s += float64(px.Data[(y*px.Width+x)*px.Channels+k])
		}
		return s / float64(px.Channels)
	}
	for y := 0; y < h; y++ {
		fy := math.Max(0, (float64(y)+0.5)*float64(px.Height)/float64(h)-0.5)
		y0 := min(int(fy), px.Height-1)
		y1, ty := min(y0+1, px.Height-1), fy-float64(y0)
		for x := 0; x < w; x++ {
			fx := math.Max(0, (float64(x)+0.5)*float64(px.Width)/float64(w)-0.5)
			x0 := min(int(fx), px.Width-1)
			x1, tx := min(x0+1, px.Width-1), fx-float64(x0)
			for ch := 0; ch < c; ch++ {
				v := (1-ty)*((1-tx)*at(x0, y0, ch)+tx*at(x1, y0, ch)) + ty*((1-tx)*at(x0, y1, ch)+tx*at(x1, y1, ch))
				out.Data[(y*w+x)*c+ch] = uint8(math.Min(255, math.Max(0, math.Round(v))))
			}
		}
	}
	return out
}

// Beta draws λ ~ Beta(α, α) as X/(X + Y) with X, Y ~ Gamma(α, 1).
func Beta(r *rand.Rand, alpha float64) float64 {
	if !(alpha > 0) {
		panic(fmt.Sprintf("augment: Beta(%v, %v)", alpha, alpha))
	}
	x, y := gamma(r, alpha), gamma(r, alpha)
	if x+y == 0 {
		return 0.5
	}
	return x / (x + y)
}

// gamma draws Gamma(a, 1) by Marsaglia and Tsang (2000); for a < 1,
// Gamma(a + 1)·U^(1/a).
func gamma(r *rand.Rand, a float64) float64 {
	if a < 1 {
		return gamma(r, a+1) * math.Pow(r.Float64(), 1/a)
	}
	d := a - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := r.NormFloat64()
		v := 1 + c*x
		if v <= 0 {
			continue
		}
		v = v * v * v
		u := r.Float64()
		if u < 1-0.0331*x*x*x*x || math.Log(u) < 0.5*x*x+d*(1-v+math.Log(v)) {
			return d * v
		}
	}
}

// SelfMixes returns m mixups of two distinct views of one example
// (DP-Mix_Self), with their λ, from the example's "mix" stream; at least
// two views are needed.
func SelfMixes(views []features.Pixels, m int, alpha float64, seed uint64, id string) ([]features.Pixels, []float64) {
	if len(views) < 2 && m > 0 {
		panic("augment: self-mixup needs two views")
	}
	r := Stream(seed, id, "mix")
	out, lambdas := make([]features.Pixels, m), make([]float64, m)
	for i := range out {
		a := r.IntN(len(views))
		b := r.IntN(len(views) - 1)
		if b >= a {
			b++
		}
		lambdas[i] = Beta(r, alpha)
		out[i] = Mix(views[a], views[b], lambdas[i])
	}
	return out, lambdas
}

// DiffMixes returns m mixups of one of an example's views with a public
// image (DP-Mix_Diff), from the example's "mix-diff" stream: for each, the
// mixed image λ·view + (1 − λ)·public, the index of the public image (its
// label is the soft label's other part) and λ, the example's share.
func DiffMixes(views, public []features.Pixels, m int, alpha float64, seed uint64, id string) ([]features.Pixels, []int, []float64) {
	if m > 0 && (len(views) == 0 || len(public) == 0) {
		panic("augment: mixups with public images need views and public images")
	}
	r := Stream(seed, id, "mix-diff")
	out, partners, lambdas := make([]features.Pixels, m), make([]int, m), make([]float64, m)
	for i := range out {
		own := views[r.IntN(len(views))]
		partners[i] = r.IntN(len(public))
		lambdas[i] = Beta(r, alpha)
		out[i] = Mix(own, public[partners[i]], lambdas[i])
	}
	return out, partners, lambdas
}
