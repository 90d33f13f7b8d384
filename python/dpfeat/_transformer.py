"""A scikit-learn transformer over ``dpfeat extract``: image paths in,
features out, so that a ``Pipeline`` goes from images to a private
classifier."""

import os
import shutil
import tempfile

import numpy as np

from ._binary import run
from ._estimator import _Base
from ._files import read_features

try:
    from sklearn.base import TransformerMixin as _TMixin
except ImportError:  # pragma: no cover
    class _TMixin:
        def fit_transform(self, X, y=None, **fit_params):
            return self.fit(X, y, **fit_params).transform(X)


class DPTransformer(_TMixin, _Base):
    """``dpfeat extract`` as a transformer: a sequence of image file paths
    in, one feature row per image out (rows × the encoder's dimension), in
    the order given.

    Parameters
    ----------
    model : str
        The ONNX encoder; its manifest (``model.json`` beside it, or
        ``manifest``) says how images are preprocessed.
    manifest : str or None
        The encoder's manifest, when it is not beside the model.
    device : str
        ``cpu``, ``cuda``, ``cuda:N`` or ``auto`` (``--device``).
    batch : int
        Images per encoder call (``--encoder-batch``).

    Extraction releases nothing: the features are as private as the
    images, and only the classifier fit on them (``DPClassifier``) is a
    private release. ``fit`` learns nothing; it checks the model and sets
    ``n_features_out_``.
    """

    def __init__(self, model, manifest=None, device="cpu", batch=64):
        self.model = model
        self.manifest = manifest
        self.device = device
        self.batch = batch

    def fit(self, X=None, y=None):
        if not os.path.exists(str(self.model)):
            raise ValueError("model %s: no such file" % self.model)
        self.n_features_out_ = None
        return self

    def transform(self, X):
        paths = [os.fspath(p) for p in (X.ravel() if isinstance(X, np.ndarray) else X)]
        if not paths:
            raise ValueError("no image paths to extract features from")
        with tempfile.TemporaryDirectory(prefix="dpfeat-py-") as tmp:
            folder = os.path.join(tmp, "images")
            os.mkdir(folder)
            for i, p in enumerate(paths):
                if not os.path.isfile(p):
                    raise ValueError("image %d: %s is not a file" % (i, p))
                dst = os.path.join(folder, "%08d%s" % (i, os.path.splitext(p)[1].lower()))
                try:
                    os.link(p, dst)  # the same bytes, no copy (another file system: a copy)
                except OSError:
                    shutil.copyfile(p, dst)
            out = os.path.join(tmp, "features.arrow")
            args = ["extract", "--encoder", str(self.model), "--data", folder, "--out", out, "--quiet", "--device", str(self.device),
                    "--encoder-batch", str(int(self.batch)), "--synthetic-basis", "0"]
            if self.manifest is not None:
                args += ["--manifest", str(self.manifest)]
            run(*args, names={folder + os.sep: "", folder: "the images", out: "the features"})
            f = read_features(out)
        order = np.argsort([int(os.path.splitext(os.path.basename(i))[0]) for i in f["ids"]])
        X = np.asarray(f["X"], dtype=np.float32)[order]
        if len(X) != len(paths):
            raise ValueError("%d of %d images were encoded" % (len(X), len(paths)))
        self.n_features_out_ = X.shape[1]
        return X
