// Package objstore reads and writes dpfeat's files at paths of object
// storage — gs://bucket/key, s3://bucket/key, memfs://key — through the
// Apache Beam Go SDK's file system registry (beam/io/filesystem), so that
// a shard manifest, its shards and a runner's per-pass results can live
// where a cluster's workers and its driver all reach them (Dataflow's
// workers share no disk with the machine that submitted the job).
//
// A path is remote when it starts with a scheme and "://" (IsRemote);
// every other path is a local one and is left to package os. Which
// schemes work depends on the build: the Beam build (dpfeat-beam)
// registers gs, s3 and memfs (beam.go); the nobeam build links no Beam
// and hands any command naming such a path to dpfeat-beam, as it does a
// --runner command.
//
// Object stores have no folders and no rename, but an object written
// through the registry appears whole when its writer is closed and not
// before (GCS and S3 uploads, memfs's commit on Close): Put and
// WriteFile rely on that for "written whole or not at all", and a
// manifest, written last, is what commits a dataset (features'
// ShardManifest). Reading, Fetch copies an object into an unlinked local
// file: nothing is left on the local disk when the process ends, however
// it ends.
package objstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/dpfeat/dpfeat/internal/atomicfile"
	"github.com/dpfeat/dpfeat/internal/interrupt"
)

// BeamSchemes are the schemes whose file systems the Beam build
// registers (beam.go): the nobeam build, which links no Beam, hands a
// command naming such a path to dpfeat-beam.
var BeamSchemes = []string{"gs", "s3", "memfs"}

// fileSystem is what objstore asks of a file system: Beam's
// filesystem.Interface, which every registered one implements.
type fileSystem interface {
	io.Closer
	List(ctx context.Context, glob string) ([]string, error)
	OpenRead(ctx context.Context, filename string) (io.ReadCloser, error)
	OpenWrite(ctx context.Context, filename string) (io.WriteCloser, error)
	Size(ctx context.Context, filename string) (int64, error)
}

// remover and modTimer are the optional parts objstore uses (Beam's
// filesystem.Remover and LastModifiedGetter).
type (
	remover interface {
		Remove(ctx context.Context, filename string) error
	}
	modTimer interface {
		LastModified(ctx context.Context, filename string) (time.Time, error)
	}
)

// scheme matches a remote path's scheme (RFC 3986's syntax) and "://".
var scheme = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*://`)

// IsRemote reports whether p names an object through a scheme
// (gs://b/k, s3://b/k, memfs://k) rather than a local file.
func IsRemote(p string) bool { return scheme.MatchString(p) }

// Scheme returns a remote path's scheme ("gs"), or "" for a local path.
func Scheme(p string) string {
	if !IsRemote(p) {
		return ""
	}
	s, _, _ := strings.Cut(p, "://")
	return s
}

// split returns a remote path's "scheme://" and the rest.
func split(p string) (prefix, rest string) {
	i := strings.Index(p, "://") + 3
	return p[:i], p[i:]
}

// Join joins a folder and slash-separated names: with "/" and path.Join's
// cleaning after the scheme for a remote folder, filepath.Join for a
// local one.
func Join(dir string, elem ...string) string {
	if !IsRemote(dir) {
		parts := []string{dir}
		for _, e := range elem {
			parts = append(parts, filepath.FromSlash(e))
		}
		return filepath.Join(parts...)
	}
	pre, rest := split(dir)
	return pre + path.Join(append([]string{rest}, elem...)...)
}

// Dir is a path's folder: what follows the scheme up to its last "/" for
// a remote path ("gs://b/x/m.json" → "gs://b/x"), filepath.Dir for a local
// one.
func Dir(p string) string {
	if !IsRemote(p) {
		return filepath.Dir(p)
	}
	pre, rest := split(p)
	if i := strings.LastIndex(rest, "/"); i >= 0 {
		return pre + rest[:i]
	}
	return pre
}

// Base is a path's last element.
func Base(p string) string {
	if !IsRemote(p) {
		return filepath.Base(p)
	}
	_, rest := split(p)
	return path.Base(rest)
}

