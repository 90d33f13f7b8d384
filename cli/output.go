package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/internal/fspath"
	"github.com/dpfeat/dpfeat/internal/interrupt"
	"github.com/dpfeat/dpfeat/internal/objstore"
)

func jsonFlag() ucli.Flag {
	return &ucli.BoolFlag{Name: "json", Usage: "print one JSON object on stdout instead of text"}
}

// writeJSON prints v as one indented JSON object and a newline.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return internal(fmt.Errorf("write JSON: %w", err))
	}
	return nil
}

func printf(w io.Writer, format string, args ...any) error {
	if _, err := fmt.Fprintf(w, format, args...); err != nil {
		return internal(fmt.Errorf("write output: %w", err))
	}
	return nil
}

// sameFile reports whether two paths name the same file: the same inode
// when both exist (hard links, symlinks, "..", relative paths), else the
// same cleaned absolute path after resolving the existing part's links.
func sameFile(a, b string) bool {
	if objstore.IsRemote(a) || objstore.IsRemote(b) {
		return a == b // an object has one name
	}
	sa, ea := os.Stat(a)
	sb, eb := os.Stat(b)
	if ea == nil && eb == nil {
		return os.SameFile(sa, sb)
	}
	return fspath.Resolve(a) == fspath.Resolve(b)
}

// within reports whether path lies inside the directory dir.
func within(path, dir string) bool {
	if objstore.IsRemote(path) || objstore.IsRemote(dir) {
		return strings.HasPrefix(path, strings.TrimSuffix(dir, "/")+"/")
	}
	if st, err := os.Stat(dir); err != nil || !st.IsDir() {
		return false
	}
	rel, err := filepath.Rel(fspath.Resolve(dir), fspath.Resolve(path))
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && rel != "."
}

// guardOutputs refuses an output that is one of the inputs (or inside an
// input folder, where a later run would read it as data), and two outputs
// that are one file, so that no run destroys what it reads. outs and ins
// map a flag (without dashes) to its path; empty paths are skipped.
func guardOutputs(outs, ins [][2]string) error {
	for i, o := range outs {
		if o[1] == "" || o[1] == "-" {
			continue
		}
		for _, in := range ins {
			if in[1] == "" || in[1] == "-" {
				continue
			}
			if sameFile(o[1], in[1]) {
				return userErrorf("--%s %s is the same file as --%s %s: an output never replaces an input; choose another path", o[0], o[1], in[0], in[1])
			}
			if within(o[1], in[1]) {
				return userErrorf("--%s %s lies inside --%s %s, which is read as data; write it elsewhere", o[0], o[1], in[0], in[1])
			}
		}
		for _, p := range outs[:i] {
			if p[1] != "" && p[1] != "-" && sameFile(o[1], p[1]) {
				return userErrorf("--%s and --%s name the same file %s", o[0], p[0], o[1])
			}
		}
	}
	return nil
}

// refuseExisting is the one rule for outputs: a file that exists is
// replaced only with --force — making it may have spent privacy budget.
// "-" (standard output) and "" are not files.
func refuseExisting(c *ucli.Context, flag, path string) error {
	if path == "" || path == "-" {
		return nil
	}
	if err := checkOutputFolder(flag, path); err != nil {
		return err
	}
	st, err := os.Stat(path)
	switch {
	case err == nil && st.IsDir():
		return userErrorf("--%s %s is a directory; expected a file name", flag, path)
	case err == nil && !c.Bool("force"):
		return existsError(flag, path)
	case err != nil && !errors.Is(err, os.ErrNotExist):
		return userErrorf("--%s %s: %v", flag, path, err)
	}
	return nil
}

// checkOutputFolder refuses an output whose folder does not exist, is not
// a folder or cannot be written, before any work (or privacy budget) is
// spent on it.
func checkOutputFolder(flag, path string) error {
	if objstore.IsRemote(path) {
		return userErrorf("--%s %s: this output is written to a local path; on object storage dpfeat writes extract --runner's shard manifest and shards (docs/distributed.md)", flag, path)
	}
	dir := filepath.Dir(path)
	st, err := os.Stat(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return userErrorf("--%s %s: the folder %s does not exist; create it first", flag, path, dir)
	case err != nil:
		return userErrorf("--%s %s: %v", flag, path, err)
	case !st.IsDir():
		return userErrorf("--%s %s: %s is not a folder", flag, path, dir)
	}
	if err := writable(dir); err != nil {
		return userErrorf("--%s %s: the folder %s cannot be written (%v)", flag, path, dir, err)
	}
	return nil
}

