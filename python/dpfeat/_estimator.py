"""A scikit-learn estimator over ``dpfeat fit``."""

import os
import tempfile

import numpy as np

from ._binary import classes_args, run
from ._classifier import load_classifier

try:  # scikit-learn is optional: with it, the estimator is one of its own.
    from sklearn.base import BaseEstimator as _Base
    from sklearn.base import ClassifierMixin as _Mixin
    from sklearn.exceptions import NotFittedError as _NotFitted
except ImportError:  # pragma: no cover - exercised where sklearn is missing
    class _Base:
        def get_params(self, deep=True):
            return {k: getattr(self, k) for k in _PARAMS}

        def set_params(self, **params):
            for k, v in params.items():
                if k not in _PARAMS:
                    raise ValueError("invalid parameter %r for DPClassifier" % k)
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

_PARAMS = ("method", "epsilon", "delta", "random_state", "classes", "params", "normalize", "ledger", "ledger_name", "other_data")


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

    After ``fit``: ``classes_``, ``classifier_`` (a :class:`Classifier`),
    ``guarantee_`` (the privacy statement, a dict), ``fit_report_`` (``dpfeat
    fit --json``) and ``n_features_in_``.
    """

    def __init__(self, method="dpfc", epsilon=1.0, delta=1e-5, random_state=None, classes=None, params=None, normalize=True,
                 ledger=None, ledger_name=None, other_data=False):
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
        X = np.asarray(X, dtype=np.float32)
        y = np.asarray(y)
        if X.ndim != 2:
            raise ValueError("X must be 2-dimensional (rows, features), got shape %s" % (X.shape,))
        if y.ndim != 1 or len(y) != len(X):
            raise ValueError("y must hold one label per row of X: %d rows, y of shape %s" % (len(X), y.shape))
        numeric = y.dtype.kind in "iub"
        if y.dtype.kind == "f":
            if not np.all(np.isfinite(y)) or not np.all(y == np.round(y)):
                raise ValueError("y holds non-integer floats; a classifier needs discrete labels")
            numeric = True
        labels = y.astype(np.int64) if numeric else y.astype(str)
        with tempfile.TemporaryDirectory(prefix="dpfeat-py-") as tmp:
            train = os.path.join(tmp, "train.npz")
            out = os.path.join(tmp, "classifier.safetensors")
            np.savez(train, X=X, y=labels)
            args = ["fit", "--method", self.method, "--train", train, "--epsilon", repr(float(self.epsilon)), "--out", out]
            if self.delta is not None and np.isfinite(float(self.epsilon)):
                args += ["--delta", repr(float(self.delta))]
            if self.random_state is not None:
                if not isinstance(self.random_state, (int, np.integer)):
                    raise ValueError("random_state must be an int (dpfeat's --seed) or None")
                args += ["--seed", str(int(self.random_state))]
            if self.classes is not None:
                args += classes_args(self.classes, tmp)
            for k, v in (self.params or {}).items():
                args += ["--param", "%s=%s" % (k, v)]
            if not self.normalize:
                args.append("--no-normalize")
            if self.ledger is not None:
                args += ["--ledger", str(self.ledger)]
            if self.ledger_name is not None:
                args += ["--ledger-name", str(self.ledger_name)]
            if self.other_data:
                args.append("--other-data")
            self.fit_report_ = run(*args, json_output=True, names={train: "X and y", out: "the classifier",
                                                                   "--ledger-name": "ledger_name=", "--other-data": "other_data=True"})
            self.classifier_ = load_classifier(out)
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
            raise _NotFitted("this DPClassifier is not fitted yet: call fit first")

    def decision_function(self, X):
        """Class scores (rows × classes), as ``dpfeat predict`` writes them."""
        self._check()
        return self.classifier_.decision_function(np.asarray(X, dtype=np.float32))

    def predict(self, X):
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]

    def predict_proba(self, X):
        """The softmax of the scores: a logistic model's probabilities for
        the linear methods; for prototype methods a monotone map of the
        distances, not a calibrated probability."""
        s = self.decision_function(X)
        s = s - s.max(axis=1, keepdims=True)
        e = np.exp(s)
        return e / e.sum(axis=1, keepdims=True)
