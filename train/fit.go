package train

import (
	"context"
	"fmt"
	"hash/maphash"
	"math"
	"os"
	"slices"
	"unsafe"

	"github.com/dpfeat/dpfeat/accounting"
	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/internal/fspath"
	"github.com/dpfeat/dpfeat/internal/objstore"
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/solvers"

	// The one place the prototype methods are linked: whoever fits
	// through train (the command line, the sweep as a library, the
	// benchmarks) knows every method.
	_ "github.com/dpfeat/dpfeat/prototypes"
)

// Request is one fit of a method on a feature file.
type Request struct {
	Method string
	// Train is the training feature file; Public optional unlabeled public
	// features (the prototype methods choose from them; a transform,
	// Options.Transform, is learned from them instead of privately).
	Train, Public string
	// Basis, optional, is public features whose principal directions a
	// pca or whiten transform takes (solvers.TransformSpec.Basis), such
	// as the encoder's own training data; the transform's mean stays
	// private. Without it, auto takes the basis the training file's
	// encoder manifest names (features.Metadata.Basis, recorded by
	// extract) unless NoEncoderBasis.
	Basis string
	// NoEncoderBasis keeps auto from the encoder's basis (fit
	// --encoder-basis=false).
	NoEncoderBasis bool
	// Options are the privacy target, noise, hyperparameters and hooks
	// (Privacy.Charger: where a budget ledger records the release).
	Options solvers.Options
	// NoNormalize keeps the rows at their scale.
	NoNormalize bool
	// PublicCounts declares the training file's class counts public: they
	// are stored in the classifier and the guarantee lists them.
	PublicCounts bool
	// AnyEncoder accepts public features from another encoder.
	AnyEncoder bool
	// Import says how to read a training file that is not a dpfeat
	// feature file (features.ImportOptions); its Classes also names the
	// classes of one that is.
	Import features.ImportOptions
	// Exclude, when set, leaves out the training rows the rule selects (a
	// sweep's validation rows). It is a per-row rule: adding or removing
	// one row moves no other.
	Exclude *features.RowRule
	// Cache, when set, keeps what Fit loads — the in-memory methods'
	// prepared rows, Exclude's row mask — for later fits of the same
	// training file (a sweep's jobs). Safe for concurrent fits.
	Cache *Cache
	// Note receives one-off remarks for the user (never a private
	// quantity unless n is public).
	Note func(format string, args ...any)
	// TrainName, when set, is how the guarantee and notes name the
	// training data instead of its path (the Python package's temporary
	// file is "y" to its user).
	TrainName string
	// PublicName is TrainName for the public features; BasisName for
	// the basis features.
	PublicName, BasisName string
}

// Outcome is a fitted classifier and what went into it.
type Outcome struct {
	Classifier *models.Classifier
	Result     *solvers.Result
	// Rows is n as the classifier stores it (after Exclude): the true
	// count when n is public, n̂ when it was released (Options.PrivateN),
	// 0 when not used.
	Rows int
}

