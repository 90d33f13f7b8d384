package features

import (
	"errors"
	"fmt"
	"io"
)

// ReadImages reads the first limit images of a source (all when limit
// ≤ 0), decoded and held in memory, with their labels (Unlabeled for none)
// and the source's class names: public images to mix private examples with
// (DP-Mix_Diff), or to pretrain on. With labelled, every image needs a
// label.
func ReadImages(src string, opt DatasetOptions, limit int64, labelled bool) ([]Pixels, []int32, []string, error) {
	ds, err := OpenDataset(src, opt)
	if err != nil {
		return nil, nil, nil, err
	}
	defer ds.Close()
	var px []Pixels
	var labels []int32
	for limit <= 0 || int64(len(px)) < limit {
		ex, err := ds.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, nil, nil, err
		}
		if labelled && ex.Label < 0 {
			return nil, nil, nil, fmt.Errorf("%s: image %d (%s) is unlabeled; images to mix with need labels", src, ex.Index, ex.ID)
		}
		p, err := DecodeImage(ex)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("%s: image %d (%s): %w", src, ex.Index, ex.ID, err)
		}
		px, labels = append(px, p), append(labels, ex.Label)
	}
	if len(px) == 0 {
		return nil, nil, nil, fmt.Errorf("%s: no images", src)
	}
	return px, labels, ds.Classes(), nil
}
