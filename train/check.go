package train

import (
	"fmt"
	"slices"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
)

// SameClasses is the one rule for whether two files describe the same
// classes: the same names in the same order (labels index them).
func SameClasses(a, b []string) bool { return slices.Equal(a, b) }

// CheckFeatures checks features to be scored by a classifier (eval,
// predict): the same dimension, the same encoder unless anyEncoder (or
// either does not say), the same classes when the file names them, and no
// label the classifier lacks. The paths name the files in the error.
func CheckFeatures(clf *models.Classifier, clfPath string, m *features.Matrix, featPath string, anyEncoder bool) error {
	if m.Dim != clf.Dim {
		return fmt.Errorf("%s has %d features per row; %s expects %d", featPath, m.Dim, clfPath, clf.Dim)
	}
	if clf.EncoderSHA256 != "" && m.Meta.EncoderSHA256 != "" && clf.EncoderSHA256 != m.Meta.EncoderSHA256 && !anyEncoder {
		return fmt.Errorf("%s was extracted with encoder %s (%.12s…) but %s was trained on features of %s (%.12s…); pass --force to compare anyway",
			featPath, m.Meta.EncoderName, m.Meta.EncoderSHA256, clfPath, clf.EncoderName, clf.EncoderSHA256)
	}
	if len(m.Meta.Classes) > 0 && !SameClasses(m.Meta.Classes, clf.Classes) {
		return fmt.Errorf("%s has classes %v; %s was trained on %v", featPath, m.Meta.Classes, clfPath, clf.Classes)
	}
	// A file without class names may hold labels the classifier lacks.
	for i, y := range m.Labels {
		if int(y) >= len(clf.Classes) {
			return fmt.Errorf("%s: row %d has label %d, but %s has %d classes (labels 0..%d)", featPath, i, y, clfPath, len(clf.Classes), len(clf.Classes)-1)
		}
	}
	return nil
}