// CheckName refuses a remote path that cannot name an object: no key
// after the bucket, a trailing "/", or "." and ".." elements (an object
// store keeps them literally, and two spellings would name two objects).
func CheckName(p string) error {
	if !IsRemote(p) {
		return nil
	}
	_, rest := split(p)
	if rest == "" || strings.HasSuffix(rest, "/") || path.Clean(rest) != rest || strings.HasPrefix(rest, "../") {
		return fmt.Errorf("%s: expected an object's name (scheme://bucket/key, no trailing /, no . or .. elements)", p)
	}
	if Scheme(p) != "memfs" && !strings.Contains(rest, "/") {
		return fmt.Errorf("%s: expected scheme://bucket/key; this names a bucket", p)
	}
	return nil
}

// fsOf returns the registered file system of a remote path (newFS, of
// the build), or an error that says how to get one.
func fsOf(ctx context.Context, p string) (fileSystem, error) {
	fs, err := newFS(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("%s: %s:// paths are read and written by dpfeat-beam, the Beam build, which registers %s:// (this build has no %s:// file system)", p, Scheme(p), strings.Join(BeamSchemes, "://, "), Scheme(p))
	}
	return fs, nil
}

// ErrTooLarge is ReadFile's error for a file over its limit.
var ErrTooLarge = errors.New("larger than expected")

// ReadFile returns a file's or object's bytes, refusing more than limit
// (ErrTooLarge).
func ReadFile(ctx context.Context, p string, limit int64) ([]byte, error) {
	var r io.ReadCloser
	if IsRemote(p) {
		fs, err := fsOf(ctx, p)
		if err != nil {
			return nil, err
		}
		defer fs.Close()
		if r, err = fs.OpenRead(ctx, p); err != nil {
			return nil, notExist(ctx, fs, p, err)
		}
	} else {
		f, err := os.Open(p)
		if err != nil {
			return nil, err
		}
		r = f
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, ErrTooLarge
	}
	return b, nil
}

// WriteFile writes data at p whole or not at all: atomicfile's temporary
// and rename for a local path, one object committed when its writer
// closes for a remote one.
func WriteFile(ctx context.Context, p string, data []byte) error {
	if !IsRemote(p) {
		return atomicfile.WriteBytes(p, data)
	}
	if err := CheckName(p); err != nil {
		return err
	}
	fs, err := fsOf(ctx, p)
	if err != nil {
		return err
	}
	defer fs.Close()
	return write(ctx, fs, p, bytes.NewReader(data))
}

