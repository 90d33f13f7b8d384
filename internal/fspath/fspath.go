// Package fspath names files by what they are rather than how they are
// spelled: the one rule, shared by the output guards and the output locks,
// for when two paths are one file.
package fspath

import "path/filepath"

// Resolve is a path's absolute form with the links of its deepest existing
// ancestor resolved: two spellings of one file (through a symlinked
// folder, "..", a relative path) resolve alike, whether the file itself
// exists yet or not.
func Resolve(p string) string {
	abs, err := filepath.Abs(p)
	if err != nil {
		return filepath.Clean(p)
	}
	rest := ""
	for dir := abs; ; dir = filepath.Dir(dir) {
		if r, err := filepath.EvalSymlinks(dir); err == nil {
			return filepath.Join(r, rest)
		}
		if dir == filepath.Dir(dir) {
			return abs
		}
		rest = filepath.Join(filepath.Base(dir), rest)
	}
}
