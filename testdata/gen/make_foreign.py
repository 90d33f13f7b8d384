"""Small NumPy files that features/foreign_test.go reads: what numpy itself
writes (compressed archives, Fortran order, float64, big-endian, str labels),
so that the .npy/.npz reader is checked against the real writer.

Run: /usr/bin/python3 testdata/gen/make_foreign.py (Debian python3-numpy)."""
import os

import numpy as np

out = os.path.join(os.path.dirname(__file__), "..", "foreign")
os.makedirs(out, exist_ok=True)
# Six rows, three features: the values are exact in float32.
X = np.array([[0.5, -1.25, 2.0], [1.0, 0.0, -0.5], [0.25, 0.75, 1.5],
              [-2.0, 1.0, 0.125], [3.0, -0.25, 0.5], [0.0, 2.5, -1.0]])
y = np.array([2, 0, 1, 0, 2, 1])
names = np.array(["bird", "cat", "dog"])
np.savez_compressed(os.path.join(out, "compressed.npz"), X=X, y=names[y], ids=np.array([f"img{i}" for i in range(6)]))
np.savez(os.path.join(out, "classes.npz"), features=X.astype(np.float32), labels=y.astype(np.int64), classes=names)
np.save(os.path.join(out, "fortran-f8.npy"), np.asfortranarray(X))
np.save(os.path.join(out, "big-endian-f4.npy"), X.astype(">f4"))
np.save(os.path.join(out, "labels-i2.npy"), y.astype(np.int16))
np.save(os.path.join(out, "object.npy"), np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