// write copies r into the object p, committed when its writer closes.
// On an error the upload's context is cancelled before the writer
// closes, so that GCS and S3 abandon it rather than commit what was
// copied (Beam's memfs, for tests, commits it all the same).
func write(ctx context.Context, fs fileSystem, p string, r io.Reader) error {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	w, err := fs.OpenWrite(wctx, p)
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	if _, err := io.Copy(w, r); err != nil {
		cancel()
		w.Close()
		return fmt.Errorf("write %s: %w", p, err)
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// Put uploads the local file src to the remote path dst, then checks the
// object's size against the file's: an object is committed when its
// writer closes, so dst holds all of src or, after any error, whatever
// it held before.
func Put(ctx context.Context, src, dst string) error {
	if err := CheckName(dst); err != nil {
		return err
	}
	fs, err := fsOf(ctx, dst)
	if err != nil {
		return err
	}
	defer fs.Close()
	f, err := os.Open(src)
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	if err := write(ctx, fs, dst, f); err != nil {
		return err
	}
	if n, err := fs.Size(ctx, dst); err != nil || n != st.Size() {
		return fmt.Errorf("write %s: the object holds %d bytes after the upload, the file %d (%v)", dst, n, st.Size(), err)
	}
	return nil
}

// Fetch copies the object at p into a new local file and returns it open,
// already unlinked: its space is freed when the last descriptor closes,
// and a process that is killed leaves nothing behind (the copy's folder
// is also registered with package interrupt while it is written). The
// copy's size is checked against the object's.
func Fetch(ctx context.Context, p string) (*os.File, error) {
	fs, err := fsOf(ctx, p)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	size, err := fs.Size(ctx, p)
	if err != nil {
		return nil, notExist(ctx, fs, p, err)
	}
	r, err := fs.OpenRead(ctx, p)
	if err != nil {
		return nil, notExist(ctx, fs, p, err)
	}
	defer r.Close()
	dir, err := os.MkdirTemp("", "dpfeat-fetch-")
	if err != nil {
		return nil, err
	}
	defer interrupt.Temporary(dir)()
	defer os.RemoveAll(dir) // made just above, for this copy alone
	f, err := os.Create(filepath.Join(dir, "object"))
	if err != nil {
		return nil, err
	}
	n, err := io.Copy(f, r)
	if err == nil && n != size {
		err = fmt.Errorf("read %d bytes of an object of %d", n, size)
	}
	if err == nil {
		_, err = f.Seek(0, io.SeekStart)
	}
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return f, nil
}

// Size returns the size of the file or object at p; an error wrapping
// os.ErrNotExist when there is none.
func Size(ctx context.Context, p string) (int64, error) {
	if !IsRemote(p) {
		st, err := os.Stat(p)
		if err != nil {
			return 0, err
		}
		return st.Size(), nil
	}
	fs, err := fsOf(ctx, p)
	if err != nil {
		return 0, err
	}
	defer fs.Close()
	n, err := fs.Size(ctx, p)
	if err != nil {
		return 0, notExist(ctx, fs, p, err)
	}
	return n, nil
}

// Stamp names the version of the object at p that a copy of it is: its
// size and, where the store keeps one, its last modification time. A
// replaced object has another stamp unless it has the same size and was
// replaced within the time's resolution (a second on S3): Stamp keys
// copies of objects that are not rewritten in place, such as the shards
// of extract --runner, each run's under a name of its own.
func Stamp(ctx context.Context, p string) (string, error) {
	if !IsRemote(p) {
		n, err := Size(ctx, p)
		return fmt.Sprint(n), err
	}
	fs, err := fsOf(ctx, p)
	if err != nil {
		return "", err
	}
	defer fs.Close()
	n, err := fs.Size(ctx, p)
	if err != nil {
		return "", notExist(ctx, fs, p, err)
	}
	if lm, ok := fs.(modTimer); ok {
		if t, err := lm.LastModified(ctx, p); err == nil {
			return fmt.Sprintf("%d@%d", n, t.UnixNano()), nil
		}
	}
	return fmt.Sprint(n), nil
}

// Exists reports whether a file or object is at p.
func Exists(ctx context.Context, p string) (bool, error) {
	_, err := Size(ctx, p)
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return err == nil, err
}

// notExist wraps os.ErrNotExist into a failed read of p when no object
// of that name is listed (each store has its own not-found error), and
// returns err otherwise.
func notExist(ctx context.Context, fs fileSystem, p string, err error) error {
	if errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("%s: %w", p, os.ErrNotExist)
	}
	if names, lerr := fs.List(ctx, escape(p)); lerr == nil && len(names) == 0 {
		return fmt.Errorf("%s: %w", p, os.ErrNotExist)
	}
	return fmt.Errorf("%s: %w", p, err)
}

// escape quotes a name's glob characters for List.
func escape(p string) string {
	r := strings.NewReplacer(`\`, `\\`, `*`, `\*`, `?`, `\?`, `[`, `\[`)
	return r.Replace(p)
}

// List returns the objects below the remote folder dir whose names
// (after dir and "/") match pattern (path.Match's syntax: "*" stays
// within one element, so "*" lists one level and "*/*" the next), sorted.
func List(ctx context.Context, dir, pattern string) ([]string, error) {
	if !IsRemote(dir) {
		m, err := filepath.Glob(filepath.Join(dir, pattern))
		return m, err
	}
	fs, err := fsOf(ctx, dir)
	if err != nil {
		return nil, err
	}
	defer fs.Close()
	names, err := fs.List(ctx, escape(dir)+"/"+pattern)
	if err != nil {
		return nil, fmt.Errorf("list %s: %w", dir, err)
	}
	// A store's "*" may cross "/" (GCS's does): match again here.
	var out []string
	for _, n := range names {
		if rel, ok := strings.CutPrefix(n, dir+"/"); ok {
			if ok, _ := path.Match(pattern, rel); ok {
				out = append(out, n)
			}
		}
	}
	slices.Sort(out)
	return out, nil
}

// Remove removes the file or object at p; none there is no error.
func Remove(ctx context.Context, p string) error {
	if !IsRemote(p) {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		return nil
	}
	fs, err := fsOf(ctx, p)
	if err != nil {
		return err
	}
	defer fs.Close()
	rm, ok := fs.(remover)
	if !ok {
		return fmt.Errorf("remove %s: the %s:// file system cannot remove objects", p, Scheme(p))
	}
	if err := rm.Remove(ctx, p); err != nil {
		if errors.Is(notExist(ctx, fs, p, err), os.ErrNotExist) {
			return nil // (GCS reports a missing object; S3 and memfs do not)
		}
		return fmt.Errorf("remove %s: %w", p, err)
	}
	return nil
}
