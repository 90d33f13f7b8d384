package train

import (
	"github.com/dpfeat/dpfeat/models"
	"github.com/dpfeat/dpfeat/solvers"
)

// Classifier wraps a fitted solver result as a classifier over features of
// dimension dim with the given class names: weights or prototypes, the
// preprocessing the method trained with, method, hyperparameters and
// guarantee. The caller adds what it knows of the data (encoder, rows,
// counts, version).
func Classifier(method string, res *solvers.Result, classes []string, dim int) *models.Classifier {
	clf := &models.Classifier{Kind: "linear", Classes: classes, Dim: dim, Weight: models.Float32s(res.W), Bias: models.Float32s(res.B),
		Prep:   res.Prep, // the one preprocessing type: what the method trained with
		Method: method, Hyperparameters: res.Hyperparameters, Defaulted: res.Defaulted, Guarantee: res.Guarantee}
	if res.Prototypes != nil {
		clf.Kind, clf.Weight, clf.Bias, clf.PerClass, clf.Distance = "prototypes", models.Float32s(res.Prototypes), nil, res.PerClass, res.Distance
	}
	return clf
}
