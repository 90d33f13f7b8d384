package randproc

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"io"
	"os"
	"path/filepath"
	"reflect"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/atomicfile"
)

// Options say what Generate writes.
type Options struct {
	// Processes are the families, by name (New); image i comes from
	// Processes[i mod len(Processes)].
	Processes []string `json:"processes"`
	// Width, Height and Channels (1 or 3) are every image's size.
	Width    int `json:"width"`
	Height   int `json:"height"`
	Channels int `json:"channels"`
	// Count is the number of images.
	Count int64 `json:"count"`
	// Seed keys every image (Stream).
	Seed uint64 `json:"seed"`
}

// SettingsFile is the file in the output folder that records the Options;
// a resumed run must be given the same.
const SettingsFile = "synth.json"

// ContactSheet is the PNG of the first images, side by side, that
// Generate writes beside them.
const ContactSheet = "contact.png"

// Check validates the options.
func (o Options) Check() error {
	switch {
	case len(o.Processes) == 0:
		return fmt.Errorf("no process")
	case o.Width < 1 || o.Height < 1 || o.Width*o.Height > 1<<24:
		return fmt.Errorf("size %d×%d (height×width, as --size gives it); expected between 1×1 and 4096×4096", o.Height, o.Width)
	case o.Channels != 1 && o.Channels != 3:
		return fmt.Errorf("%d channels; expected 1 or 3", o.Channels)
	case o.Count < 1:
		return fmt.Errorf("count %d; expected at least 1", o.Count)
	}
	for _, p := range o.Processes {
		if _, err := New(p); err != nil {
			return err
		}
	}
	return nil
}

// Process returns the index in Processes of image i's process.
func (o Options) Process(i int64) int { return int(i % int64(len(o.Processes))) }

// Path returns image i's file: DIR/<process>/<i>.png, so that the folder
// reads as an image dataset whose classes are the processes.
func (o Options) Path(dir string, i int64) string {
	return filepath.Join(dir, o.Processes[o.Process(i)], fmt.Sprintf("%08d.png", i))
}

// Image returns image i.
func (o Options) Image(i int64) features.Pixels {
	name := o.Processes[o.Process(i)]
	p, _ := New(name)
	return p.Image(Stream(o.Seed, name, i), o.Width, o.Height, o.Channels)
}

// Generate writes the images to dir, each through a temporary file, then
// the contact sheet. An existing dir must be empty, unless resume: then it
// must hold a run of the same options, whose images are kept (each is a
// function of the options and its index alone) and the missing ones made.
// progress, when set, is called with the images done so far.
func Generate(ctx context.Context, dir string, o Options, resume bool, progress func(done, total int64)) (made int64, err error) {
	if err := o.Check(); err != nil {
		return 0, err
	}
	settings, _ := json.MarshalIndent(o, "", "  ")
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return 0, err
	case resume:
		old, rerr := os.ReadFile(filepath.Join(dir, SettingsFile))
		var prev Options
		if rerr != nil || json.Unmarshal(old, &prev) != nil || !reflect.DeepEqual(prev, o) {
			return 0, fmt.Errorf("%s does not hold a run of these settings (%s): resume it with the flags it was started with, or choose another folder", dir, SettingsFile)
		}
	case len(ents) > 0:
		return 0, fmt.Errorf("%s exists and is not empty: choose a new folder, or pass --resume to finish an interrupted run into it", dir)
	}
	for _, p := range o.Processes {
		if err := os.MkdirAll(filepath.Join(dir, p), 0o777); err != nil {
			return 0, err
		}
	}
	if err := atomicfile.WriteBytes(filepath.Join(dir, SettingsFile), append(settings, '\n')); err != nil {
		return 0, err
	}
	for i := int64(0); i < o.Count; i++ {
		if err := ctx.Err(); err != nil {
			return made, fmt.Errorf("interrupted after %d of %d images: rerun with --resume to finish", i, o.Count)
		}
		path := o.Path(dir, i)
		if resume {
			if _, err := os.Stat(path); err == nil {
				continue // written whole (temporary file + rename)
			}
		}
		if err := WritePNG(path, o.Image(i)); err != nil {
			return made, err
		}
		made++
		if progress != nil {
			progress(i+1, o.Count)
		}
	}
	sheet := make([]features.Pixels, min(o.Count, 64))
	for i := range sheet {
		sheet[i] = o.Image(int64(i))
	}
	return made, WritePNG(filepath.Join(dir, ContactSheet), Contact(sheet, 8))
}

// Contact lays images of one size out in a grid of cols columns, 1 pixel
// apart on a white ground.
func Contact(images []features.Pixels, cols int) features.Pixels {
	w, h, c := images[0].Width, images[0].Height, images[0].Channels
	rows := (len(images) + cols - 1) / cols
	cols = min(cols, len(images))
	W, H := cols*(w+1)+1, rows*(h+1)+1
	out := features.Pixels{Width: W, Height: H, Channels: c, Data: make([]uint8, W*H*c)}
	for i := range out.Data {
		out.Data[i] = 255
	}
	for k, im := range images {
		ox, oy := 1+(k%cols)*(w+1), 1+(k/cols)*(h+1)
		for y := 0; y < h; y++ {
			copy(out.Data[((oy+y)*W+ox)*c:((oy+y)*W+ox+w)*c], im.Data[y*w*c:(y+1)*w*c])
		}
	}
	return out
}

// WritePNG writes px as a PNG (grey or RGB) through a temporary file.
func WritePNG(path string, px features.Pixels) error {
	var img image.Image
	if px.Channels == 1 {
		g := image.NewGray(image.Rect(0, 0, px.Width, px.Height))
		copy(g.Pix, px.Data)
		img = g
	} else {
		g := image.NewNRGBA(image.Rect(0, 0, px.Width, px.Height))
		for i := 0; i < px.Width*px.Height; i++ {
			copy(g.Pix[4*i:4*i+3], px.Data[3*i:3*i+3])
			g.Pix[4*i+3] = 255
		}
		img = g
	}
	return atomicfile.Write(path, func(w io.Writer) error { return png.Encode(w, img) })
}
