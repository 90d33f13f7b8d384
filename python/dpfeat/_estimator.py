"""A scikit-learn estimator over ``dpfeat fit``."""

import inspect
import numbers
import os
import re
import tempfile
import warnings

import numpy as np

from ._binary import DpfeatWarning, classes_args, rename, run
from ._classifier import load_classifier

try:  # scikit-learn is optional: with it, the estimator is one of its own.
    from sklearn.base import BaseEstimator as _Base
    from sklearn.base import ClassifierMixin as _Mixin
    from sklearn.exceptions import NotFittedError as _NotFitted
except ImportError:  # pragma: no cover - exercised where sklearn is missing
    class _Base:
        """scikit-learn's parameter protocol where it is missing: the
        parameters are __init__'s (as BaseEstimator reads them), so a new
        argument is never left out of get_params."""

        def get_params(self, deep=True):
            names = [p for p in inspect.signature(type(self).__init__).parameters if p != "self"]
            return {k: getattr(self, k) for k in names}

        def set_params(self, **params):
            valid = self.get_params()
            for k, v in params.items():
                if k not in valid:
                    raise ValueError("invalid parameter %r for %s" % (k, type(self).__name__))
                setattr(self, k, v)
            return self

    class _Mixin:
        _estimator_type = "classifier"

        def score(self, X, y, sample_weight=None):
            pred = self.predict(X)
            ok = (pred == np.asarray(y)).astype(float)
            return float(np.average(ok, weights=sample_weight))

    class _NotFitted(ValueError, AttributeError):
        pass



def _flag_args(name, value):
    """A fit option as its command-line flag: a number is a
    hyperparameter (``--param name=value``); a string, a bool or a list is
    the flag of that name (``transform="whiten"`` is ``--transform
    whiten``, ``n_public=False`` is ``--n-public=false``)."""
    flag = "--" + str(name).replace("_", "-")
    if isinstance(value, (bool, np.bool_)):
        return [flag + "=" + ("true" if value else "false")]
    if isinstance(value, numbers.Number):
        return ["--param", "%s=%r" % (name, float(value))]
    if isinstance(value, str):
        return [flag, value]
    if isinstance(value, (list, tuple)):
        return [a for v in value for a in (flag, str(v))]
    raise ValueError("option %s=%r: expected a number, a string, a bool or a list" % (name, value))


def _validate(X, y=None, reset=True, est=None):
    """X (and y) as scikit-learn's validation would take them, with its
    messages where scikit-learn is present: finite float arrays, 2-D X
    ("Reshape your data"), 1-D y, no sparse or complex input."""
    try:
        from sklearn.utils.validation import check_array, check_X_y
    except ImportError:  # pragma: no cover
        X = np.asarray(X)
        if X.ndim != 2:
            raise ValueError("Expected 2D array, got %dD array instead: Reshape your data" % X.ndim)
        if np.iscomplexobj(X):
            raise ValueError("Complex data not supported")
        _finite(X.astype(np.float32))
        if y is not None:
            y = np.asarray(y)
            if y.ndim != 1 or len(y) != len(X):
                raise ValueError("y must hold one label per row of X: %d rows, y of shape %s" % (len(X), y.shape))
        return X.astype(np.float32), y
    if y is None:
        X = check_array(X, dtype=np.float32, estimator=est, force_all_finite=False)
    else:
        X, y = check_X_y(X, y, dtype=np.float32, estimator=est, force_all_finite=False)
    _finite(X)
    return X, y


def _feature_names(X):
    """The column names of a data frame (all strings), else None."""
    cols = getattr(X, "columns", None)
    if cols is None:
        return None
    cols = np.asarray(list(cols), dtype=object)
    return cols if len(cols) and all(isinstance(c, str) for c in cols) else None


def _finite(X):
    """Refuses a non-finite feature the way dpfeat does, naming it."""
    bad = ~np.isfinite(X)
    if bad.any():
        r, c = np.argwhere(bad)[0]
        v = X[r, c]
        what = "NaN" if np.isnan(v) else ("+Inf" if v > 0 else "-Inf")
        raise ValueError("row %d: feature %d is %s: dpfeat needs finite features (no NaN or inf)" % (r, c, what))