// refuseExistingObject is refuseExisting for an output on object storage
// (extract --runner's manifest): a name that can be an object's, and an
// object there only with --force. (An object store has no folders to
// make first; a bucket that is not there fails the write, naming it.)
func refuseExistingObject(c *ucli.Context, flag, path string) error {
	if err := objstore.CheckName(path); err != nil {
		return userErrorf("--%s %v", flag, err)
	}
	there, err := objstore.Exists(c.Context, path)
	switch {
	case err != nil:
		return userErrorf("--%s %v", flag, err)
	case there && !c.Bool("force"):
		return existsError(flag, path)
	}
	return nil
}

// existsError refuses to replace an existing output without --force.
func existsError(flag, path string) error {
	return userErrorf("--%s %s exists: pass --force to replace it", flag, path)
}

// checkExtension is the one rule for output names: the extension says the
// format, so a name whose extension is not one the command writes is
// refused (fit --out x.pt once wrote safetensors into a .pt). "-" is
// standard output where allowed lists it, and refused elsewhere (fit,
// extract, convert, split and export-onnx once wrote a file named "-").
func checkExtension(flag, path string, allowed ...string) error {
	if path == "-" {
		if slices.Contains(allowed, "-") {
			return nil
		}
		return userErrorf("--%s -: this command writes a file, not standard output; name the file", flag)
	}
	if path == "" {
		return nil
	}
	ext := strings.ToLower(filepath.Ext(path))
	if slices.Contains(allowed, ext) {
		return nil
	}
	what := "no extension"
	if ext != "" {
		what = "extension " + ext
	}
	exts := slices.DeleteFunc(slices.Clone(allowed), func(e string) bool { return e == "-" })
	if len(exts) < len(allowed) {
		exts = append(exts, "- (standard output)")
	}
	return userErrorf("--%s %s has %s; expected %s", flag, path, what, strings.Join(exts, ", "))
}

// forceFlag is --force on a command whose only override is replacing its
// outputs.
func forceFlag() ucli.Flag {
	return &ucli.BoolFlag{Name: "force", Usage: "replace outputs that exist"}
}

// flagPaths pairs flag names with their values.
func flagPaths(c *ucli.Context, names ...string) [][2]string {
	out := make([][2]string, 0, len(names))
	for _, n := range names {
		out = append(out, [2]string{n, c.String(n)})
	}
	return out
}

// stdinPath returns a path for an input flag's value: the path itself, or
// for "-" a temporary copy of standard input (feature and results files
// are memory-mapped, so they need a file; no extension, so that its
// content says its format), removed by cleanup.
func stdinPath(c *ucli.Context, flag, path string) (string, func(), error) {
	if path != "-" {
		return path, func() {}, nil
	}
	f, err := os.CreateTemp("", "dpfeat-stdin-*")
	if err != nil {
		return "", nil, userErrorf("--%s -: %v", flag, err)
	}
	forget := interrupt.Temporary(f.Name())
	cleanup := func() { f.Close(); os.Remove(f.Name()); forget() } // the copy made just above
	if _, err := io.Copy(f, c.App.Reader); err != nil {
		cleanup()
		return "", nil, userErrorf("--%s -: reading standard input: %v", flag, err)
	}
	return f.Name(), cleanup, nil
}

// stdoutPath returns a path for an output flag's value: the path itself,
// or for "-" a temporary file whose bytes finish copies to standard output
// (and removes).
func stdoutPath(c *ucli.Context, path string) (string, func() error, error) {
	if path != "-" {
		return path, func() error { return nil }, nil
	}
	dir, err := os.MkdirTemp("", "dpfeat-stdout-*")
	if err != nil {
		return "", nil, userErrorf("--out -: %v", err)
	}
	forget := interrupt.Temporary(dir)
	tmp := filepath.Join(dir, "out")
	return tmp, func() error {
		defer forget()
		defer os.RemoveAll(dir) // made by MkdirTemp above, for this output alone
		f, err := os.Open(tmp)
		if err != nil {
			return err
		}
		defer f.Close()
		if _, err := io.Copy(c.App.Writer, f); err != nil {
			return internal(fmt.Errorf("write standard output: %w", err))
		}
		return nil
	}, nil
}