// Fit fits req.Method on req.Train: it opens and checks the files, counts
// the labels once, streams the file through the method in passes (methods
// with sufficient statistics) or loads and prepares it (the others),
// applies the public/private policies inside the fit — what the guarantee
// lists as public (n, class counts), what the classifier may store — and
// builds the classifier. The caller records the release (Options.Privacy.Charger)
// and writes the classifier.
func Fit(ctx context.Context, req Request) (*Outcome, error) {
	m, err := solvers.Lookup(req.Method)
	if err != nil {
		return nil, err
	}
	o := req.Options
	o.NoNormalize = req.NoNormalize
	tf, err := features.Open(req.Train, features.ReadOptions{Import: req.Import})
	if err != nil {
		return nil, err
	}
	defer tf.Close()
	meta, dim := tf.Metadata(), tf.Dim()
	classes := meta.Classes
	if err := req.Cache.checked(tf, req.Train); err != nil {
		return nil, err
	}
	if tf.Views() != nil {
		// An example's views are grouped by its id.
		if err := features.CheckExampleIDs(tf); err != nil {
			return nil, err
		}
	}
	var rows solvers.Rows = fileRows{tf}
	var mask []bool
	if req.Exclude != nil {
		if mask, err = req.Cache.excluded(tf, req.Train, req.Exclude); err != nil {
			return nil, err
		}
		rows = maskedRows{tf, mask}
	}
	mk := maskKey{req.Train, req.Exclude}
	if rows, err = req.Cache.examplesIn(tf, rows, mask, mk); err != nil {
		return nil, err
	}
	n := int(solvers.ExamplesOf(rows)) // n counts examples, not their views
	note := func(format string, args ...any) {
		if req.Note != nil {
			req.Note(format, args...)
		}
	}
	if line := tf.Imported().Note(req.trainName(), classes); line != "" {
		note("%s", line)
	}
	// These notes read n: not given when n is not public.
	if w := accounting.DeltaWarning(o.Privacy.Delta, n); m.Private && o.Privacy.PrivateN == 0 && w != "" {
		note("%s", w)
	}
	// Only a method with a ridge solves a D×D system (auto says what it
	// chose in its own line).
	_, ridge := m.Param("lambda")
	if o.Privacy.PrivateN == 0 && dim > n && ridge {
		note("dimension %d exceeds the %d training rows; the ridge term keeps the system solvable", dim, n)
	}
	// The class counts are private: they go into the classifier (for
	// eval's minority classes) only when declared public or for a
	// non-private reference.
	storeCounts := req.PublicCounts || !m.Private
	var data *solvers.Data
	if !solvers.Streams(m.Name) {
		key := dataKey{mk, !req.NoNormalize}
		if data, err = req.Cache.prepared(rows, key, len(classes)); err != nil {
			return nil, err
		}
		rows = solvers.DataRows(data)
	}
	var counts []int64
	if storeCounts {
		if counts, err = CountLabels(rows, req.Train, len(classes)); err != nil {
			return nil, err
		}
	}
	if req.Public != "" {
		pf, err := openPublic(req, tf, req.Public, "--public")
		if err != nil {
			return nil, err
		}
		defer pf.Close()
		o.Public = fileSource{f: pf, normalize: !req.NoNormalize}
		if o.PublicPath = req.Public; !objstore.IsRemote(req.Public) {
			o.PublicPath = fspath.Resolve(req.Public) // (workers' folders are not the driver's)
		}
		// A transform (asked for, or auto's) comes from the public rows,
		// free.
		o.Transform.Public, o.Transform.PublicName = o.Public, "the public features "+req.publicName()+" ("+PublicCheck+")"
	}
	basis, basisFlag, basisName := req.Basis, "--transform-basis", "the public features "+named(req.Basis, req.BasisName)
	if basis == "" && m.Name == solvers.Auto && req.Public == "" && !req.NoEncoderBasis {
		p, err := features.RecordedBasis(meta)
		if err != nil {
			return nil, fmt.Errorf("%s: %w; pass --transform-basis FILE to give it, or --encoder-basis=false to fit without it", req.trainName(), err)
		}
		if p != "" {
			basis, basisFlag, basisName = p, "the encoder's basis", "the encoder's basis features "+p+" ("+meta.BasisOrigin()+")"
		}
	}
	if basis != "" {
		bf, err := openPublic(req, tf, basis, basisFlag)
		if err != nil && basis != req.Basis {
			return nil, fmt.Errorf("%w (--encoder-basis=false fits without it)", err)
		}
		if err != nil {
			return nil, err
		}
		defer bf.Close()
		o.Transform.Basis = fileSource{f: bf, normalize: !req.NoNormalize}
		o.Transform.BasisName = basisName + " (" + PublicCheck + ")"
	}
	var res *solvers.Result
	if data == nil {
		// Sufficient statistics in passes over the memory-mapped file:
		// memory does not grow with the number of rows.
		res, err = solvers.FitRows(ctx, m.Name, rows, len(classes), o)
	} else {
		res, err = solvers.Fit(ctx, m.Name, data, o)
	}
	if err != nil {
		return nil, fmt.Errorf("fit %s on %s: %w", m.Name, req.Train, err)
	}
	if _, used := res.Hyperparameters["transform_basis"]; used && basis != req.Basis {
		note("auto: the transform's directions came from the encoder's basis features %s, %s (--encoder-basis=false: without them)", basis, meta.BasisOrigin())
	}
	if v := tf.Views(); v != nil && m.Private {
		res.Guarantee.Unit = v.Unit()
	}
	// The public rows a method read itself (prototypes chosen or refined
	// on them) are named here, with the checks they passed; a transform
	// learned from them names them in its own line.
	if m.Private && req.Public != "" && slices.ContainsFunc(res.Guarantee.Assumptions(), func(a accounting.Assumption) bool { return a.Kind == accounting.AssumePublicFeatures }) {
		res.Guarantee.Assume(accounting.Assumption{Kind: accounting.AssumePublicFeatures, Subject: req.publicName(), Detail: PublicCheck})
	}
	if m.Private && meta.Extra[features.MetaClassesFrom] == features.ClassesFromLabels {
		res.Guarantee.Assume(ClassesFromLabelsPublic(req.trainName()))
	}
	if m.Private && storeCounts {
		res.Guarantee.Assume(accounting.Assumption{Kind: accounting.AssumeClassCounts, Uses: []string{"stored in the classifier for eval's minority classes"}})
	}
	stored := n
	switch {
	case m.Private && o.Privacy.PrivateN > 0:
		stored = int(math.Round(res.RowsReleased)) // n̂, or 0 if unused
	case m.Private:
		res.Guarantee.Assume(solvers.PublicN(n, "stored in the classifier (train_rows)"))
	}
	clf := Classifier(res.Method, res, classes, dim) // auto: the method it chose
	clf.EncoderSHA256, clf.EncoderName = meta.EncoderSHA256, meta.EncoderName
	clf.TrainRows, clf.TrainCounts = int64(stored), counts
	return &Outcome{Classifier: clf, Result: res, Rows: stored}, nil
}

