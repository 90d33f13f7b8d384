package synthbasis

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpfeat/dpfeat/encode"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/randproc"
)

// DefaultCount is the number of images of a synthetic basis. In a screen
// on the shift bench's twelve 600-row sets (5 seeds, OpenBLAS build)
// 1,000, 2,000, 5,000 and 20,000 images gave mean accuracies 0.564,
// 0.567, 0.569 and 0.565 at ε = 0.5 and 0.661, 0.659, 0.658 and 0.658 at
// ε = 1: the same within seed noise. 2,000 keep a large encoder's one-off
// cost to minutes on a CPU (ViT-B/16 at 9.6 images/s on 2 cores,
// bench/results/extract.md: 3.5 minutes).
const DefaultCount = 2000

// CacheEnv names the environment variable that moves the cache (Dir).
const CacheEnv = "DPFEAT_CACHE"

// Settings are what a synthetic basis is a function of, with the encoder.
type Settings struct {
	// Count is the number of images (DefaultCount).
	Count int64
	// Seed keys the images (randproc.Stream).
	Seed uint64
}

// Images returns the random-process images of the settings for an encoder
// input: its size and channels, so that its preprocessing resizes nothing.
func (s Settings) Images(in models.Input) randproc.Options {
	return randproc.Options{Processes: []string{"deadleaves", "spectrum"}, Width: in.Width, Height: in.Height, Channels: in.Channels, Count: s.Count, Seed: s.Seed}
}

// key is what a basis file is a function of besides the encoder: its
// images' options, as JSON. It names the file (Path) and is the identity a
// resumed making must match (Ensure).
func key(o randproc.Options) []byte {
	b, _ := json.Marshal(o)
	return b
}

// Source describes the images, for the file's dpfeat.source and the
// record extract keeps of the basis.
func (s Settings) Source(in models.Input) string {
	o := s.Images(in)
	return fmt.Sprintf("%s %d random-process images (%s, %d×%d, %d channel(s), seed %d): no data", features.SyntheticBasisSource, o.Count, strings.Join(o.Processes, ", "), o.Height, o.Width, o.Channels, o.Seed)
}

// Dir is the cache folder: $DPFEAT_CACHE/basis, or the user cache's
// dpfeat/basis (os.UserCacheDir).
func Dir() (string, error) {
	if d := os.Getenv(CacheEnv); d != "" {
		return filepath.Join(d, "basis"), nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no cache folder for the synthetic basis (set %s): %w", CacheEnv, err)
	}
	return filepath.Join(d, "dpfeat", "basis"), nil
}

// Path is the basis file in dir for the encoder (its SHA-256) and
// settings: one name per encoder, input and settings.
func Path(dir, encoderSHA256 string, in models.Input, s Settings) string {
	h := sha256.Sum256(key(s.Images(in)))
	return filepath.Join(dir, fmt.Sprintf("%.16s-%s.arrow", encoderSHA256, hex.EncodeToString(h[:6])))
}

// Request says which basis Ensure makes and how.
type Request struct {
	Dir      string
	Settings Settings
	// Input is the encoder's (models.Manifest.Input); Encoder and
	// Preprocessor run it.
	Input        models.Input
	Encoder      encode.Encoder
	Preprocessor *encode.Preprocessor
	// EncoderSHA256 and EncoderName are recorded in the file.
	EncoderSHA256, EncoderName, Version string
	Batch                               int
	// Progress receives the progress bar while it is made; nil for none.
	Progress io.Writer
	// Making, when set, is called with the file's path before it is made
	// (not when it is found).
	Making func(path string)
}

// Ensure returns the basis file for r, making it first unless a whole one
// of this encoder is there (made says which). An interrupted making is
// resumed by the next.
func Ensure(ctx context.Context, r Request) (path string, made bool, err error) {
	o := r.Settings.Images(r.Input)
	if err := o.Check(); err != nil {
		return "", false, fmt.Errorf("synthetic basis: %w", err)
	}
	path = Path(r.Dir, r.EncoderSHA256, r.Input, r.Settings)
	ok, err := whole(path, r.EncoderSHA256, r.Settings.Count)
	if ok || err != nil {
		return path, false, err
	}
	if err := os.MkdirAll(r.Dir, 0o777); err != nil {
		return "", false, fmt.Errorf("synthetic basis: %w", err)
	}
	if r.Making != nil {
		r.Making(path)
	}
	source := r.Settings.Source(r.Input)
	_, err = encode.Extract(ctx, NewDataset(o, source), r.Encoder, r.Preprocessor, path, encode.ExtractOptions{
		Batch: r.Batch, Resume: true, Progress: r.Progress, ProgressLabel: "synthetic basis",
		Meta:     features.Metadata{Version: r.Version, EncoderSHA256: r.EncoderSHA256, EncoderName: r.EncoderName, Classes: o.Processes, Source: source, IDs: features.IDsOfExamples},
		Identity: map[string]string{"model sha256": r.EncoderSHA256, "synthetic basis": string(key(o))},
	})
	if err != nil {
		return "", false, fmt.Errorf("synthetic basis %s: %w", path, err)
	}
	return path, true, nil
}

// whole reports whether path is a finished basis file of the encoder with
// count rows. A missing file is not an error; one that is not that is
// (something else wrote there: it is named, never replaced).
func whole(path, encoderSHA256 string, count int64) (bool, error) {
	if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	rows, err := features.SyntheticBasisRows(path, encoderSHA256)
	if err == nil && rows != count {
		err = fmt.Errorf("%s has %d rows, not %d", path, rows, count)
	}
	if err != nil {
		return false, fmt.Errorf("synthetic basis: %w; delete it to make it again", err)
	}
	return true, nil
}
