package augment

import (
	"math"
	"slices"
	"testing"

	"github.com/dpfeat/dpfeat/features"
)

func ramp(w, h, c int) features.Pixels {
	px := features.Pixels{Width: w, Height: h, Channels: c, Data: make([]uint8, w*h*c)}
	for i := range px.Data {
		px.Data[i] = uint8(i * 7 % 251)
	}
	return px
}

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want Spec
		err  bool
	}{
		{"none", Spec{}, false},
		{"", Spec{}, false},
		{"crop=4,flip", Spec{Pad: 4, Flip: true}, false},
		{"flip", Spec{Flip: true}, false},
		{"crop=0", Spec{}, true},
		{"crop", Spec{}, true},
		{"rotate=10", Spec{}, true},
		{"flip,flip", Spec{}, true},
		{"scale=0.35,flip,jitter=0.4", Spec{Flip: true, Scale: 0.35, Jitter: 0.4}, false},
		{"scale=0", Spec{}, true},
		{"jitter=1.5", Spec{}, true},
	} {
		got, err := Parse(tc.in)
		if (err != nil) != tc.err || (!tc.err && got != tc.want) {
			t.Errorf("Parse(%q) = %+v, %v", tc.in, got, err)
		}
		if !tc.err {
			if back, _ := Parse(got.String()); back != got {
				t.Errorf("%q does not read back as itself", got.String())
			}
		}
	}
}

// A view is a window of the reflection-padded image, mirrored or not: every
// row of the view is a run of a row of the image (or of its mirror), and a
// spec of nothing returns the image.
func TestViewsAreCropsAndFlips(t *testing.T) {
	px := ramp(9, 7, 3)
	if v := (Spec{}).View(px, Stream(1, "a", "views")); !slices.Equal(v.Data, px.Data) {
		t.Error("spec none changed the image")
	}
	s := Spec{Pad: 3, Flip: true}
	views := s.Views(px, 200, 7, "img.png")
	flips, shifts := 0, map[[2]int]bool{}
	for _, v := range views {
		// Find the offset and flip that reproduce the view.
		found := false
		for dy := -3; dy <= 3 && !found; dy++ {
			for dx := -3; dx <= 3 && !found; dx++ {
				for _, f := range []bool{false, true} {
					ok := true
					for y := 0; y < 7 && ok; y++ {
						for x := 0; x < 9 && ok; x++ {
							ox := x
							if f {
								ox = 8 - x
							}
							sx, sy := reflect(ox+dx, 9), reflect(y+dy, 7)
							for c := 0; c < 3; c++ {
								ok = ok && v.Data[(y*9+x)*3+c] == px.Data[(sy*9+sx)*3+c]
							}
						}
					}
					if ok {
						found = true
						shifts[[2]int{dx, dy}] = true
						if f {
							flips++
						}
						break
					}
				}
			}
		}
		if !found {
			t.Fatal("a view is not a crop of the padded image")
		}
	}
	if flips < 70 || flips > 130 || len(shifts) < 30 {
		t.Errorf("%d flips in 200 views, %d distinct offsets of 49", flips, len(shifts))
	}
}

// Views depend on the seed and the example's id only: a resumed or
// re-ordered run makes the same ones.
func TestViewsAreReproducible(t *testing.T) {
	px := ramp(8, 8, 1)
	s := Spec{Pad: 2, Flip: true}
	a, b := s.Views(px, 4, 3, "x"), s.Views(px, 4, 3, "x")
	c := s.Views(px, 4, 3, "y")
	same := func(u, v []features.Pixels) bool {
		for i := range u {
			if !slices.Equal(u[i].Data, v[i].Data) {
				return false
			}
		}
		return true
	}
	if !same(a, b) {
		t.Error("the same seed and id gave different views")
	}
	if same(a, c) {
		t.Error("two ids gave the same four views")
	}
}

func TestReflect(t *testing.T) {
	var got []int
	for i := -3; i <= 6; i++ {
		got = append(got, reflect(i, 4))
	}
	if want := []int{3, 2, 1, 0, 1, 2, 3, 2, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("reflect over 4: %v, want %v", got, want)
	}
}

