#!/usr/bin/env python3
"""Shifted image sets for bench/shift.sh (issue 18): Fashion-MNIST with
inverted pixels, rotated 90°, blurred, or edge-filtered, and scikit-learn's
8×8 handwritten digits upscaled to 28×28 — images unlike those the shared
encoders were trained on. Writes IDX files (train/t10k, gzip) under OUT/NAME/,
so that `dpfeat extract --data OUT/NAME --split train|test` reads them.

usage: make.py FASHION_MNIST_DIR OUT_DIR [holdout]

holdout: instead, two shifts no rule of auto was measured on, to check a rule
on images it was not derived from: "noise" (Gaussian pixel noise, std 64,
a fixed seed) and "corner" (the image at half size in the top-left corner of
a black canvas).
"""
import gzip
import os
import struct
import sys

import numpy as np


def read_idx(path):
    with gzip.open(path, "rb") as f:
        data = f.read()
    magic, = struct.unpack(">I", data[:4])
    dims = magic & 0xFF
    shape = struct.unpack(">" + "I" * dims, data[4:4 + 4 * dims])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * dims).reshape(shape)


def write_idx(path, arr):
    arr = np.ascontiguousarray(arr, dtype=np.uint8)
    head = struct.pack(">I", 0x0800 | arr.ndim) + struct.pack(">" + "I" * arr.ndim, *arr.shape)
    tmp = path + ".tmp"
    with gzip.open(tmp, "wb") as f:
        f.write(head + arr.tobytes())
    os.replace(tmp, path)


def conv2(img, k):
    """'same' 2-D convolution of a stack of images [N,H,W] with kernel k."""
    n, h, w = img.shape
    kh, kw = k.shape
    p = np.pad(img, ((0, 0), (kh // 2, kh // 2), (kw // 2, kw // 2)), mode="edge")
    out = np.zeros((n, h, w), dtype=np.float64)
    for i in range(kh):
        for j in range(kw):
            out += k[i, j] * p[:, i:i + h, j:j + w]
    return out


def blur(img):
    x = np.arange(-3, 4)
    g = np.exp(-x ** 2 / (2 * 1.5 ** 2))
    g /= g.sum()
    return np.clip(conv2(img.astype(np.float64), np.outer(g, g)), 0, 255)


def edges(img):
    sx = np.array([[1, 0, -1], [2, 0, -2], [1, 0, -1]], dtype=np.float64)
    f = img.astype(np.float64)
    m = np.hypot(conv2(f, sx), conv2(f, sx.T))
    return np.clip(m / 4, 0, 255)


def upscale(img, size):
    """Bilinear resize [N,h,w] → [N,size,size] (half-pixel centres)."""
    n, h, w = img.shape
    def axis(src, dst):
        c = (np.arange(dst) + 0.5) * src / dst - 0.5
        c = np.clip(c, 0, src - 1)
        lo = np.floor(c).astype(int)
        hi = np.minimum(lo + 1, src - 1)
        return lo, hi, c - lo
    ylo, yhi, fy = axis(h, size)
    xlo, xhi, fx = axis(w, size)
    a = img[:, ylo][:, :, xlo] * (1 - fx) + img[:, ylo][:, :, xhi] * fx
    b = img[:, yhi][:, :, xlo] * (1 - fx) + img[:, yhi][:, :, xhi] * fx
    return a * (1 - fy[:, None]) + b * fy[:, None]


def main():
    src, out = sys.argv[1], sys.argv[2]
    parts = {}
    for split in ("train", "t10k"):
        parts[split] = (read_idx(f"{src}/{split}-images-idx3-ubyte.gz"), read_idx(f"{src}/{split}-labels-idx1-ubyte.gz"))
    if sys.argv[3:] == ["holdout"]:
        rng = np.random.RandomState(1)

        def corner(x):
            c = np.zeros(x.shape, dtype=np.float64)
            c[:, :14, :14] = upscale(x.astype(np.float64), 14)
            return np.clip(c, 0, 255)
        for name, f in (("noise", lambda x: np.clip(x + rng.normal(0, 64, x.shape), 0, 255)), ("corner", corner)):
            d = os.path.join(out, name)
            os.makedirs(d, exist_ok=True)
            for split, (x, y) in parts.items():
                write_idx(f"{d}/{split}-images-idx3-ubyte.gz", np.rint(f(x)))
                write_idx(f"{d}/{split}-labels-idx1-ubyte.gz", y)
        return
    shifts = {
        "invert": lambda x: 255 - x,
        "rot90": lambda x: np.rot90(x, 1, axes=(1, 2)),
        "blur": blur,
        "edge": edges,
    }
    for name, f in shifts.items():
        d = os.path.join(out, name)
        os.makedirs(d, exist_ok=True)
        for split, (x, y) in parts.items():
            write_idx(f"{d}/{split}-images-idx3-ubyte.gz", np.rint(f(x)))
            write_idx(f"{d}/{split}-labels-idx1-ubyte.gz", y)
    # scikit-learn's digits: 1,797 images of 8×8 (0–16), upscaled; a fixed
    # shuffle (seed 0), the first 1,200 rows train, the rest test.
    from sklearn.datasets import load_digits
    dg = load_digits()
    order = np.random.RandomState(0).permutation(len(dg.target))
    x = upscale(dg.images[order].astype(np.float64) * (255 / 16), 28)
    y = dg.target[order]
    d = os.path.join(out, "digits")
    os.makedirs(d, exist_ok=True)
    for split, sl in (("train", slice(0, 1200)), ("t10k", slice(1200, None))):
        write_idx(f"{d}/{split}-images-idx3-ubyte.gz", np.rint(x[sl]))
        write_idx(f"{d}/{split}-labels-idx1-ubyte.gz", y[sl])


if __name__ == "__main__":
    main()
