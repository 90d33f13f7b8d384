// Command classes writes copies of bench/shift.sh's feature sets with
// fewer classes (issue 41, bench/shift.sh classes): label y becomes
// ⌊y·K/10⌋, so Fashion-MNIST's ten classes (and the digits') merge into K
// groups of neighbours. For each set VARIANT-ENCODER it writes
// bench/out/shift-VARIANTkK-ENCODER-{private,test,public}.arrow from
// bench/out/shift-VARIANT-ENCODER-*.arrow (fmnist-ENCODER, in
// distribution, becomes idkK-ENCODER), skipping parts the set lacks and
// files already there, and prints the new sets' names, comma-separated.
//
//	go run ./bench/shift/classes K SET[,SET…]…
package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/dpfeat/dpfeat/features"
)

func main() {
	if len(os.Args) < 3 {
		fmt.Fprintln(os.Stderr, "usage: classes K SET…")
		os.Exit(2)
	}
	k, err := strconv.Atoi(os.Args[1])
	if err != nil || k < 2 || k > 10 {
		fmt.Fprintf(os.Stderr, "classes: K %q: expected a whole number from 2 to 10\n", os.Args[1])
		os.Exit(1)
	}
	var names []string
	for _, set := range strings.Split(strings.Join(os.Args[2:], ","), ",") {
		name, err := merge(set, k)
		if err != nil {
			fmt.Fprintln(os.Stderr, "classes:", err)
			os.Exit(1)
		}
		names = append(names, name)
	}
	fmt.Println(strings.Join(names, ","))
}

// merge writes set's parts with k classes and returns the new set's name.
func merge(set string, k int) (string, error) {
	src, name := "bench/out/shift-"+set, ""
	if enc, ok := strings.CutPrefix(set, "fmnist-"); ok {
		src, name = "bench/out/"+set, fmt.Sprintf("idk%d-%s", k, enc)
	} else if i := strings.Index(set, "-fmnist-"); i > 0 {
		name = fmt.Sprintf("%sk%d%s", set[:i], k, set[i:])
	} else {
		return "", fmt.Errorf("set %q: expected VARIANT-fmnist-ENCODER or fmnist-ENCODER", set)
	}
	for _, part := range []string{"private", "test", "public"} {
		in, out := src+"-"+part+".arrow", "bench/out/shift-"+name+"-"+part+".arrow"
		if _, err := os.Stat(in); err != nil {
			if part == "private" {
				return "", fmt.Errorf("set %q: %w", set, err)
			}
			continue // digits has no public part
		}
		if _, err := os.Stat(out); err == nil {
			continue
		}
		m, err := features.ReadAll(in, features.ReadOptions{})
		if err != nil {
			return "", err
		}
		if len(m.Meta.Classes) != 10 {
			return "", fmt.Errorf("%s has %d classes; expected 10", in, len(m.Meta.Classes))
		}
		for i, y := range m.Labels {
			if y >= 0 {
				m.Labels[i] = y * int32(k) / 10
			}
		}
		meta := m.Meta
		meta.Classes = nil
		for g := 0; g < k; g++ {
			meta.Classes = append(meta.Classes, fmt.Sprintf("group%d", g))
		}
		b := features.Batch{Dim: m.Dim, Features: m.Data, Labels: m.Labels, IDs: m.IDs}
		if err := features.WriteFile(out, meta, features.WriterOptions{WithID: m.IDs != nil}, b); err != nil {
			return "", err
		}
	}
	return name, nil
}