// trainName is how messages and the guarantee name the training data.
func (req Request) trainName() string { return named(req.Train, req.TrainName) }

// publicName is how messages and the guarantee name the public features.
func (req Request) publicName() string { return named(req.Public, req.PublicName) }

// named is how messages and the guarantee name a file: name when given
// (the Python package's temporary files are "y", "public", "basis" to
// its user), else its path.
func named(path, name string) string {
	if name != "" {
		return name
	}
	return path
}

// CheckClasses is the one rule for a training file's class list: a
// classifier needs at least two classes.
func CheckClasses(path string, classes []string) error {
	if len(classes) < 2 {
		return fmt.Errorf("%s: %d class(es); a classifier needs at least 2 (a file without class names takes them from its label column: --label-column names the column, --classes lists the classes)", path, len(classes))
	}
	return nil
}

// ClassesFromLabelsPublic is the guarantee's entry for a class list taken
// from the training file's label values (features.ClassesFromLabels):
// which classes exist is then read from the private data, so it is
// assumed public.
func ClassesFromLabelsPublic(train string) accounting.Assumption {
	return accounting.Assumption{Kind: accounting.AssumeClassesFromLabels, Subject: train}
}

// CountLabels counts the labels of training examples (an example of
// several rows once); every training row needs one (the error names the
// first unlabeled row as the stream numbers it).
func CountLabels(rows solvers.Rows, path string, classes int) ([]int64, error) {
	counts := make([]int64, classes)
	var offset int64
	first := 0 // the stream's next example's first row
	groups := rows.Groups()
	err := rows.Each(func(_ []float32, y []int32) error {
		for i, l := range y {
			if groups != nil {
				if offset+int64(i) != int64(first) {
					continue
				}
				first += int(groups[0])
				groups = groups[1:]
			}
			switch {
			case l < 0:
				return fmt.Errorf("%s: row %d is unlabeled; training rows need labels", path, offset+int64(i))
			case int(l) >= classes:
				return fmt.Errorf("%s: row %d has a label outside the %d classes the file names", path, offset+int64(i), classes)
			}
			counts[l]++
		}
		offset += int64(len(y))
		return nil
	})
	return counts, err
}

// PublicCheck is what the guarantee says of how public data was told
// apart from the private data (notPrivate).
const PublicCheck = "checked not to be the training data: not the same file, not the same source data identity, no row with a training row's features or content id"

