package synthbasis

import (
	"fmt"
	"io"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/randproc"
)

// Dataset is the images of randproc options as a features.Dataset: image
// i of process p is labelled p and named "p/i" (a function of the settings
// and the index alone, as every image is).
type Dataset struct {
	o      randproc.Options
	source string
	i      int64
}

// NewDataset returns the images of o; source is its Source text.
func NewDataset(o randproc.Options, source string) *Dataset {
	return &Dataset{o: o, source: source}
}

// Classes are the processes.
func (d *Dataset) Classes() []string { return d.o.Processes }

// Len is the number of images.
func (d *Dataset) Len() int64 { return d.o.Count }

// Source describes the images.
func (d *Dataset) Source() string { return d.source }

// Close does nothing.
func (d *Dataset) Close() error { return nil }

// Next returns the next image.
func (d *Dataset) Next() (features.Example, error) {
	if d.i >= d.o.Count {
		return features.Example{}, io.EOF
	}
	i := d.i
	d.i++
	px := d.o.Image(i)
	p := d.o.Process(i)
	return features.Example{Pixels: &px, Label: int32(p), ID: fmt.Sprintf("%s/%08d", d.o.Processes[p], i), Index: i}, nil
}
