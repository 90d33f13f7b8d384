// Package train is the use-case layer between the command line (and the
// sweep) and the packages below it: it turns what a fit produced
// (solvers.Result) into the classifier file the other commands and users
// read (models.Classifier). Keeping this here lets models hold one concept
// — classifier and manifest files — without importing the solvers.
//
// The way a feature file becomes a classifier is meant to live here in
// full (issue 17: opening and checking files, counting labels once,
// streaming or in-memory fits, the public/private policies); today the
// command line and the sweep still drive the fits themselves and share
// this conversion.
package train
