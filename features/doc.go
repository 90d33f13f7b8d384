// Package features owns dpfeat's feature files and the datasets they come
// from:
//
//   - the Arrow IPC feature file of docs/formats.md (a fixed_size_list of
//     float32 features, an int32 label, an optional utf8 id, and schema
//     metadata: encoder, classes, source, derivation, and dpfeat.data_id,
//     the identity of the source examples that keys budget ledgers): its
//     streaming writer (committed atomically), Resumable (which owns every
//     OUT.partial* file: a long job only feeds it batches and commits),
//     and its memory-mapped reader, which checks every claimed size
//     against the bytes present before anyone allocates by it;
//   - the image datasets extraction reads (image folders, Hugging Face
//     Arrow, CIFAR, IDX) and DataIdentity, the hash of their examples;
//   - per-row selection rules (RowRule: validation splits and long-tailed
//     subsets decided by a keyed hash of each row alone, so that one
//     example never moves another) and CopyRows;
//   - feature files from other tools (foreign.go): Open reads an Arrow IPC
//     file or stream of another schema, Parquet (a list column of numbers,
//     or one numeric column per dimension; Hugging Face ClassLabel names
//     from the file's metadata), NumPy .npy/.npz and CSV/TSV by converting
//     it once per process to an unlinked temporary feature file. The column
//     choice depends on the schema alone; a file that names no classes
//     takes them from its label values, sorted, and marks the file
//     (dpfeat.classes_from), so that a fit's guarantee lists the class list
//     as assumed public — it was read from the data;
//   - multi-view files (Views, the example column): several rows per
//     private example, the example the unit that splits, subsets and
//     copies keep whole (and that package train groups rows by for the
//     solvers);
//   - Export and WritePredictions write features and predictions as Arrow,
//     Parquet, CSV/TSV, .npy or .npz (tables.go);
//   - prediction files, and the summary `dpfeat inspect` prints (stats.go).
//
// The sufficient statistics the solvers need are computed by package
// solvers from rows it reads through its own interface.
package features
