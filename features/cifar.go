package features

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// CIFAR10Classes are CIFAR-10's class names (batches.meta.txt).
var CIFAR10Classes = []string{"airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse", "ship", "truck"}

// CIFAR100Classes are CIFAR-100's fine class names (fine_label_names.txt).
var CIFAR100Classes = strings.Fields(`apple aquarium_fish baby bear beaver bed bee beetle bicycle bottle bowl boy bridge bus
butterfly camel can castle caterpillar cattle chair chimpanzee clock cloud cockroach couch crab crocodile cup dinosaur
dolphin elephant flatfish forest fox girl hamster house kangaroo keyboard lamp lawn_mower leopard lion lizard lobster man
maple_tree motorcycle mountain mouse mushroom oak_tree orange orchid otter palm_tree pear pickup_truck pine_tree plain
plate poppy porcupine possum rabbit raccoon ray road rocket rose sea seal shark shrew skunk skyscraper snail snake spider
squirrel streetcar sunflower sweet_pepper table tank telephone television tiger tractor train trout tulip turtle wardrobe
whale willow_tree wolf woman worm`)

const cifarPixels = 32 * 32 * 3

// cifarDataset reads CIFAR binary batches: each record is the label byte
// (CIFAR-10) or coarse and fine label bytes (CIFAR-100), then 1024 red,
// 1024 green and 1024 blue bytes of a 32×32 image, row-major.
type cifarDataset struct {
	files     []string
	src       string
	labelLen  int // 1 for CIFAR-10, 2 for CIFAR-100 (the fine label is used)
	classes   []string
	perFile   []int64
	total     int64
	fi        int
	f         *os.File
	r         *bufio.Reader
	inFile    int64
	next      int64
	recordBuf []byte
}

func openCIFAR(files []string, src string) (Dataset, error) {
	d := &cifarDataset{files: files, src: src}
	// CIFAR-100 ships train.bin/test.bin, CIFAR-10 data_batch_N.bin and
	// test_batch.bin; the record size must then divide the file size.
	base := strings.ToLower(filepath.Base(files[0]))
	d.labelLen, d.classes = 1, CIFAR10Classes
	if base == "train.bin" || base == "test.bin" {
		d.labelLen, d.classes = 2, CIFAR100Classes
	}
	rec := int64(d.labelLen + cifarPixels)
	for _, p := range files {
		st, err := os.Stat(p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		if st.Size() == 0 || st.Size()%rec != 0 {
			return nil, fmt.Errorf("read %s: %d bytes is not a whole number of CIFAR-%d records (%d bytes each)", p, st.Size(), map[int]int{1: 10, 2: 100}[d.labelLen], rec)
		}
		d.perFile = append(d.perFile, st.Size()/rec)
		d.total += st.Size() / rec
	}
	if names := cifarNames(filepath.Dir(files[0]), d.labelLen); names != nil {
		d.classes = names
	}
	d.recordBuf = make([]byte, rec)
	return d, nil
}

// cifarNames reads batches.meta.txt (CIFAR-10) or fine_label_names.txt
// (CIFAR-100) where present.
func cifarNames(dir string, labelLen int) []string {
	name := "batches.meta.txt"
	if labelLen == 2 {
		name = "fine_label_names.txt"
	}
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return nil
	}
	names := strings.Fields(string(b))
	if len(names) != map[int]int{1: 10, 2: 100}[labelLen] {
		return nil
	}
	return names
}

func (d *cifarDataset) Classes() []string { return d.classes }
func (d *cifarDataset) Len() int64        { return d.total }
func (d *cifarDataset) Source() string {
	return fmt.Sprintf("CIFAR-%d %s", map[int]int{1: 10, 2: 100}[d.labelLen], d.src)
}

func (d *cifarDataset) Close() error {
	if d.f != nil {
		d.f.Close()
		d.f = nil
	}
	return nil
}

func (d *cifarDataset) Next() (Example, error) {
	for d.f == nil || d.inFile >= d.perFile[d.fi] {
		if d.f != nil {
			d.f.Close()
			d.f = nil
			d.fi++
		}
		if d.fi >= len(d.files) {
			return Example{}, io.EOF
		}
		f, err := os.Open(d.files[d.fi])
		if err != nil {
			return Example{}, fmt.Errorf("read %s: %w", d.files[d.fi], err)
		}
		d.f, d.r, d.inFile = f, bufio.NewReaderSize(f, 1<<16), 0
	}
	path := d.files[d.fi]
	if _, err := io.ReadFull(d.r, d.recordBuf); err != nil {
		return Example{}, fmt.Errorf("read %s: record %d: %v", path, d.inFile, err)
	}
	label := int32(d.recordBuf[d.labelLen-1])
	if int(label) >= len(d.classes) {
		return Example{}, fmt.Errorf("read %s: record %d has a label outside 0..%d", path, d.inFile, len(d.classes)-1)
	}
	planes := d.recordBuf[d.labelLen:]
	p := &Pixels{Width: 32, Height: 32, Channels: 3, Data: make([]uint8, cifarPixels)}
	for i := 0; i < 1024; i++ {
		p.Data[3*i], p.Data[3*i+1], p.Data[3*i+2] = planes[i], planes[1024+i], planes[2048+i]
	}
	ex := Example{Pixels: p, Label: label, Position: ExampleID(fmt.Sprintf("%s#%d", filepath.Base(path), d.inFile)), Index: d.next}
	d.inFile++
	d.next++
	return ex, nil
}
