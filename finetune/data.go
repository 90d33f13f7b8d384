package finetune

import (
	"errors"
	"fmt"
	"io"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// LoadImages reads examples offset … offset+limit−1 (limit 0: to the end)
// of an image dataset, preprocessed as the manifest input says, into
// memory as a graph's inputs; with keep, also the decoded images and their
// ids (Data.Pixels, Data.IDs: for PixelViews). Unlabeled examples are
// refused.
func LoadImages(src string, opt features.DatasetOptions, in models.Input, offset, limit int64, keep bool) (Data, []string, error) {
	ds, err := features.OpenDataset(src, opt)
	if err != nil {
		return Data{}, nil, err
	}
	defer ds.Close()
	prep := encode.NewPreprocessor(in)
	size := prep.Size()
	var d Data
	for i := int64(0); limit <= 0 || i < offset+limit; i++ {
		ex, err := ds.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return Data{}, nil, err
		}
		if i < offset {
			continue
		}
		if ex.Label < 0 {
			return Data{}, nil, fmt.Errorf("%s: example %d (%s) is unlabeled; training examples need labels", src, ex.Index, ex.ID)
		}
		px, err := features.DecodeImage(ex)
		if err != nil {
			return Data{}, nil, fmt.Errorf("%s: example %d (%s): %w", src, ex.Index, ex.ID, err)
		}
		d.Images = append(d.Images, make([]float32, size)...)
		if err := prep.Apply(px, d.Images[d.N*size:]); err != nil {
			return Data{}, nil, fmt.Errorf("%s: example %d: %w", src, ex.Index, err)
		}
		d.Labels = append(d.Labels, int64(ex.Label))
		if keep {
			d.Pixels, d.IDs = append(d.Pixels, px), append(d.IDs, ex.ID)
		}
		d.N++
	}
	if d.N == 0 {
		return Data{}, nil, fmt.Errorf("%s: no examples (offset %d)", src, offset)
	}
	return d, ds.Classes(), nil
}
