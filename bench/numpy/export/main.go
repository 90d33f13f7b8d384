// Command export writes a feature file's features and labels as raw
// little-endian float32 (N×D) and int32 (N) arrays, for the NumPy side of
// bench/numpy.sh.
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"os"

	"github.com/dpfeat/dpfeat/features"
)

func main() {
	if len(os.Args) != 4 {
		fmt.Fprintln(os.Stderr, "usage: export FEATS.arrow X.f32 Y.i32")
		os.Exit(2)
	}
	m, err := features.ReadAll(os.Args[1], features.ReadOptions{})
	if err == nil {
		err = write(os.Args[2], m.Data)
	}
	if err == nil {
		err = write(os.Args[3], m.Labels)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "export:", err)
		os.Exit(1)
	}
	fmt.Printf("%d %d %d\n", m.Rows, m.Dim, len(m.Meta.Classes))
}

func write(path string, data any) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	if err := binary.Write(w, binary.LittleEndian, data); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return f.Close()
}
