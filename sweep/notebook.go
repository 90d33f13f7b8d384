package sweep

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
)

// notebookCell is an nbformat 4.5 cell: id, cell_type, metadata, source,
// and for code cells outputs and execution_count (empty and null: the
// notebook has not been run).
type notebookCell map[string]any

// source splits text into nbformat's list of lines (each but the last
// keeps its newline).
func source(text string) []string {
	text = strings.TrimPrefix(text, "\n")
	lines := strings.SplitAfter(text, "\n")
	if n := len(lines); n > 0 && lines[n-1] == "" {
		lines = lines[:n-1]
	}
	if n := len(lines); n > 0 {
		lines[n-1] = strings.TrimSuffix(lines[n-1], "\n")
	}
	return lines
}

// WriteNotebook writes a Jupyter notebook (nbformat 4.5) that loads the
// results file at resultsPath (as the notebook will find it) with pyarrow
// and pandas, and reproduces the summary table and the plots. Its code
// cells have no outputs: run it to see them; nothing is hidden in it.
func WriteNotebook(w io.Writer, resultsPath, version string) error {
	path, _ := json.Marshal(resultsPath)
	cells := []notebookCell{
		md("intro", fmt.Sprintf(`
# dpfeat sweep results

Made by `+"`dpfeat export --format ipynb`"+` (dpfeat %s) from `+"`%s`"+`: one row per job
(dataset, method, ε, hyperparameters, seed) with its privacy guarantee and its
validation and test metrics.

The summary selects, for each dataset, method and ε, the setting with the best
**median validation accuracy** over seeds, and reports the **test accuracy** of that
setting (median, min and max over seeds): never selection on the test set. The
`+"`tuning`"+` column says whether that selection is part of the privacy guarantee
(private selection) or not (selection on validation, as the papers do).`, version, resultsPath)),
		code("load", fmt.Sprintf(`
import math

import matplotlib.pyplot as plt
import pandas as pd
import pyarrow as pa
import pyarrow.ipc as ipc

RESULTS = %s
with pa.memory_map(RESULTS) as source:
    df = ipc.open_file(source).read_all().to_pandas()
failed = df["error"].fillna("") != ""
print(len(df), "jobs;", failed.sum(), "failed")
df.head()`, path)),
		code("summary", `
ok = df[df["error"].fillna("") == ""].copy()
# A private selection chooses its own setting per seed: one group.
ok["group"] = ok["setting"].where(~ok["tuning"].str.startswith("private selection"), "private selection")
keys = ["dataset", "method", "epsilon"]
per_setting = (
    ok.groupby(keys + ["group"], dropna=False)
    .agg(
        val=("val_accuracy", "median"),
        test=("test_accuracy", "median"),
        test_min=("test_accuracy", "min"),
        test_max=("test_accuracy", "max"),
        balanced=("test_balanced_accuracy", "median"),
        minority=("test_minority_accuracy", "median"),
        seeds=("seed", "nunique"),
        imbalanced=("imbalanced", "first"),
        tuning=("tuning", "first"),
        epsilon_spent=("epsilon_spent", "max"),
    )
    .reset_index()
)
# Selection by validation accuracy (the first setting when none has one).
pick = per_setting.assign(_v=per_setting["val"].fillna(-math.inf)).groupby(keys)["_v"].idxmax()
summary = per_setting.loc[pick].sort_values(keys).reset_index(drop=True)
summary`),
		code("accuracy", `
for dataset, g in summary.groupby("dataset"):
    fig, ax = plt.subplots(figsize=(6, 4))
    private = g[g["epsilon"] != math.inf]
    for method, h in private.groupby("method"):
        h = h.sort_values("epsilon")
        (line,) = ax.plot(h["epsilon"], h["test"], marker="o", label=method)
        ax.fill_between(h["epsilon"], h["test_min"], h["test_max"], color=line.get_color(), alpha=0.2)
    for _, r in g[g["epsilon"] == math.inf].iterrows():
        ax.axhline(r["test"], linestyle="--", color="gray", linewidth=1)
        ax.annotate(f"{r['method']} (non-private)", (1, r["test"]), xycoords=("axes fraction", "data"), ha="right", va="bottom", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("test accuracy (median; band: min–max over seeds)")
    ax.set_title(dataset)
    ax.legend()
    plt.show()`),
		code("imbalance", `
imb = summary[summary["imbalanced"] & (summary["epsilon"] != math.inf)]
for dataset, g in imb.groupby("dataset"):
    fig, ax = plt.subplots(figsize=(6, 4))
    for method, h in g.groupby("method"):
        h = h.sort_values("epsilon")
        (line,) = ax.plot(h["epsilon"], h["balanced"], marker="o", label=f"{method} balanced")
        ax.plot(h["epsilon"], h["minority"], marker="s", linestyle="--", color=line.get_color(), label=f"{method} minority")
    ax.set_xscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("test accuracy (median over seeds)")
    ax.set_title(f"{dataset}: balanced and minority-class accuracy")
    ax.legend(fontsize=8)
    plt.show()
if imb.empty:
    print("no imbalanced training files in this sweep")`),
	}
	nb := map[string]any{
		"nbformat":       4,
		"nbformat_minor": 5,
		"metadata": map[string]any{
			"kernelspec":    map[string]any{"display_name": "Python 3", "language": "python", "name": "python3"},
			"language_info": map[string]any{"name": "python"},
		},
		"cells": cells,
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(nb)
}

func md(id, text string) notebookCell {
	return notebookCell{"id": id, "cell_type": "markdown", "metadata": map[string]any{}, "source": source(text)}
}

func code(id, text string) notebookCell {
	return notebookCell{"id": id, "cell_type": "code", "metadata": map[string]any{}, "source": source(text),
		"outputs": []any{}, "execution_count": nil}
}
