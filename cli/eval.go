package cli

import (
	"fmt"
	"strings"

	ucli "github.com/urfave/cli/v2"

	"github.com/dpfeat/dpfeat/features"
	"github.com/dpfeat/dpfeat/models"
	fitting "github.com/dpfeat/dpfeat/train"
)

func evalCommand() *ucli.Command {
	return &ucli.Command{
		Name:  "eval",
		Usage: "accuracy, balanced and minority-class accuracy, and per-class accuracy of a classifier on a feature file",
		UsageText: "dpfeat eval --classifier CLF --test FEATS.arrow [--train FEATS.arrow] [--force] [--json]\n\n" +
			"Minority classes are the 25% of classes with the fewest training examples; minority accuracy\n" +
			"is the accuracy over their test examples. The training counts are private, so a classifier\n" +
			"holds them only when fit with --public-counts (or non-private); otherwise --train names the\n" +
			"training file to count them from, here (nothing is stored), or minority accuracy is left out.\n\n" +
			"Example:\n   dpfeat eval --classifier clf.safetensors --test test.arrow",
		Flags: append([]ucli.Flag{
			&ucli.StringFlag{Name: "classifier", Usage: "classifier file (required)"},
			&ucli.StringFlag{Name: "test", Usage: "labelled feature file (required)"},
			&ucli.StringFlag{Name: "train", Usage: "training feature file whose class counts name the minority classes (default: the counts in the classifier, if it has them)"},
			&ucli.BoolFlag{Name: "force", Usage: "evaluate even if the test features come from another encoder"},
			jsonFlag(),
		}, importFlags()...),
		Action: evalAction,
	}
}

type evalReport struct {
	models.Metrics
	MinorityFrom string `json:"minority_from,omitempty"`
	Classifier   string `json:"classifier"`
	Method       string `json:"method"`
	Privacy      string `json:"privacy"`
}

// loadPair opens a classifier and a feature file and checks they belong
// together.
func loadPair(c *ucli.Context, clfPath, featPath string) (*models.Classifier, *features.Matrix, error) {
	clf, err := models.LoadClassifier(clfPath)
	if err != nil {
		return nil, nil, err
	}
	imp, err := importOptions(c)
	if err != nil {
		return nil, nil, err
	}
	imp.Expected = clf.Classes // labels of a file without class names
	m, err := features.ReadAll(featPath, features.ReadOptions{Import: imp})
	if err != nil {
		return nil, nil, err
	}
	if line := m.Imported.Note(featPath, m.Meta.Classes); line != "" {
		fmt.Fprintf(c.App.ErrWriter, "dpfeat: %s\n", line)
	}
	if err := fitting.CheckFeatures(clf, clfPath, m, featPath, c.Bool("force")); err != nil {
		return nil, nil, userErrorf("%v", err)
	}
	return clf, m, nil
}

func evalAction(c *ucli.Context) error {
	clfPath, err := requiredString(c, "classifier")
	if err != nil {
		return err
	}
	testPath, err := requiredString(c, "test")
	if err != nil {
		return err
	}
	clf, m, err := loadPair(c, clfPath, testPath)
	if err != nil {
		return err
	}
	rep := evalReport{Classifier: clfPath, Method: clf.Method, Privacy: clf.Guarantee.String()}
	trainCounts := clf.TrainCounts
	if len(trainCounts) == len(clf.Classes) {
		rep.MinorityFrom = "the classifier's training counts"
	}
	if tr := c.String("train"); tr != "" {
		if trainCounts, err = fileCounts(c, tr, clf.Classes); err != nil {
			return err
		}
		rep.MinorityFrom = tr
	}
	rep.Metrics = clf.Evaluate(m, trainCounts)
	if rep.Rows == 0 {
		return userErrorf("%s has no labelled rows to evaluate on", testPath)
	}
	if rep.MinorityAccuracy == nil {
		rep.MinorityFrom = ""
	}
	if c.Bool("json") {
		return writeJSON(c.App.Writer, rep)
	}
	var b strings.Builder
	minText := "n/a (no training counts: pass --train)"
	if rep.MinorityAccuracy != nil {
		minText = fmt.Sprintf("%.4f", *rep.MinorityAccuracy)
	}
	fmt.Fprintf(&b, "%s on %s (%d rows): accuracy %.4f, balanced %.4f, minority classes %s\n", clfPath, testPath, rep.Rows, rep.Accuracy, rep.BalancedAccuracy, minText)
	fmt.Fprintf(&b, "classifier: %s, %s\n", clf.Method, rep.Privacy)
	for _, ca := range rep.PerClass {
		mark := ""
		if ca.Minority {
			mark = " (minority)"
		}
		fmt.Fprintf(&b, "  %-20s %6d rows  %.4f%s\n", ca.Class, ca.Rows, ca.Accuracy, mark)
	}
	return printf(c.App.Writer, "%s", b.String())
}

// fileCounts counts the labels of a training feature file with the given
// classes.
func fileCounts(c *ucli.Context, path string, classes []string) ([]int64, error) {
	imp, err := importOptions(c)
	if err != nil {
		return nil, err
	}
	imp.Expected = classes
	f, err := features.Open(path, features.ReadOptions{AllowNonFinite: true, Import: imp})
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if got := f.Classes(); !fitting.SameClasses(got, classes) {
		return nil, userErrorf("--train %s has classes %v; the classifier was trained on %v", path, got, classes)
	}
	counts := make([]int64, len(classes))
	err = f.Each(func(b features.Batch) error {
		for _, y := range b.Labels {
			if y >= 0 {
				counts[y]++
			}
		}
		return nil
	})
	return counts, err
}
