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
// and pandas — or, where they are missing (Debian packages neither), as CSV
// exported by the dpfeat binary, the summary then made by dpfeat — and
// reproduces the summary table and the plots (matplotlib). Its code
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
import csv
import math
import os
import shutil
import subprocess
import tempfile

import matplotlib.pyplot as plt

try:
    import pandas as pd
    import pyarrow as pa
    import pyarrow.ipc as ipc
except ImportError:
    pd = None  # Debian packages neither: the dpfeat binary reads the file instead

RESULTS = %s


def dpfeat_csv(*args):
    """The results (or, with --summary, the summary) as CSV rows, exported by dpfeat."""
    exe = os.environ.get("DPFEAT_BIN") or shutil.which("dpfeat")
    if exe is None:
        raise RuntimeError("install pyarrow and pandas, or put the dpfeat binary on PATH (or set DPFEAT_BIN)")
    out = os.path.join(tempfile.mkdtemp(), "out.csv")
    subprocess.run([exe, "export", "--results", RESULTS, "--format", "csv", "--out", out, *args], check=True)
    with open(out, newline="") as f:
        return list(csv.DictReader(f))


if pd is not None:
    with pa.memory_map(RESULTS) as source:
        df = ipc.open_file(source).read_all().to_pandas()
    jobs, failed = len(df), int((df["error"].fillna("") != "").sum())
else:
    df = dpfeat_csv()
    jobs, failed = len(df), sum(1 for r in df if r["error"])
print(jobs, "jobs;", failed, "failed")`, path)),
		code("summary", `
def number(v):
    return float(v) if v not in ("", None) else math.nan


if pd is not None:
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
    rows = summary.to_dict("records")
else:
    # The same selection, made by dpfeat (export --summary).
    rows = [
        dict(dataset=s["dataset"], method=s["method"], epsilon=number(s["epsilon"]), val=number(s["val_accuracy_median"]),
             test=number(s["test_accuracy_median"]), test_min=number(s["test_accuracy_min"]), test_max=number(s["test_accuracy_max"]),
             balanced=number(s["test_balanced_accuracy_median"]), minority=number(s["test_minority_accuracy_median"]),
             seeds=int(s["seeds"]), imbalanced=s["imbalanced"] == "true", tuning=s["tuning"])
        for s in dpfeat_csv("--summary")
    ]
    summary = rows
print(f"{'dataset':16} {'method':12} {'ε':>8} {'test':>7} {'min':>7} {'max':>7}  tuning")
for r in rows:
    print(f"{r['dataset']:16} {r['method']:12} {r['epsilon']:>8g} {r['test']:>7.4f} {r['test_min']:>7.4f} {r['test_max']:>7.4f}  {r['tuning']}")
summary`),
		code("accuracy", `
def groups(rows, key):
    out = {}
    for r in rows:
        out.setdefault(r[key], []).append(r)
    return out


for dataset, g in groups(rows, "dataset").items():
    fig, ax = plt.subplots(figsize=(6, 4))
    private = [r for r in g if r["epsilon"] != math.inf]
    for method, h in groups(private, "method").items():
        h = sorted(h, key=lambda r: r["epsilon"])
        eps = [r["epsilon"] for r in h]
        (line,) = ax.plot(eps, [r["test"] for r in h], marker="o", label=method)
        ax.fill_between(eps, [r["test_min"] for r in h], [r["test_max"] for r in h], color=line.get_color(), alpha=0.2)
    for r in g:
        if r["epsilon"] == math.inf:
            ax.axhline(r["test"], linestyle="--", color="gray", linewidth=1)
            ax.annotate(f"{r['method']} (non-private)", (1, r["test"]), xycoords=("axes fraction", "data"), ha="right", va="bottom", fontsize=8)
    ax.set_xscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("test accuracy (median; band: min–max over seeds)")
    ax.set_title(dataset)
    ax.legend()
    plt.show()`),
		code("imbalance", `
imb = [r for r in rows if r["imbalanced"] and r["epsilon"] != math.inf]
for dataset, g in groups(imb, "dataset").items():
    fig, ax = plt.subplots(figsize=(6, 4))
    for method, h in groups(g, "method").items():
        h = sorted(h, key=lambda r: r["epsilon"])
        eps = [r["epsilon"] for r in h]
        (line,) = ax.plot(eps, [r["balanced"] for r in h], marker="o", label=f"{method} balanced")
        ax.plot(eps, [r["minority"] for r in h], marker="s", linestyle="--", color=line.get_color(), label=f"{method} minority")
    ax.set_xscale("log")
    ax.set_xlabel("ε")
    ax.set_ylabel("test accuracy (median over seeds)")
    ax.set_title(f"{dataset}: balanced and minority-class accuracy")
    ax.legend(fontsize=8)
    plt.show()
if not imb:
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
