#!/usr/bin/python3
"""NumPy versions of dpls, dpfc (T = 10), dpnewton (T = 1) and dpplmean, for
bench/numpy.sh: the same algorithms and default hyperparameters as dpfeat,
written the way a NumPy user would (float32 features, float64 statistics,
numpy.linalg on Debian's OpenBLAS). Noise is drawn with numpy's generator;
the noise multiplier is dpfeat's for (ε = 1, δ = 1e-5), passed in.

    /usr/bin/python3 bench/numpy/solvers.py X.f32 Y.i32 N D M METHOD Z [psd=0]

psd=0 leaves out DP-LS's PSD projections (dpfeat's --param psd=0).
Prints the wall seconds of the fit, data loading included.
"""
import sys
import time

import numpy as np

t0 = time.perf_counter()
xf, yf, n, d, m, method, z = sys.argv[1:8]
project = "psd=0" not in sys.argv[8:]
n, d, m, z = int(n), int(d), int(m), float(z)
X = np.fromfile(xf, dtype="<f4").reshape(n, d)
Y = np.fromfile(yf, dtype="<i4")
rng = np.random.default_rng(0)
X = X / np.linalg.norm(X, axis=1, keepdims=True)  # unit norm, as dpfeat


def sym_noise(k, std):
    # the papers' i.i.d. k×k noise, symmetrised: std on the diagonal, std/√2 off it
    e = rng.standard_normal((k, k)) * std
    return (e + e.T) / 2


def psd(a):
    w, v = np.linalg.eigh(a)
    return (v * np.maximum(w, 0)) @ v.T


if method == "dpls":
    alpha = 1 / m
    # float32 products summed into float64, as dpfeat's statistics
    G = (X.T @ X).astype(np.float64) + sym_noise(d, z)
    if project:
        G = psd(G)
    lam = 2 * np.sqrt(d) * z * (1 + alpha) + 1e-4 * (n / m + alpha * n) / d
    W = np.empty((m, d))
    for j in range(m):
        Xj = X[Y == j]
        A = (Xj.T @ Xj).astype(np.float64) + sym_noise(d, z)
        if project:
            A = psd(A)
        b = Xj.sum(0, dtype=np.float64) + rng.standard_normal(d) * z
        W[j] = np.linalg.solve(A + alpha * G + lam * np.eye(d), b)
elif method == "dpplmean":
    S = np.zeros((m, d))
    np.add.at(S, Y, X)
    S += rng.standard_normal((m, d)) * z
elif method in ("dpfc", "dpnewton"):
    U = np.hstack([X, np.ones((n, 1), np.float32)]) / np.float32(np.sqrt(2))
    Ud = U.astype(np.float64)
    D = d + 1
    Yh = np.zeros((n, m), np.float32)
    Yh[np.arange(n), Y] = 1
    sig = lambda t: 1 / (1 + np.exp(-t))
    if method == "dpfc":
        # float32 Gram and products (SGEMM), float64 for the small solves
        cov = psd(((U.T @ U).astype(np.float64) + sym_noise(D, z)) / n)
        cov += (2 * np.sqrt(D) * z / n + 1e-4 / D) * np.eye(D)
        L = np.linalg.cholesky(cov)
        theta = np.zeros((m, D))
        theta[:, -1] = -10 * np.sqrt(2)
        unorm = np.linalg.norm(U, axis=1)
        for t in range(10):
            R = sig(U @ theta.T.astype(np.float32)) - Yh
            s = np.minimum(1, 1 / (np.linalg.norm(R, axis=1) * unorm))
            g = (((R * s[:, None]).T @ U).astype(np.float64) + rng.standard_normal((m, D)) * z) / n
            step = np.linalg.solve(L.T, np.linalg.solve(L, g.T)).T
            theta -= 8 * step
    else:
        sm = np.sqrt(m)
        lam = 2 * np.sqrt(D) * z * sm * 0.25 / n + 1e-4 * 0.25 / D
        theta = np.zeros((m, D))
        P = sig(Ud @ theta.T)
        for j in range(m):
            r = P[:, j] - Yh[:, j]
            g = (Ud.T @ r + rng.standard_normal(D) * z * sm) / n
            w = P[:, j] * (1 - P[:, j])
            H = (Ud * w[:, None]).T @ Ud + sym_noise(D, z * sm * 0.25)
            H = psd(H / n) + lam * np.eye(D)
            theta[j] -= np.linalg.solve(H, g)
print(f"{time.perf_counter() - t0:.4f}")
