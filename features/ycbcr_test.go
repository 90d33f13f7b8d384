package features

import (
	"image"
	"image/color"
	"math/rand/v2"
	"testing"
)

// TestRGBFromYCbCrIsYCbCrAt: the row-wise conversion gives YCbCrAt's bytes
// for every subsampling ratio, odd sizes and sub-images.
func TestRGBFromYCbCrIsYCbCrAt(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, ratio := range []image.YCbCrSubsampleRatio{image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410} {
		for _, rect := range []image.Rectangle{image.Rect(0, 0, 17, 9), image.Rect(3, 5, 40, 31), image.Rect(0, 0, 1, 1)} {
			m := image.NewYCbCr(rect, ratio)
			for _, pl := range [][]byte{m.Y, m.Cb, m.Cr} {
				for i := range pl {
					pl[i] = uint8(r.IntN(256))
				}
			}
			for _, sub := range []image.Image{m, m.SubImage(image.Rect(rect.Min.X+1, rect.Min.Y+1, rect.Max.X, rect.Max.Y))} {
				sm := sub.(*image.YCbCr)
				b := sm.Bounds()
				if b.Empty() {
					continue
				}
				p := rgbFromYCbCr(sm)
				for y := 0; y < b.Dy(); y++ {
					for x := 0; x < b.Dx(); x++ {
						c := sm.YCbCrAt(b.Min.X+x, b.Min.Y+y)
						rr, gg, bb := color.YCbCrToRGB(c.Y, c.Cb, c.Cr)
						i := (y*b.Dx() + x) * 3
						if p.Data[i] != rr || p.Data[i+1] != gg || p.Data[i+2] != bb {
							t.Fatalf("%v %v: pixel (%d, %d) differs", ratio, b, x, y)
						}
					}
				}
			}
		}
	}
}
