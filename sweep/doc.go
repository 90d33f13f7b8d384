// Package sweep runs grids of fits — datasets × methods × hyperparameters ×
// ε × seeds — the way the papers' tables are made, records one row per job
// in an Arrow results file, summarises them honestly (hyperparameters chosen
// on validation, never on test), and exports the rows to CSV, JSON,
// Parquet, a Jupyter notebook and plots.
//
// A configuration (YAML; unknown keys are errors):
//
//	datasets:
//	  - name: fmnist-resnet             # default: the training file's name
//	    train: private.arrow
//	    validation: 0.1                 # a fraction split off train, or a file
//	    test: test.arrow
//	    public: public.arrow            # for dpplpublic, dpplpublick
//	    validation_public: false        # true: the validation file is public data
//	    encoder_basis: true             # false: auto without the basis the encoder's manifest names
//	methods:
//	  dpls: {}                          # the method's defaults
//	  dpfc: {lr: [4, 8], steps: 10}     # numbers or lists
//	  dpsgd:
//	    optimizer: [adam, sgd]
//	    lr: {log: [0.1, 10], num: 5}    # ranges: log or linear, num points
//	  ls: {}                            # references run once, at ε = ∞
//	epsilons: [0.1, 1, 8]
//	delta: 1e-5                         # required: never defaulted
//	seeds: 3                            # or a list
//	noise: secure                       # or seeded (reproducible, not private)
//	split_seed: 0
//	accountant: auto
//	selection:
//	  mode: validation                  # or private (see below)
//
// Jobs run in parallel (RunOptions.Jobs); each finished job is appended to
// a journal next to the output and synced, so an interrupted sweep resumes
// without redoing finished jobs, and the output file is written atomically
// at the end.
//
// Every job is fitted by train.Fit, the same code path as `dpfeat fit`
// (a validation fraction is a train.Request.Exclude rule). With
// RunOptions.Classifiers each job's classifier is written as fit writes
// it; a seeded job's row carries its noise seed, so `dpfeat fit --seed`
// reproduces the classifier byte for byte.
//
// Hyperparameter tuning is part of what a user releases. With mode:
// validation (the papers' practice) the summary picks settings by
// validation accuracy and says that this tuning is not accounted. With
// mode: private, each (method, ε, seed) is one private selection after
// Papernot & Steinke (2022), Thm. 2 (accounting.PrivateSelection), whose reported ε
// includes the tuning.
package sweep