// Beta(α, α) has mean ½ and variance 1/(4(2α + 1)).
func TestBetaMoments(t *testing.T) {
	r := Stream(9, "beta", "test")
	for _, alpha := range []float64{0.2, 1, 4} {
		const n = 40000
		var s, s2 float64
		for i := 0; i < n; i++ {
			x := Beta(r, alpha)
			if x < 0 || x > 1 {
				t.Fatalf("Beta(%v) drew %v", alpha, x)
			}
			s += x
			s2 += x * x
		}
		mean, v := s/n, s2/n-(s/n)*(s/n)
		want := 1 / (4 * (2*alpha + 1))
		if math.Abs(mean-0.5) > 0.01 || math.Abs(v-want) > 0.05*want {
			t.Errorf("Beta(%v): mean %.4f, variance %.5f; want 0.5, %.5f", alpha, mean, v, want)
		}
	}
}

func TestMix(t *testing.T) {
	a := features.Pixels{Width: 2, Height: 1, Channels: 1, Data: []uint8{0, 200}}
	b := features.Pixels{Width: 2, Height: 1, Channels: 1, Data: []uint8{100, 0}}
	for _, tc := range []struct {
		lambda float64
		want   []uint8
	}{{1, []uint8{0, 200}}, {0, []uint8{100, 0}}, {0.25, []uint8{75, 50}}} {
		if got := Mix(a, b, tc.lambda); !slices.Equal(got.Data, tc.want) {
			t.Errorf("Mix λ=%v: %v, want %v", tc.lambda, got.Data, tc.want)
		}
	}
	// A partner of another size and colour is conformed to the view.
	rgb := features.Pixels{Width: 4, Height: 2, Channels: 3, Data: make([]uint8, 24)}
	for i := range rgb.Data {
		rgb.Data[i] = 90
	}
	if got := Mix(a, rgb, 0); !slices.Equal(got.Data, []uint8{90, 90}) {
		t.Errorf("conformed partner: %v", got.Data)
	}
	views := (Spec{Pad: 1, Flip: true}).Views(ramp(5, 5, 1), 3, 1, "e")
	mixes, lambdas := SelfMixes(views, 4, 0.5, 1, "e")
	if len(mixes) != 4 || len(lambdas) != 4 {
		t.Fatalf("%d mixes", len(mixes))
	}
	again, _ := SelfMixes(views, 4, 0.5, 1, "e")
	for i := range mixes {
		if !slices.Equal(mixes[i].Data, again[i].Data) || lambdas[i] < 0 || lambdas[i] > 1 {
			t.Errorf("mix %d not reproducible or λ %v", i, lambdas[i])
		}
	}
}

// A resized crop keeps the image's size and, at scale 1, is the image;
// jitter keeps values in range and moves the mean by at most j·128 (plus
// clipping). Specs without them draw exactly as before (the crop-and-flip
// tests above).
func TestResizedCropAndJitter(t *testing.T) {
	px := features.Pixels{Width: 12, Height: 9, Channels: 1, Data: make([]uint8, 108)}
	for i := range px.Data {
		px.Data[i] = uint8(60 + i)
	}
	whole, _ := Parse("scale=1")
	v := whole.Views(px, 3, 1, "x")
	for _, im := range v {
		if im.Width != 12 || im.Height != 9 {
			t.Fatalf("view of %d×%d", im.Width, im.Height)
		}
	}
	sp, _ := Parse("scale=0.3,jitter=0.3")
	for k, im := range sp.Views(px, 20, 2, "y") {
		if im.Width != 12 || im.Height != 9 || len(im.Data) != 108 {
			t.Fatalf("view %d: %d×%d", k, im.Width, im.Height)
		}
	}
	j, _ := Parse("jitter=0.2")
	var before float64
	for _, x := range px.Data {
		before += float64(x) / 108
	}
	for _, im := range j.Views(px, 20, 3, "z") {
		var after float64
		for _, x := range im.Data {
			after += float64(x) / 108
		}
		if math.Abs(after-before) > 0.2*128+1 {
			t.Errorf("jitter moved the mean from %.1f to %.1f", before, after)
		}
	}
}
