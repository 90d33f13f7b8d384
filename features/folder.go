package features

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"
)

// imageFolder reads root/<class>/<image>; class names are the sorted
// folder names (or the pinned list), images are read in sorted order.
// Links are followed — to a class folder or to an image — when their
// target lies inside root; every file not read is counted with why
// (SkippedFiles), and a class left without images is named (EmptyClasses).
type imageFolder struct {
	root string
	// real is root with its links resolved, absolute: what a link's
	// target must lie inside.
	real    string
	classes []string
	files   []string
	labels  []int32
	next    int
	skipped []SkippedFile
	empty   []string
}

// SkippedFile is a file of an image folder that is not read, and why.
type SkippedFile struct {
	Path string `json:"path"`
	Why  string `json:"why"`
}

// imageExts are the extensions of the image formats read (Go's image
// packages and golang.org/x/image: PNG, JPEG, GIF, BMP, TIFF, WebP).
var imageExts = []string{"png", "jpg", "jpeg", "gif", "bmp", "tif", "tiff", "webp"}

func isImageName(n string) bool {
	return slices.Contains(imageExts, strings.TrimPrefix(strings.ToLower(filepath.Ext(n)), "."))
}

// realPath is p with its links resolved, absolute (p as given where it
// cannot be resolved): a relative root ("photos") and a link to an
// absolute path inside it have no relative path between them otherwise.
func realPath(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		p = r
	}
	if a, err := filepath.Abs(p); err == nil {
		p = a
	}
	return p
}

// entryKind follows a link inside the folder: "dir", "file", or "" with
// why a link is not followed (broken, or leading out of the dataset).
func (d *imageFolder) entryKind(path string, e fs.DirEntry) (kind, why string) {
	t := e.Type()
	if t&fs.ModeSymlink != 0 {
		target, err := filepath.EvalSymlinks(path)
		if err != nil {
			return "", "a broken link"
		}
		target = realPath(target)
		if rel, err := filepath.Rel(d.real, target); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
			return "", "a link that leads out of the dataset (to " + target + "); copy the file in instead"
		}
		st, err := os.Stat(target)
		if err != nil {
			return "", "a broken link"
		}
		if st.IsDir() {
			return "dir", ""
		}
		if st.Mode().IsRegular() {
			return "file", ""
		}
		return "", "not a regular file"
	}
	switch {
	case t.IsDir():
		return "dir", ""
	case t.IsRegular():
		return "file", ""
	}
	return "", "not a regular file"
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
	d := &imageFolder{root: root, real: realPath(root)}
	var folders []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue
		}
		if kind, _ := d.entryKind(filepath.Join(root, e.Name()), e); kind == "dir" {
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
		d.add(root, ents, Unlabeled)
		if len(d.files) > 0 {
			return d, nil
		}
	}
	if len(d.classes) == 0 {
		return nil, fmt.Errorf("open dataset %s: no class folders and no images; expected %s/<class>/*.png|jpg|gif|bmp|tif|webp, a flat folder of unlabeled images, or a Hugging Face, IDX or CIFAR dataset", root, root)
	}
	for ci, c := range d.classes {
		dir := filepath.Join(root, c)
		ents, err := os.ReadDir(dir)
		if errors.Is(err, fs.ErrNotExist) && pinned != nil {
			d.empty = append(d.empty, c) // a pinned class with no folder: no examples
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("open dataset %s: %w", dir, err)
		}
		before := len(d.files)
		d.add(dir, ents, int32(ci))
		if len(d.files) == before {
			d.empty = append(d.empty, c)
		}
	}
	return d, nil
}

// add takes the images among a folder's entries, with label, and notes
// every other file and why it is not read.
func (d *imageFolder) add(dir string, ents []fs.DirEntry, label int32) {
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), ".") {
			continue // hidden files (.DS_Store, editor state) are not data
		}
		path := filepath.Join(dir, e.Name())
		rel, err := filepath.Rel(d.root, path)
		if err != nil {
			rel = path
		}
		kind, why := d.entryKind(path, e)
		switch {
		case kind == "dir":
			if label != Unlabeled {
				d.skipped = append(d.skipped, SkippedFile{filepath.ToSlash(rel), "a folder inside a class folder (images are read one level deep)"})
			}
			continue
		case kind == "":
		case !isImageName(e.Name()):
			why = "not an image format dpfeat reads (" + strings.Join(imageExts, ", ") + ")"
		default:
			d.files = append(d.files, path)
			d.labels = append(d.labels, label)
			continue
		}
		d.skipped = append(d.skipped, SkippedFile{filepath.ToSlash(rel), why})
	}
}

// SkippedFiles lists the files of the folder that are not read, and why.
func (d *imageFolder) SkippedFiles() []SkippedFile { return d.skipped }

// EmptyClasses names the classes whose folders hold no image dpfeat reads.
func (d *imageFolder) EmptyClasses() []string { return d.empty }

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
