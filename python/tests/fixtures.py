"""A folder holding what the README's and docs/' commands start from:
images by class (PNG), the demo encoder as enc.onnx, feature files,
embeddings, a ledger folder, all small."""

import os
import shutil
import struct
import zlib

import numpy as np

import dpfeat

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))


def png(path, pixels):
    """Writes a grey 8-bit PNG (no imaging library needed)."""
    h, w = pixels.shape
    raw = b"".join(b"\x00" + bytes(row) for row in pixels.astype(np.uint8))

    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    with open(path, "wb") as f:
        f.write(b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 0, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(raw)) + chunk(b"IEND", b""))


def shell_env(folder):
    """The environment the documented commands run in: dpfeat on PATH, the
    Python package importable, the ledger inside the folder."""
    return dict(os.environ, PATH=os.path.dirname(dpfeat.binary()) + os.pathsep + os.environ["PATH"],
                PYTHONPATH=os.path.join(ROOT, "python"), DPFEAT_BIN=dpfeat.binary(),
                DPFEAT_LEDGER=os.path.join(folder, "ledger"), MPLBACKEND="Agg")


FMNIST = "/usr/share/datasets/fashion-mnist"


def fixture(folder, features=False):
    """Fills folder. With features, also feature files of Fashion-MNIST through
    the demo encoder (enc.onnx): private.arrow and train.arrow (2000 rows of
    the private half), public.arrow (1000 of the public half), test.arrow
    (1000 test rows)."""
    rng = np.random.default_rng(0)
    names = np.array(["cat", "dog", "emu"])
    y = rng.integers(0, 3, 300)
    X = (rng.normal(size=(3, 16))[y] * 2 + rng.normal(size=(300, 16))).astype(np.float32)
    np.savez(os.path.join(folder, "embeddings.npz"), X=X[:240], y=names[y[:240]])
    os.symlink(os.path.join(ROOT, "models"), os.path.join(folder, "models"))
    for ext in (".onnx", ".json"):
        shutil.copy(os.path.join(ROOT, "models", "demo", "fmnist-cnn" + ext), os.path.join(folder, "enc" + ext))
    for sub, per in (("photos", 8), ("photos-test", 4), ("new-photos", 2)):
        for c, name in enumerate(["boot", "shirt"]):
            os.makedirs(os.path.join(folder, sub, name))
            for i in range(per):
                img = rng.integers(0, 60, (28, 28)) + (120 if c else 0) * (np.arange(28)[:, None] < 14)
                png(os.path.join(folder, sub, name, "%d.png" % i), img)

    os.symlink(os.path.join(ROOT, "testdata"), os.path.join(folder, "testdata"))
    if features:
        enc = os.path.join(folder, "enc.onnx")
        for name, args in (("private", ["--split", "train", "--offset", "30000", "--limit", "2000"]),
                           ("public", ["--split", "train", "--limit", "1000"]),
                           ("test", ["--split", "test", "--limit", "1000"])):
            dpfeat.run("extract", "--encoder", enc, "--data", FMNIST, "--out", os.path.join(folder, name + ".arrow"), "--quiet", *args)
        shutil.copy(os.path.join(folder, "private.arrow"), os.path.join(folder, "train.arrow"))
