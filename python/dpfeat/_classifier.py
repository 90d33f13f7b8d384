"""Classifier files (safetensors) scored in NumPy, as dpfeat scores them."""

import json
import struct

import numpy as np

CLIP_MARGIN = 1 - 1e-6  # preprocessing.ClipMargin

_DTYPES = {"F32": np.float32, "F64": np.float64, "I32": np.int32, "I64": np.int64}


def _read_safetensors(path):
    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    body = data[8 + n:]
    meta = header.pop("__metadata__", {})
    tensors = {}
    for name, t in header.items():
        start, end = t["data_offsets"]
        arr = np.frombuffer(body[start:end], dtype=_DTYPES[t["dtype"]])
        tensors[name] = arr.reshape(t["shape"]).astype(np.float64)
    return tensors, meta


def _unit(x):
    norms = np.linalg.norm(x, axis=1, keepdims=True)
    return np.divide(x, norms, out=np.zeros_like(x), where=norms > 0)


class Classifier:
    """A dpfeat classifier: ``classes``, ``method``, ``kind``, ``dim``,
    ``preprocessing`` and ``metadata`` (the file's header), ``guarantee``
    (the privacy statement as a dict) and ``tensors``."""

    def __init__(self, tensors, metadata):
        if metadata.get("format") != "dpfeat.classifier.v1":
            raise ValueError("not a dpfeat classifier (format %r)" % metadata.get("format"))
        self.tensors = tensors
        self.metadata = metadata
        self.classes = json.loads(metadata["classes"])
        self.kind = metadata.get("kind", "linear")
        self.method = metadata.get("method", "")
        self.dim = int(metadata["dim"])
        self.preprocessing = json.loads(metadata.get("preprocessing") or "{}")
        self.guarantee = json.loads(metadata.get("privacy") or "{}")
        self.per_class = int(metadata.get("per_class") or 1)
        self.distance = metadata.get("distance", "cosine")

    def preprocess(self, X):
        """The stored preprocessing, in dpfeat's order (README, classifier
        file): transform, normalize, pool, scale, center, clip."""
        x = np.array(X, dtype=np.float64, copy=True)
        if x.ndim != 2 or x.shape[1] != self.dim:
            raise ValueError("expected rows of %d features, got shape %s" % (self.dim, x.shape))
        bad = np.argwhere(~np.isfinite(x))
        if len(bad):
            # As dpfeat predict refuses it: a non-finite row has no score.
            i, j = bad[0]
            what = "NaN" if np.isnan(x[i, j]) else ("+Inf" if x[i, j] > 0 else "-Inf")
            raise ValueError("row %d: feature %d is %s; expected finite values" % (i, j, what))
        t = self.tensors
        p = self.preprocessing
        if p.get("transform"):
            x = _unit(x)
            if "transform.mean" in t:
                x = x - t["transform.mean"]
            if "transform.scale" in t:
                x = x * t["transform.scale"]
            if "transform.projection" in t:
                x = x @ t["transform.projection"].T
        if p.get("normalize"):
            x = _unit(x)
        pool = int(p.get("pool") or 0)
        if pool > 1:
            d = x.shape[1]
            groups = [x[:, g:min(g + pool, d)].mean(axis=1) for g in range(0, d, pool)]
            x = np.stack(groups, axis=1)
        if p.get("scale"):
            x = x * float(p["scale"])
        if "center" in t:
            x = x - t["center"]
        clip = float(p.get("clip") or 0)
        if clip > 0:
            lim = clip * CLIP_MARGIN
            norms = np.linalg.norm(x, axis=1, keepdims=True)
            x = x * np.minimum(1.0, np.divide(lim, norms, out=np.ones_like(norms), where=norms > lim))
        return x

    def decision_function(self, X):
        """Class scores, rows × classes (float64): linear W·x + b; for
        prototypes minus the mean distance to the class's prototypes."""
        x = self.preprocess(X)
        t = self.tensors
        if self.kind == "prototypes":
            protos = t["prototypes"].reshape(len(self.classes), self.per_class, -1)
            scores = np.zeros((x.shape[0], len(self.classes)))
            for j in range(len(self.classes)):
                total = np.zeros(x.shape[0])
                for p in protos[j]:
                    if self.distance == "cosine":
                        xn = np.linalg.norm(x, axis=1)
                        pn = np.linalg.norm(p)
                        dot = x @ p
                        ok = (xn > 0) & (pn > 0)
                        total += np.where(ok, 1 - dot / np.where(ok, xn * pn, 1), 1.0)
                    else:
                        total += np.linalg.norm(x - p, axis=1)
                scores[:, j] = -total / self.per_class
            return scores
        return x @ t["weight"].T + t["bias"]

    def predict_index(self, X):
        """The predicted class index of each row (the first highest score)."""
        return np.argmax(self.decision_function(X), axis=1)

    def predict(self, X):
        """The predicted class name of each row."""
        return np.asarray(self.classes, dtype=object)[self.predict_index(X)]


def load_classifier(path):
    """Reads a dpfeat classifier file (safetensors) into a :class:`Classifier`."""
    tensors, meta = _read_safetensors(path)
    return Classifier(tensors, meta)