# A sketch of the rows of earlier fits in this process, with the ε each
# spent: a cross-validation or a grid search fits the same examples again
# and again, and each fit spends its ε on them. A fit is kept as the 1,024
# smallest 64-bit hashes of its rows (a bottom-k sketch): bounded memory
# and time whatever n, and two fits that share a sizeable part of their
# rows share some of those hashes.
_seen_rows = []  # [(set of row hashes, epsilon)]
_SEEN_LIMIT = 64
_SKETCH = 1024
_WEIGHTS = np.random.default_rng(0x5EED).integers(1, 2**63, size=4096, dtype=np.uint64) | np.uint64(1)


def _row_sketch(X):
    """The _SKETCH smallest hashes of X's rows (float32 bits times fixed
    odd weights, summed modulo 2⁶⁴), computed in blocks of rows."""
    X = np.ascontiguousarray(X, dtype=np.float32)
    bits = X.view(np.uint32)
    w = np.resize(_WEIGHTS, bits.shape[1])
    keep = np.empty(0, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for lo in range(0, len(bits), 4096):
            h = (bits[lo:lo + 4096].astype(np.uint64) * w).sum(axis=1, dtype=np.uint64)
            keep = np.unique(np.concatenate([keep, h]))[:_SKETCH]
    return set(keep.tolist())


def _refit_warning(X, epsilon):
    """Warns (a DpfeatWarning) when X shares rows with earlier fits in this
    process: their ε add up on those examples (basic composition), which
    no single fit's guarantee states."""
    rows = _row_sketch(X)
    spent = [e for seen, e in _seen_rows if not rows.isdisjoint(seen)]
    _seen_rows.append((rows, float(epsilon)))
    del _seen_rows[:-_SEEN_LIMIT]
    if spent and np.isfinite(epsilon):
        total = sum(spent) + float(epsilon)
        warnings.warn("DPClassifier has now been fit %d times on overlapping rows in this process (cross-validation, a grid search?): "
                      "each fit spends its ε on the examples it reads, so together they spend up to ε = %g by basic composition, more than "
                      "any one fit's guarantee says. dpfeat sweep's private selection tunes hyperparameters within one accounted budget "
                      "(docs/sweep.md)." % (len(spent) + 1, total), DpfeatWarning, stacklevel=3)


class DPClassifier(_Mixin, _Base):
    """A differentially private classifier fit by ``dpfeat fit``.

    Parameters
    ----------
    method : str
        The dpfeat method (``dpfc``, ``dpls``, ``dpnewton``, ``dpsgd``,
        ``dplp``, ``dpplmean``, ``auto``, …; ``dpfeat fit --help`` lists them).
    epsilon, delta : float
        The privacy target; ``epsilon=float("inf")`` fits the non-private
        reference.
    random_state : int or None
        Seeds the noise (``--seed``): for reproduction only — the
        classifier is then not private, and its guarantee says so.
    classes : list or None
        The class list, in order (``--classes``). Without it the classes are
        the label values of ``y`` (sorted), and the guarantee lists that
        list as assumed public, since it was read from the data.
    params : dict or None
        Hyperparameters, as ``--param name=value``.
    normalize : bool
        Scale rows to unit norm first (dpfeat's default; ``False`` is
        ``--no-normalize``).
    ledger, ledger_name : str or None
        The budget ledger folder (``--ledger``; default ``$DPFEAT_LEDGER``)
        and the ledger of this data (``--ledger-name``, as ``dpfeat budget
        init --name`` set it): the fit is recorded there, and refused past
        the budget.
    other_data : bool
        Arrays carry no data identity, so while budget ledgers exist a fit
        must say whose data it is: ``ledger_name``, or ``other_data=True``
        for data none of them holds (``--other-data``).
    public : array-like or str or None
        Unlabeled public features (rows × the same features), or a feature
        file: the prototypes ``dpplpublic`` chooses from, those
        ``dpplmean`` refines on them (``params={"refine": 1}``; ``auto`` does
        at small n·μ), and a transform learned from them for free
        (``--public``), which can keep only the span of their clusters
        (``params={"transform": "whiten", "transform_clusters": "32"}``, the
        flags as strings; ``auto`` does where it fits ``dpplmean``), and
        whose rows, labelled by the fitted classifier, can train a linear
        head that replaces it (``"distill": True``, ``--distill``; free;
        ``auto`` does there too).
    accountant : str or None
        ``--accountant`` (auto, gdp, rdp, zcdp, pure).
    basis : array-like or str or None
        Public features whose principal directions a ``pca`` or ``whiten``
        transform takes, for free (``--transform-basis``): best, the
        encoder's own training data. The transform's mean stays private.
        ``method="auto"`` uses them when the data are few (n·μ below 100, or below 300 with at most 16·D rows).

    Every other option of ``dpfeat fit`` goes in ``params`` with its own
    type: numbers are hyperparameters (``{"lambda": 1.0}``), strings,
    bools and lists are the flags of that name (``{"transform": "whiten",
    "optimizer": "adam", "n_public": False}``). (A ``transform`` argument
    would make scikit-learn take the estimator for a transformer.)

    The defaults are the command line's: ``method="auto"``, and ``delta``
    is required for a private method (choose it well below 1/n).
    Warnings and notes dpfeat prints (a δ not below 1/n, a class list read
    from the labels) are raised as :class:`DpfeatWarning`.

    After ``fit``: ``classes_``, ``classifier_`` (a :class:`Classifier`),
    ``guarantee_`` (the privacy statement, a dict), ``fit_report_`` (``dpfeat
    fit --json``), ``n_features_in_``, and ``feature_names_in_`` when ``X``
    was a data frame with string column names.
    """

    def __init__(self, method="auto", epsilon=1.0, delta=None, random_state=None, classes=None, params=None, normalize=True,
                 ledger=None, ledger_name=None, other_data=False, public=None, accountant=None, basis=None):
        self.public = public
        self.basis = basis
        self.accountant = accountant
        self.ledger = ledger
        self.ledger_name = ledger_name
        self.other_data = other_data
        self.method = method
        self.epsilon = epsilon
        self.delta = delta
        self.random_state = random_state
        self.classes = classes
        self.params = params
        self.normalize = normalize

    def fit(self, X, y):
        if y is None:
            raise ValueError("DPClassifier requires y to be passed, but the target y is None")
        columns = _feature_names(X)
        X, y = _validate(X, y, est=self)
        if columns is not None:
            self.feature_names_in_ = columns
        elif hasattr(self, "feature_names_in_"):
            del self.feature_names_in_
        if len(np.unique(y)) < 2:
            raise ValueError("y holds one class only (%r): a classifier needs at least 2" % (y[0] if len(y) else None,))
        numeric = y.dtype.kind in "iub"
        if y.dtype.kind == "f":
            if not np.all(np.isfinite(y)) or not np.all(y == np.round(y)):
                raise ValueError("Unknown label type: y holds non-integer floats; a classifier needs discrete labels")
            numeric = True
        labels = y.astype(np.int64) if numeric else y.astype(str)
        with tempfile.TemporaryDirectory(prefix="dpfeat-py-") as tmp:
            train = os.path.join(tmp, "train.npz")
            out = os.path.join(tmp, "classifier.safetensors")
            np.savez(train, X=X, y=labels)
            names = {train: "X and y", out: "the classifier", tmp + os.sep: "", "--ledger-name": "ledger_name=", "--other-data": "other_data=True",
                     "--delta": "delta", "--epsilon": "epsilon", "--seed": "random_state", "--classes": "classes="}
            args = ["fit", "--method", self.method, "--train", train, "--train-name", "y", "--epsilon", repr(float(self.epsilon)), "--out", out]
            if self.delta is not None:
                args += ["--delta", repr(float(self.delta))]
            if self.random_state is not None:
                if not isinstance(self.random_state, (int, np.integer)):
                    raise ValueError("random_state must be an int (dpfeat's --seed) or None")
                args += ["--seed", str(int(self.random_state))]
            if self.classes is not None:
                args += classes_args(self.classes, tmp)
            for attr, flag in (("public", "--public"), ("basis", "--transform-basis")):
                value = getattr(self, attr)
                if value is None:
                    continue
                if not isinstance(value, (str, os.PathLike)):
                    path = os.path.join(tmp, attr + ".npz")
                    P, _ = _validate(value)
                    if P.shape[1] != X.shape[1]:
                        raise ValueError("%s has %d features per row, X has %d" % (attr, P.shape[1], X.shape[1]))
                    np.savez(path, X=P)
                    names[path] = attr
                    args += [flag + "-name" if attr == "basis" else "--public-name", attr]
                    value = path
                args += [flag, str(value)]
            if self.accountant is not None:
                args += _flag_args("accountant", self.accountant)
            for k, v in (self.params or {}).items():
                args += _flag_args(k, v)
            if not self.normalize:
                args.append("--no-normalize")
            if self.ledger is not None:
                args += ["--ledger", str(self.ledger)]
            if self.ledger_name is not None:
                args += ["--ledger-name", str(self.ledger_name)]
            if self.other_data:
                args.append("--other-data")
            self.fit_report_ = run(*args, json_output=True, names=names)
            for w in self.fit_report_.get("warnings", []):
                # (how dpfeat read the temporary file is not the user's concern)
                m = re.match(r'^note: read \S+ as NumPy \.npz: features from "X", labels from "y"(; )?', w)
                if m:
                    if m.end() == len(w):
                        continue
                    w = "note: " + w[m.end():]
                warnings.warn(rename(w, names), DpfeatWarning, stacklevel=2)
            self.classifier_ = load_classifier(out)
        _refit_warning(X, self.epsilon)
        names = self.classifier_.classes
        if numeric:
            self.classes_ = np.array([int(c) for c in names], dtype=y.dtype if y.dtype.kind in "iu" else np.int64)
        else:
            self.classes_ = np.array(names)
        self.guarantee_ = self.fit_report_.get("guarantee", self.classifier_.guarantee)
        self.n_features_in_ = X.shape[1]
        return self

    def _check(self):
        if not hasattr(self, "classifier_"):
            raise _NotFitted("This DPClassifier instance is not fitted yet. Call 'fit' with appropriate arguments before using this estimator.")

    def _scores(self, X):
        """Class scores (rows × classes), as ``dpfeat predict`` writes them."""
        self._check()
        columns = _feature_names(X)
        fitted = getattr(self, "feature_names_in_", None)
        if columns is not None and fitted is not None and list(columns) != list(fitted):
            raise ValueError("The feature names should match those that were passed during fit: got %s, fit with %s" % (list(columns), list(fitted)))
        X, _ = _validate(X, est=self)
        if X.shape[1] != self.n_features_in_:
            raise ValueError("X has %d features, but DPClassifier is expecting %d features as input." % (X.shape[1], self.n_features_in_))
        return self.classifier_.decision_function(X)

    def decision_function(self, X):
        """Class scores (rows × classes), as ``dpfeat predict`` writes them;
        with two classes, scikit-learn's convention: one column, the second
        class's score less the first's (positive: ``classes_[1]``)."""
        s = self._scores(X)
        if s.shape[1] == 2:
            return s[:, 1] - s[:, 0]
        return s

    def predict(self, X):
        s = self._scores(X)
        return self.classes_[np.argmax(s, axis=1)]

    def predict_proba(self, X):
        """The softmax of the scores: a logistic model's probabilities for
        the linear methods; for prototype methods a monotone map of the
        distances, not a calibrated probability."""
        s = self._scores(X)
        s = s - s.max(axis=1, keepdims=True)
        e = np.exp(s)
        return e / e.sum(axis=1, keepdims=True)
