// Package train is the one way dpfeat fits a method on a feature file; the
// command line (`dpfeat fit`), the sweep and the benchmarks all call it.
//
// Fit opens the training file (memory-mapped) and checks it — at least two
// classes (CheckClasses), a label on every row (CountLabels) — leaves out
// the rows of an Exclude rule (a sweep's validation split: a per-row rule,
// so one row added or removed moves no other), then either streams the
// rows through the method in passes (the methods with sufficient
// statistics: memory does not grow with n) or loads and prepares them
// (solvers.Prepare: unit-normalised, grouped by class). Public features
// are streamed block by block, checked to come from the same encoder.
//
// The public/private policies are applied inside the fit, not patched on
// afterwards: n is listed in the guarantee as public unless a noisy n̂ was
// released (solvers.Options.PrivateN); the class counts are stored in the
// classifier only when declared public (Request.PublicCounts, listed in
// the guarantee) or for a non-private reference.
//
// The Outcome holds the classifier (Classifier turns a solvers.Result into
// a models.Classifier, so that models need not import the solvers) and the
// result; the caller records the release in its budget ledger
// (solvers.Options.Privacy.Charger, once, before any noise is drawn), stamps the
// classifier (models.Classifier.Stamp) and writes it. A Cache shares the
// loaded rows between fits of one file, as a sweep's jobs do.
//
// The solvers see rows only through their own interfaces (solvers.Rows,
// solvers.PublicSource); the adapters from feature files live here.
package train
