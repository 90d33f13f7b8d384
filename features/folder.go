package features

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// imageFolder reads root/<class>/*.{png,jpg,jpeg}; class names are the
// sorted folder names, images are read in sorted order.
type imageFolder struct {
	root    string
	classes []string
	files   []string
	labels  []int32
	next    int
}

func isImageName(n string) bool {
	switch strings.ToLower(filepath.Ext(n)) {
	case ".png", ".jpg", ".jpeg":
		return true
	}
	return false
}

func openImageFolder(root string) (Dataset, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("open dataset %s: %w", root, err)
	}
	d := &imageFolder{root: root}
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			d.classes = append(d.classes, e.Name())
		}
	}
	if len(d.classes) == 0 {
		return nil, fmt.Errorf("open dataset %s: no class folders; expected %s/<class>/*.png|jpg|jpeg (or a Hugging Face, IDX or CIFAR dataset)", root, root)
	}
	sort.Strings(d.classes)
	for ci, c := range d.classes {
		dir := filepath.Join(root, c)
		ents, err := os.ReadDir(dir)
		if err != nil {
			return nil, fmt.Errorf("open dataset %s: %w", dir, err)
		}
		n := 0
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && isImageName(e.Name()) {
				d.files = append(d.files, filepath.Join(dir, e.Name()))
				d.labels = append(d.labels, int32(ci))
				n++
			}
		}
		if n == 0 {
			return nil, fmt.Errorf("open dataset %s: class folder %q holds no .png, .jpg or .jpeg images; remove it or add images", root, c)
		}
	}
	return d, nil
}

func (d *imageFolder) Classes() []string { return d.classes }
func (d *imageFolder) Len() int64        { return int64(len(d.files)) }
func (d *imageFolder) Source() string    { return "image folder " + d.root }
func (d *imageFolder) Close() error      { return nil }

func (d *imageFolder) Next() (Example, error) {
	if d.next >= len(d.files) {
		return Example{}, io.EOF
	}
	i := d.next
	d.next++
	b, err := os.ReadFile(d.files[i])
	if err != nil {
		return Example{}, fmt.Errorf("read image %s: %w", d.files[i], err)
	}
	rel, err := filepath.Rel(d.root, d.files[i])
	if err != nil {
		rel = d.files[i]
	}
	return Example{Encoded: b, Label: d.labels[i], ID: filepath.ToSlash(rel), Index: int64(i)}, nil
}
