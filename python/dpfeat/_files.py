"""Feature, prediction and ledger files as NumPy arrays and dicts, through
``dpfeat convert`` and ``--json`` (no pyarrow)."""

import json
import os
import tempfile

import numpy as np

from ._binary import classes_args, run
from ._classifier import load_classifier


def _import_args(label_column=None, features_column=None, id_column=None):
    args = []
    for flag, value in (("--label-column", label_column), ("--features-column", features_column), ("--id-column", id_column)):
        if value is not None:
            args += [flag, value]
    return args


def _npz(path, extra=(), classes=None):
    with tempfile.TemporaryDirectory(prefix="dpfeat-py-") as tmp:
        out = os.path.join(tmp, "out.npz")
        if classes is not None:
            extra = list(extra) + classes_args(classes, tmp)
        run("convert", "--in", path, "--out", out, *extra, names={out: "the converted copy"})
        with np.load(out) as z:
            return {k: z[k] for k in z.files}


def read_features(path, classes=None, label_column=None, features_column=None, id_column=None):
    """Reads a feature file (dpfeat's Arrow, or any format ``dpfeat
    convert`` reads) as a dict: ``X`` (float32 rows × D), ``y`` (int32 class
    indices, −1 unlabeled), ``classes`` (list of names), ``ids`` (list, or
    None) and ``metadata`` (the file's dpfeat metadata)."""
    extra = _import_args(label_column, features_column, id_column)
    z = _npz(path, extra, classes)
    info = json.loads(run("inspect", "--json", *extra, path))
    return {
        "X": z["X"],
        "y": z["y"],
        "classes": [str(c) for c in z["classes"]] if "classes" in z else [],
        "ids": [str(i) for i in z["ids"]] if "ids" in z else None,
        "metadata": info.get("metadata", {}),
    }


def read_predictions(path):
    """Reads a predictions file written by ``dpfeat predict`` as a dict:
    ``scores`` (float32 rows × classes), ``predicted`` and ``labels`` (int32
    class indices, labels −1 when unknown), ``classes`` and ``ids``."""
    if path.endswith(".npz"):  # predict --out pred.npz wrote it so already
        with np.load(path) as f:
            z = {k: f[k] for k in f.files}
    else:
        z = _npz(path)
    return {
        "scores": z["scores"],
        "predicted": z["predicted"],
        "labels": z["labels"],
        "classes": [str(c) for c in z["classes"]],
        "ids": [str(i) for i in z["ids"]] if "ids" in z else None,
    }


def guarantee(classifier_path):
    """The privacy statement of a classifier file, as a dict (ε, δ, μ or ρ,
    accountant, mechanisms with their noise, adjacency, what is assumed
    public, whether it was seeded)."""
    return load_classifier(classifier_path).guarantee


def ledger(data, ledger_dir=None, name=None):
    """The budget ledger of a dataset (``dpfeat budget show --json``) as a
    dict: the budget, every release and their composition."""
    args = ["budget", "show", "--features", data]
    if ledger_dir is not None:
        args += ["--ledger", ledger_dir]
    if name is not None:
        args += ["--name", name]
    return run(*args, json_output=True)
