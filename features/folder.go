package features

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// imageFolder reads root/<class>/*.{png,jpg,jpeg}; class names are the
// sorted folder names (or the pinned list), images are read in sorted
// order.
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

// openImageFolder reads an image folder. Its classes are the sorted names
// of its class folders, empty folders included (an empty folder is a
// class with no examples, not a missing class: the class list is public
// and must not depend on which classes have private rows); or, when
// pinned is given (extract --classes), exactly those names in that order,
// a listed class without a folder being a class with no examples and a
// folder not listed an error.
func openImageFolder(root string, pinned []string) (Dataset, error) {
	ents, err := os.ReadDir(root)
	if err != nil {
		return nil, fmt.Errorf("open dataset %s: %w", root, err)
	}
	d := &imageFolder{root: root}
	var folders []string
	for _, e := range ents {
		if e.IsDir() && !strings.HasPrefix(e.Name(), ".") {
			folders = append(folders, e.Name())
		}
	}
	sort.Strings(folders)
	if pinned != nil {
		index := map[string]bool{}
		for _, c := range pinned {
			if index[c] {
				return nil, fmt.Errorf("open dataset %s: class %q is listed twice in --classes", root, c)
			}
			index[c] = true
		}
		for _, f := range folders {
			if !index[f] {
				return nil, fmt.Errorf("open dataset %s: folder %q is not one of the classes %v; add it to --classes or move it out", root, f, pinned)
			}
		}
		d.classes = append([]string(nil), pinned...)
	} else {
		d.classes = folders
	}
	if len(folders) == 0 {
		// A flat folder of images: unlabeled examples (to predict, or
		// public features for DPPL-Public).
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && isImageName(e.Name()) {
				d.files = append(d.files, filepath.Join(root, e.Name()))
				d.labels = append(d.labels, Unlabeled)
			}
		}
		if len(d.files) > 0 {
			return d, nil
		}
	}
	if len(d.classes) == 0 {
		return nil, fmt.Errorf("open dataset %s: no class folders and no images; expected %s/<class>/*.png|jpg|jpeg, a flat folder of unlabeled images, or a Hugging Face, IDX or CIFAR dataset", root, root)
	}
	for ci, c := range d.classes {
		dir := filepath.Join(root, c)
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) && pinned != nil {
			continue // a pinned class with no folder: no examples
		}
		if err != nil {
			return nil, fmt.Errorf("open dataset %s: %w", dir, err)
		}
		for _, e := range ents {
			if e.Type().IsRegular() && !strings.HasPrefix(e.Name(), ".") && isImageName(e.Name()) {
				d.files = append(d.files, filepath.Join(dir, e.Name()))
				d.labels = append(d.labels, int32(ci))
			}
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
	return Example{Encoded: b, Label: d.labels[i], ID: ExampleID(filepath.ToSlash(rel)), Index: int64(i)}, nil
}

// ExampleID makes a file name a valid UTF-8 id: names that are valid UTF-8
// stay as they are; others (file systems allow any bytes) are written as
// a Go-quoted string — "\"…\"", invalid bytes as \xNN — which is unique and
// cannot be mistaken for a plain name that does not itself start with a
// quote.
func ExampleID(name string) string {
	if utf8.ValidString(name) {
		return name
	}
	return strconv.Quote(name)
}