// notPrivate refuses public features that are the private data (#36 item
// 3): the same file, the same source data identity (another extraction of
// the source, or a split or subset, which keeps it), or a row with a
// training row's features bit for bit (a copy, a split or a subset of the
// training file, whatever its ids) or content id (the same image under
// another encoder; an image's relative path may recur in another folder,
// so paths are not compared). dpplpublic would otherwise publish training
// rows verbatim as prototypes, and a transform learn from them "at no
// privacy cost".
func notPrivate(flag, public string, pf *features.File, train string, tf *features.File) error {
	pm, tm := pf.Metadata(), tf.Metadata()
	if ps, err := os.Stat(public); err == nil {
		if ts, err := os.Stat(train); err == nil && os.SameFile(ps, ts) {
			return fmt.Errorf("%s %s is the training file %s: public data must not be the private data", flag, public, train)
		}
	}
	if pm.DataID != "" && pm.DataID == tm.DataID {
		return fmt.Errorf("%s %s comes from the same source data as %s (one data identity): public data must not be the private data", flag, public, train)
	}
	// Rows: a training row's features, bit for bit (a copy, a split or a
	// subset of the training file, whatever its ids), or its content id.
	seed := maphash.MakeSeed()
	rowKey := func(b features.Batch, i int) uint64 {
		return maphash.Bytes(seed, unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(b.Row(i)))), 4*b.Dim))
	}
	private := map[uint64]bool{}
	if err := tf.Each(func(b features.Batch) error {
		for i := 0; i < b.Rows(); i++ {
			private[rowKey(b, i)] = true
			if b.IDs != nil && features.IsContentID(b.IDs[i]) {
				private[maphash.String(seed, b.IDs[i])] = true
			}
		}
		return nil
	}); err != nil {
		return err
	}
	return pf.Each(func(b features.Batch) error {
		for i := 0; i < b.Rows(); i++ {
			same := private[rowKey(b, i)]
			if b.IDs != nil && features.IsContentID(b.IDs[i]) {
				same = same || private[maphash.String(seed, b.IDs[i])]
			}
			if same {
				return fmt.Errorf("%s %s: row %d is an example of the training data %s (the same features or content id): public data must not hold private examples", flag, public, b.Offset+int64(i), train)
			}
		}
		return nil
	})
}

// openPublic opens the public features, streamed from the memory map
// (public sets can be large), checked against the training file.
// publicImport is how public features are read: the training data's
// columns, nothing else of its import options.
func publicImport(imp features.ImportOptions) features.ImportOptions {
	return features.ImportOptions{FeaturesColumn: imp.FeaturesColumn, IDColumn: imp.IDColumn}
}

// OpenPublicSource opens the public features at path as a runner's worker
// reads them (PassPublicUtilities): read as the fit reads --public, with
// the training data's import options imp, unit-normalised if normalize.
// The fit checked the file (openPublic) before any worker opens it.
func OpenPublicSource(path string, imp features.ImportOptions, normalize bool) (solvers.PublicSource, func() error, error) {
	f, err := features.Open(path, features.ReadOptions{Import: publicImport(imp)})
	if err != nil {
		return nil, nil, err
	}
	return fileSource{f: f, normalize: normalize}, f.Close, nil
}

func openPublic(req Request, tf *features.File, path, flag string) (*features.File, error) {
	pf, err := features.Open(path, features.ReadOptions{Import: publicImport(req.Import)})
	if err != nil {
		return nil, err
	}
	pm, meta := pf.Metadata(), tf.Metadata()
	if err := notPrivate(flag, path, pf, req.Train, tf); err != nil {
		pf.Close()
		return nil, err
	}
	switch {
	case pf.Dim() != tf.Dim():
		err = fmt.Errorf("%s %s has %d features per row; %s has %d", flag, path, pf.Dim(), req.Train, tf.Dim())
	case pm.EncoderSHA256 != meta.EncoderSHA256 && !req.AnyEncoder:
		err = fmt.Errorf("%s %s comes from encoder %s (%.12s…), %s from %s (%.12s…); pass --force to use it anyway",
			flag, path, pm.EncoderName, pm.EncoderSHA256, req.Train, meta.EncoderName, meta.EncoderSHA256)
	}
	if err != nil {
		pf.Close()
		return nil, err
	}
	return pf, nil
}
