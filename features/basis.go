package features

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/dpfeat/dpfeat/internal/filehash"
)

// ErrNoBasis is EncoderBasis's error when the basis file is not there.
var ErrNoBasis = errors.New("no such basis file")

// EncoderBasis checks the public basis features an encoder's manifest
// names (models.Basis) and returns what extract records of them in the
// features it makes (Metadata.Basis, Metadata.BasisSHA256): the absolute
// path and the file's SHA-256. The file must be one dpfeat feature file of
// the same encoder (encoderSHA256); want, when set, is the hash the
// manifest gives. A missing file is ErrNoBasis (wrapped).
func EncoderBasis(path, want, encoderSHA256 string) (abs, sum string, err error) {
	if abs, err = filepath.Abs(path); err != nil {
		return "", "", fmt.Errorf("basis %s: %w", path, err)
	}
	st, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return "", "", fmt.Errorf("basis %s: %w", path, ErrNoBasis)
	case err != nil:
		return "", "", fmt.Errorf("basis %s: %w", path, err)
	case st.IsDir():
		return "", "", fmt.Errorf("basis %s is a folder; expected one feature file (dpfeat extract --out FILE.arrow)", path)
	}
	f, err := Open(abs, ReadOptions{})
	if err != nil {
		return "", "", fmt.Errorf("basis %s: %w", path, err)
	}
	md := f.Metadata()
	f.Close()
	if md.EncoderSHA256 != encoderSHA256 {
		return "", "", fmt.Errorf("basis %s comes from encoder %s (%.12s…), not this one (%.12s…): extract the encoder's own training data with this encoder", path, md.EncoderName, md.EncoderSHA256, encoderSHA256)
	}
	if sum, err = filehash.SHA256(abs); err != nil {
		return "", "", fmt.Errorf("basis %s: %w", path, err)
	}
	if want != "" && sum != want {
		return "", "", fmt.Errorf("basis %s has sha256 %s, but the manifest says %s: wrong file or wrong manifest", path, sum, want)
	}
	return abs, sum, nil
}

// SyntheticBasisSource starts the Metadata.BasisSource of a synthetic
// basis (package synthbasis) and its file's own Metadata.Source. A
// recorded synthetic basis is checked by its own metadata, not by the hash
// extract recorded (SyntheticBasisRows).
const SyntheticBasisSource = "synthetic:"

// SyntheticBasis reports whether the basis md records is a synthetic one:
// random-process images through the encoder, no data.
func (md Metadata) SyntheticBasis() bool {
	return strings.HasPrefix(md.BasisSource, SyntheticBasisSource)
}

// BasisOrigin says where the basis md records came from, for the fit's
// lines and the guarantee: "named by its manifest", or "random-process
// images through the encoder, made by extract: no data".
func (md Metadata) BasisOrigin() string {
	if md.SyntheticBasis() {
		return "random-process images through the encoder, made by extract: no data"
	}
	return "named by its manifest"
}

// RecordedBasis returns the basis features a feature file's metadata names
// (Metadata.Basis, recorded by extract), checked to be the file extract
// saw: "" when it names none; an error when the file has gone or changed
// since.
func RecordedBasis(md Metadata) (string, error) {
	if md.Basis == "" {
		return "", nil
	}
	if _, err := os.Stat(md.Basis); errors.Is(err, fs.ErrNotExist) {
		if md.SyntheticBasis() {
			return "", fmt.Errorf("its encoder's synthetic basis %s (random-process images, made by extract; a cache) is not there: %w; extract any images with this encoder on this machine to make it again", md.Basis, ErrNoBasis)
		}
		return "", fmt.Errorf("its encoder's basis %s (named by the encoder's manifest at extract) is not there: %w", md.Basis, ErrNoBasis)
	}
	if md.SyntheticBasis() {
		if _, err := SyntheticBasisRows(md.Basis, md.EncoderSHA256); err != nil {
			return "", fmt.Errorf("its encoder's synthetic basis: %w; delete it, and extract any images with this encoder to make it again", err)
		}
		return md.Basis, nil
	}
	sum, err := filehash.SHA256(md.Basis)
	if err != nil {
		return "", fmt.Errorf("its encoder's basis: %w", err)
	}
	if md.BasisSHA256 != "" && sum != md.BasisSHA256 {
		return "", fmt.Errorf("its encoder's basis %s has changed since extract (sha256 %.12s…, then %.12s…)", md.Basis, sum, md.BasisSHA256)
	}
	return md.Basis, nil
}

// SyntheticBasisRows checks that path is a synthetic basis of the encoder
// (encoderSHA256): its own metadata says so. It returns its rows. The
// hash extract recorded is not compared: the file is a cache, which,
// remade on another machine or with other threads, may differ in the last
// bits of its features, and whatever its values it holds no data.
func SyntheticBasisRows(path, encoderSHA256 string) (int64, error) {
	f, err := Open(path, ReadOptions{})
	if err != nil {
		return 0, err
	}
	defer f.Close()
	if b := f.Metadata(); b.EncoderSHA256 != encoderSHA256 || !strings.HasPrefix(b.Source, SyntheticBasisSource) {
		return 0, fmt.Errorf("%s is not a synthetic basis of this encoder (%d rows of encoder %.12s…, source %q)", path, f.Rows(), b.EncoderSHA256, b.Source)
	}
	return f.Rows(), nil
}
