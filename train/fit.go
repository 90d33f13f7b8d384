package train

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/solvers"
)

// Request is one fit of a method on a feature file.
type Request struct {
	Method string
	// Train is the training feature file; Public optional unlabeled public
	// features (the prototype methods choose from them).
	Train, Public string
	// Options are the privacy target, noise, hyperparameters and hooks
	// (Calibrated: where a budget ledger records the release).
	Options solvers.Options
	// NoNormalize keeps the rows at their scale.
	NoNormalize bool
	// PublicCounts declares the training file's class counts public: they
	// are stored in the classifier and the guarantee lists them.
	PublicCounts bool
	// AnyEncoder accepts public features from another encoder.
	AnyEncoder bool
	// Note receives one-off remarks for the user (never a private
	// quantity unless n is public).
	Note func(format string, args ...any)
}

// Outcome is a fitted classifier and what went into it.
type Outcome struct {
	Classifier *models.Classifier
	Result     *solvers.Result
	// Rows is n as the classifier stores it: the true count when n is
	// public, n̂ when it was released (Options.PrivateN), 0 when not used.
	Rows int
}

// Fit fits req.Method on req.Train: it opens and checks the files, counts
// the labels once, streams the file through the method in passes (methods
// with sufficient statistics) or loads and prepares it (the others),
// applies the public/private policies inside the fit — what the guarantee
// lists as public (n, class counts), what the classifier may store — and
// builds the classifier. The caller records the release (Options.Calibrated)
// and writes the classifier.
func Fit(ctx context.Context, req Request) (*Outcome, error) {
	m, err := solvers.Lookup(req.Method)
	if err != nil {
		return nil, err
	}
	o := req.Options
	o.NoNormalize = req.NoNormalize
	tf, err := features.Open(req.Train, features.ReadOptions{})
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	meta, dim, rows := tf.Metadata(), tf.Dim(), int(tf.Rows())
	classes := meta.Classes
	if len(classes) < 2 {
		return nil, fmt.Errorf("%s: %d class name(s) in its metadata; a classifier needs at least 2", req.Train, len(classes))
	}
	note := func(format string, args ...any) {
		if req.Note != nil {
			req.Note(format, args...)
		}
	}
	// These notes read n: not given when n is not public.
	if m.Private && o.PrivateN == 0 && o.Delta >= 1/float64(rows) {
		note("WARNING: δ = %g is not below 1/n = %g: a mechanism that publishes one random example outright would meet it. Use δ ≪ 1/n.", o.Delta, 1/float64(rows))
	}
	if o.PrivateN == 0 && dim > rows {
		note("dimension %d exceeds the %d training rows; the ridge term keeps the system solvable", dim, rows)
	}
	// The class counts are private: they go into the classifier (for
	// eval's minority classes) only when declared public or for a
	// non-private reference.
	storeCounts := req.PublicCounts || !m.Private
	counts, mat, err := readLabels(tf, req.Train, len(classes), storeCounts, solvers.Streams(m.Name))
	if err != nil {
		return nil, err
	}
	if req.Public != "" {
		pf, err := openPublic(req, tf)
		if err != nil {
			return nil, err
		}
		defer pf.Close()
		o.Public = fileSource{f: pf, normalize: !req.NoNormalize}
	}
	var res *solvers.Result
	if solvers.Streams(m.Name) {
		// Sufficient statistics in passes over the memory-mapped file:
		// memory does not grow with the number of rows.
		res, err = solvers.FitRows(ctx, m.Name, fileRows{tf}, len(classes), o)
	} else {
		var data *solvers.Data
		if data, err = solvers.Prepare(mat.Data, mat.Labels, mat.Dim, len(classes), !req.NoNormalize); err != nil {
			return nil, fmt.Errorf("%s: %w", req.Train, err)
		}
		res, err = solvers.Fit(ctx, m.Name, data, o)
	}
	if err != nil {
		return nil, fmt.Errorf("fit %s on %s: %w", m.Name, req.Train, err)
	}
	if m.Private && storeCounts && !slices.ContainsFunc(res.Guarantee.Public, func(p string) bool { return strings.HasPrefix(p, "class counts") }) {
		res.Guarantee.Public = append(res.Guarantee.Public, "class counts of the training file (--public-counts: stored in the classifier for eval's minority classes)")
	}
	stored := rows
	switch {
	case m.Private && o.PrivateN > 0:
		stored = int(math.Round(res.RowsReleased)) // n̂, or 0 if unused
	case m.Private:
		solvers.ListPublicN(&res.Guarantee, rows, "stored in the classifier (train_rows)")
	}
	clf := Classifier(m.Name, res, classes, dim)
	clf.EncoderSHA256, clf.EncoderName = meta.EncoderSHA256, meta.EncoderName
	clf.TrainRows, clf.TrainCounts = int64(stored), counts
	return &Outcome{Classifier: clf, Result: res, Rows: stored}, nil
}

// readLabels counts the labels (when they may be stored) and, for the
// in-memory methods, loads the file; every training row needs a label.
func readLabels(tf *features.File, path string, classes int, store, streams bool) ([]int64, *features.Matrix, error) {
	var counts []int64
	count := func(offset int64, labels []int32) error {
		if counts == nil {
			counts = make([]int64, classes)
		}
		for i, y := range labels {
			if y < 0 {
				return fmt.Errorf("%s: row %d is unlabeled; training rows need labels", path, offset+int64(i))
			}
			counts[y]++
		}
		return nil
	}
	var mat *features.Matrix
	var err error
	if streams {
		if store {
			err = tf.Each(func(b features.Batch) error { return count(b.Offset, b.Labels) })
		}
	} else if mat, err = tf.Load(); err == nil {
		err = count(0, mat.Labels)
	}
	if err != nil {
		return nil, nil, err
	}
	if !store {
		counts = nil
	}
	return counts, mat, nil
}

// openPublic opens the public features, streamed from the memory map
// (public sets can be large), checked against the training file.
func openPublic(req Request, tf *features.File) (*features.File, error) {
	pf, err := features.Open(req.Public, features.ReadOptions{})
	if err != nil {
		return nil, err
	}
	pm, meta := pf.Metadata(), tf.Metadata()
	switch {
	case pf.Dim() != tf.Dim():
		err = fmt.Errorf("--public %s has %d features per row; %s has %d", req.Public, pf.Dim(), req.Train, tf.Dim())
	case pm.EncoderSHA256 != meta.EncoderSHA256 && !req.AnyEncoder:
		err = fmt.Errorf("--public %s comes from encoder %s (%.12s…), %s from %s (%.12s…); pass --force to use it anyway",
			req.Public, pm.EncoderName, pm.EncoderSHA256, req.Train, meta.EncoderName, meta.EncoderSHA256)
	}
	if err != nil {
		pf.Close()
		return nil, err
	}
	return pf, nil
}
