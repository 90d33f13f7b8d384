"""dpfeat from Python: differentially private classifiers on frozen features.

A thin layer over the ``dpfeat`` binary (NumPy only; scikit-learn optional):

- :class:`DPClassifier` — a scikit-learn estimator (``fit``, ``predict``,
  ``predict_proba``, ``decision_function``, ``score``, ``get_params`` /
  ``set_params``; works in ``Pipeline``, ``clone`` and ``cross_val_score``)
  whose ``fit`` runs ``dpfeat fit`` on the rows it is given;
- :func:`load_classifier` — a classifier file (safetensors) scored in NumPy,
  with the stored preprocessing applied in dpfeat's order;
- :func:`read_features`, :func:`read_predictions` — dpfeat's Arrow files (or
  any format ``dpfeat convert`` reads) as NumPy arrays, without pyarrow;
- :func:`guarantee`, :func:`ledger` — the privacy statement of a classifier
  and the budget ledger of a dataset, as plain dicts.

The binary is ``$DPFEAT_BIN``, else ``dpfeat`` on ``PATH``, else the
repository's ``bin/dpfeat`` beside this package.
"""

from ._binary import DpfeatError, DpfeatWarning, binary, run
from ._classifier import Classifier, load_classifier
from ._estimator import DPClassifier
from ._transformer import DPTransformer
from ._files import guarantee, ledger, read_features, read_predictions

__all__ = [
    "Classifier",
    "DPClassifier",
    "DPTransformer",
    "DpfeatError",
    "DpfeatWarning",
    "binary",
    "guarantee",
    "ledger",
    "load_classifier",
    "read_features",
    "read_predictions",
    "run",
]
