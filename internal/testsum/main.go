// Command testsum reads `go test -json` on standard input and prints each
// package as it finishes — its result, time and test counts — then the
// output of every failed test, and closes with one line: "N passed,
// N failed, N skipped (P packages)". It exits 1 when anything failed, so
// that `make test` shows progress and still fails as go test would.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

type counts struct{ pass, fail, skip int }

func main() {
	os.Exit(run(os.Stdin, os.Stdout))
}

func run(in io.Reader, out io.Writer) int {
	per := map[string]*counts{}
	output := map[string][]string{} // package/test → its lines
	var failed []string
	var total counts
	packages, failedPkgs := 0, 0
	sc := bufio.NewScanner(in)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var e event
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			fmt.Fprintln(out, sc.Text()) // not JSON: a build error, passed through
			continue
		}
		c := per[e.Package]
		if c == nil {
			c = &counts{}
			per[e.Package] = c
		}
		key := e.Package + " " + e.Test
		switch e.Action {
		case "output":
			output[key] = append(output[key], e.Output)
		case "pass", "fail", "skip":
			if e.Test == "" {
				packages++
				status := map[string]string{"pass": "ok  ", "fail": "FAIL", "skip": "--  "}[e.Action]
				if e.Action == "fail" {
					failedPkgs++
					if c.fail == 0 { // a build or setup failure: show the package's output
						failed = append(failed, e.Package+" ")
					}
				}
				if e.Action == "skip" && c.pass+c.fail+c.skip == 0 {
					fmt.Fprintf(out, "%s %s (no tests)\n", status, e.Package)
					continue
				}
				fmt.Fprintf(out, "%s %s %.1fs (%d passed, %d failed, %d skipped)\n", status, e.Package, e.Elapsed, c.pass, c.fail, c.skip)
				continue
			}
			if strings.Contains(e.Test, "/") {
				continue // subtests count in their parent
			}
			switch e.Action {
			case "pass":
				c.pass++
				total.pass++
			case "fail":
				c.fail++
				total.fail++
				failed = append(failed, key)
			case "skip":
				c.skip++
				total.skip++
			}
		}
	}
	sort.Strings(failed)
	for _, k := range failed {
		fmt.Fprintf(out, "\n--- %s\n%s", strings.TrimSpace(k), strings.Join(output[k], ""))
	}
	fmt.Fprintf(out, "\n%d passed, %d failed, %d skipped (%d packages", total.pass, total.fail, total.skip, packages)
	if failedPkgs > 0 {
		fmt.Fprintf(out, ", %d failed", failedPkgs)
	}
	fmt.Fprintln(out, ")")
	if total.fail > 0 || failedPkgs > 0 {
		return 1
	}
	return 0
}
