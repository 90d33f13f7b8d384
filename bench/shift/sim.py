#!/usr/bin/env python3
"""A NumPy model of auto's small-data path, to screen directions before a Go bench (issue 41).

Not dpfeat's code and not a claim about it: a re-implementation of what its releases do, fast
enough to try a direction in minutes, whose figures only rank directions. What it models
(solvers/transform.go, prototypes/prototypes.go, solvers/dpsgd.go):

  - GDP budget μ from (ε, δ); the transform takes `share` of μ², split 1:3 between the noisy
    feature sum (the mean) and the noisy second-moment matrix of the centred, renormalised rows
    (symmetric noise); whitening scales direction i by 1/sqrt(max(λ_i, 0) + ν), ν = 4/sqrt(n·D)
    (the sample ridge); rows are renormalised after it;
  - DPPL-Mean: noisy class sums of the unit rows (noise z per coordinate), cosine distance;
  - DP-SGD: full-batch Adam on the one-vs-all sigmoid loss, clip 1 jointly over classes,
    bias −10, 50 steps, lr 0.2.

Variants (comma-separated; the rest of μ² after the transform goes to the method):
  none                  DPPL-Mean on the unit rows, no transform
  center                DPPL-Mean after centring alone (5% of μ²)
  proto[:SHARE]         DPPL-Mean on the whitening (SHARE of μ², default 0.2): auto at n·μ 100–300
  proto-noise[:SHARE]   the same with the noise ridge 2√D·σ/n
  oracle-mean[:SHARE]   the same with the mean exact (what its noise costs)
  oracle-matrix[:SHARE] the same with the second-moment matrix exact
  sgd[:T]               DP-SGD on the whitening, T steps
  warm:A:ALPHA[:T]      A of the method's μ² to DPPL-Mean, whose unit prototypes start DP-SGD
                        (weights ALPHA·p̂_c, logits −3) on the rest
  avg:A:ALPHA           the same split; the scores are DP-SGD's logits + ALPHA·cos(x, p̂_c)
  pool:K/VARIANT        VARIANT on the features average-pooled into K groups of consecutive
                        coordinates (renormalised), as DPPL-Mean's k_pool does
  orp:K/VARIANT         VARIANT on a seeded orthonormal projection to K dimensions
  oracle-sums[:SHARE]   DPPL-Mean on the whitening as released, its class sums exact
  eb[:BANDS]            DPPL-Mean on the whitening, its noisy class sums shrunk in BANDS groups of
                        principal directions by q/(q + σ²), q = mean(s²) − σ² (8; 0: an isotonic q)
  cap-t[:NU][+lda|+lda1] noise-free ceilings: exact total-covariance whitening (ridge NU, default the
                        sample ridge) and DPPL-Mean; +lda: unrenormalised rows, score z·μ_c − |μ_c|²/2;
                        +lda1: renormalised rows, that score
  cap-w[:NU]            the same with the within-class covariance
  cap-ls                noise-free least squares on the centred unit rows (ridge 1e-3)
  trunc[:K]             DPPL-Mean on the unit rows of the whole whitening, only its top K directions
                        kept, not renormalised (16); otrunc: the same with the matrix exact
  twostage[:A[:R]]      DPPL-Mean on the whitening, its sums' share split: A of it (0.5) releases the class sums
                        whose centred top R right singular vectors (M − 1) span the class means, the rest the sums
                        of the rows projected there and renormalised (screened and not kept, 2026-11-27:
                        SIM_N=6000, ε = 0.1, 2 seeds, 8 shifted cells, mean 0.600 for proto against 0.570, 0.571
                        and 0.543 for A:R = 0.3:9, 0.5:9, 0.5:6; up only on inverted ViT, +1.4: the noisy sums'
                        span is mostly noise)
  bsub[:R[:SHARE]]      the basis's top R directions (32), the centred rows projected on them and
                        renormalised, a private R×R matrix whitened there (TransformSpec.Subspace);
                        obsub: that matrix exact; bsubnw: no whitening. Needs DIR/basis-fmnist-ENC.npz
                        (`dpfeat convert` of bench/out/shift-small/basis-fmnist-ENC.arrow). Screened
                        and not kept: the matrix of the rows not renormalised in the subspace (−3.3
                        points), mixed with the basis's own (−0.3 to −0.7), only its diagonal (−0.2),
                        ridges 0.5–4 times the sample ridge (−0.3 to −0.8), the complement of the
                        subspace added back at a quarter of the energy (−28)
  pb[:R]                DPPL-Mean on the whole whitening (proto), its noisy class sums and the test rows'
                        scores kept within the whitened image of the basis's top R directions (32): free
                        post-processing of proto's one release, where bsub releases within the subspace
  jsb[:R]               the same, the sums' component outside that image shrunk James–Stein fashion across
                        the classes, by max(0, 1 − (D − R)·M·σ²/‖outside‖²_F) (jsb2: the inside too)
  bsubjs:R:K            bsub in R directions, the sums' component outside the whitened image of the top K
                        shrunk so. Screened and not kept (2026-11-28, the synthetic basis, n = 600, ε = 1,
                        the 12 sets, 5 seeds; mean accuracy): proto 0.624, bsub 0.651 (auto's rule), pb 0.625,
                        jsb 0.634, jsb2 0.635, bsubjs:64:32 0.651, bsubjs:96:32 0.645; on the five shifted ViT
                        sets bsubjs:64:32 against bsub +1.8 (inverted), −2.1, −0.7, −0.7, +1.5 (digits)
  bdiag:R:W             bsub, the rest of the basis's D directions added back whitened by their noisy
                        variances (the diagonal, in the R×R matrix's release: their sensitivity together
                        is still 1) and weighted by W. Screened and not kept (the same cells, 3 seeds): mean
                        0.566, 0.598, 0.611, 0.616 at W = 1, 0.5, 0.25, 0.1 (R = 32; 64, W = 0.25: 0.621)
                        against 0.649 for bsub

SIM_BASIS: the bsub, pb, jsb and bdiag variants' basis rows, a pattern with {enc} (default
DIR/basis-fmnist-{enc}.npz, the encoder's public training rows; `dpfeat convert` of the synthetic
basis extract makes, bench/out/synthbasis-ENC.arrow, for that one).

Input: NumPy exports of bench/out/shift-small (its Arrow files through
`dpfeat convert --in X.arrow --out X.npz`), a subsample of n = 600 private rows per seed.

  python3 bench/shift/sim.py EPS VARIANTS [ENCODERS] [SEEDS]
  python3 bench/shift/sim.py 1 proto,warm:0.5:20 resnet,vit 3
"""
import os
import sys

import numpy as np
from scipy.optimize import brentq
from scipy.stats import norm

DIR = "bench/out/shift-small/"
SETS = ["invert", "rot90", "blur", "edge"]  # also "digits", and "id" (in distribution: fmnist-ENC)
DELTA = 1e-5
N = int(os.environ.get("SIM_N", "600"))  # private rows per seed (at most the file's 7,000)


def gdp_mu(eps, delta):
    """The μ of μ-GDP whose (ε, δ) curve passes through (eps, delta)."""
    f = lambda m: norm.cdf(-eps / m + m / 2) - np.exp(eps) * norm.cdf(-eps / m - m / 2) - delta
    return brentq(f, 1e-4, 50)


def unit(x):
    return x / np.maximum(np.linalg.norm(x, axis=1, keepdims=True), 1e-12)


def pava(v):
    """Non-increasing least-squares fit (pool adjacent violators)."""
    vals, sizes = [], []
    for x in v:
        vals.append(x); sizes.append(1)
        while len(vals) > 1 and vals[-2] < vals[-1]:
            w = sizes[-2] + sizes[-1]
            vals[-2] = (vals[-2] * sizes[-2] + vals[-1] * sizes[-1]) / w
            sizes[-2] = w
            vals.pop(); sizes.pop()
    return np.repeat(vals, sizes)


def whiten(x, rng, std_mean, std_matrix, ridge="sample"):
    """Private centring and sample-ridge whitening of unit rows x: (mean, projection)."""
    n, d = x.shape
    s = x.sum(0)
    if std_mean > 0:
        s = s + rng.normal(0, std_mean, d)
    mean = s / n
    y = unit(x - mean)
    g = y.T @ y
    if std_matrix > 0:
        u = np.triu(rng.normal(0, std_matrix, (d, d)))
        g = g + u + np.triu(u, 1).T
    vals, vecs = np.linalg.eigh(g / n)
    nu = (4 / np.sqrt(n * d) if ridge == "sample" else 2 * np.sqrt(d) * std_matrix / n) + 1e-6 * max(vals[-1], 0)
    return mean, (vecs / np.sqrt(np.maximum(vals, 0) + nu)).T


def through(x, mean, proj):
    return unit((x - mean) @ proj.T)


def class_sums(z, y, m, std, rng):
    s = np.zeros((m, z.shape[1]))
    np.add.at(s, y, z)
    return s + rng.normal(0, std, s.shape)


def dpsgd(z, y, m, std, rng, steps=50, lr=0.2, theta=None):
    """Full-batch DP-Adam, one-vs-all sigmoid, clip 1; std is the noise per step."""
    n, d = z.shape
    u = np.hstack([z, np.ones((n, 1))]) / np.sqrt(2)
    onehot = np.eye(m)[y]
    if theta is None:
        theta = np.zeros((m, d + 1))
        theta[:, -1] = -10 * np.sqrt(2)
    m1, m2 = np.zeros_like(theta), np.zeros_like(theta)
    for t in range(1, steps + 1):
        r = 1 / (1 + np.exp(-np.clip(u @ theta.T, -50, 50))) - onehot
        f = np.minimum(1, 1 / np.maximum(np.linalg.norm(r, axis=1) * np.linalg.norm(u, axis=1), 1e-12))
        g = ((r * f[:, None]).T @ u + rng.normal(0, std, theta.shape)) / n
        m1, m2 = 0.9 * m1 + 0.1 * g, 0.999 * m2 + 0.001 * g * g
        theta = theta - lr * (m1 / (1 - 0.9**t)) / (np.sqrt(m2 / (1 - 0.999**t)) + 1e-8)
    return theta


def logits(theta, z):
    return np.hstack([z, np.ones((len(z), 1))]) @ theta.T / np.sqrt(2)


def accuracy(variant, x, y, xt, yt, eps, seed, m=10):
    if "/" in variant:  # PRE/VARIANT: a public projection to K dimensions first
        pre, variant = variant.split("/", 1)
        how, k = pre.split(":")
        k = int(k)
        if how == "pool":  # average-pooled, DPPL-Mean's k_pool (D/K each)
            x, xt = [unit(v.reshape(len(v), k, -1).mean(2)) for v in (x, xt)]
        else:  # orthonormal rows (QR of a seeded Gaussian): no row grows, none renormalised
            q, _ = np.linalg.qr(np.random.default_rng(12345).normal(size=(x.shape[1], k)))
            x, xt = x @ q, unit(xt) @ q
    parts = variant.split(":")
    kind = parts[0].split("+")[0]
    rng = np.random.default_rng(seed)
    zstar = 1 / gdp_mu(eps, DELTA)
    if kind == "none":
        return np.mean(np.argmax(xt @ unit(class_sums(x, y, m, zstar, rng)).T, 1) == yt)
    if kind == "center":
        mean = (x.sum(0) + rng.normal(0, zstar / np.sqrt(0.05), x.shape[1])) / len(x)
        s = class_sums(unit(x - mean), y, m, zstar / np.sqrt(0.95), rng)
        return np.mean(np.argmax(unit(xt - mean) @ unit(s).T, 1) == yt)
    if kind in ("cap-t", "cap-w", "cap-ls"):  # noise-free ceilings: total / within-class whitening, least squares
        n, d = x.shape
        mean = x.mean(0)
        y0 = unit(x - mean)
        if kind == "cap-ls":
            a = np.hstack([y0, np.ones((n, 1))])
            w = np.linalg.solve(a.T @ a + 1e-3 * np.eye(d + 1), a.T @ np.eye(m)[y])
            return np.mean(np.argmax(np.hstack([unit(xt - mean), np.ones((len(xt), 1))]) @ w, 1) == yt)
        if kind == "cap-w":
            cm = np.zeros((m, d))
            np.add.at(cm, y, y0)
            cm /= np.maximum(np.bincount(y, minlength=m), 1)[:, None]
            r = y0 - cm[y]
            g = r.T @ r / n
        else:
            g = y0.T @ y0 / n
        vals, vecs = np.linalg.eigh(g)
        nu = float(parts[1].split("+")[0]) if len(parts) > 1 else 4 / np.sqrt(n * d)
        proj = (vecs / np.sqrt(np.maximum(vals, 0) + nu)).T
        z, zt = through(x, mean, proj), through(xt, mean, proj)
        if variant.endswith("+lda"):  # no renormalisation, LDA score z·μ_c − |μ_c|²/2
            z, zt = (x - mean) @ proj.T, (xt - mean) @ proj.T
            mu = class_sums(z, y, m, 0, rng) / np.bincount(y, minlength=m)[:, None]
            return np.mean(np.argmax(zt @ mu.T - 0.5 * (mu**2).sum(1), 1) == yt)
        if variant.endswith("+lda1"):  # renormalised rows, LDA score
            mu = class_sums(z, y, m, 0, rng) / np.bincount(y, minlength=m)[:, None]
            return np.mean(np.argmax(zt @ mu.T - 0.5 * (mu**2).sum(1), 1) == yt)
        return np.mean(np.argmax(zt @ unit(class_sums(z, y, m, 0, rng)).T, 1) == yt)
    if kind == "twostage":  # the sums' share split: A of it finds the class means' span, the rest sums in it
        a = float(parts[1]) if len(parts) > 1 else 0.5
        r = int(parts[2]) if len(parts) > 2 else m - 1
        mean, proj = whiten(x, rng, zstar / np.sqrt(0.05), zstar / np.sqrt(0.15))
        z, zt = through(x, mean, proj), through(xt, mean, proj)
        s1 = class_sums(z, y, m, zstar / np.sqrt(0.8 * a), rng)
        span = np.linalg.svd(s1 - s1.mean(0), full_matrices=False)[2][:r].T
        s2 = class_sums(unit(z @ span), y, m, zstar / np.sqrt(0.8 * (1 - a)), rng)
        return np.mean(np.argmax(unit(zt @ span) @ unit(s2).T, 1) == yt)
    if kind in ("bsub", "obsub", "bsubnw"):  # the basis's top R directions, then a private whitening in them
        r = int(parts[1]) if len(parts) > 1 else 32
        std_mean, std_matrix, rest = stds(zstar, float(parts[2]) if len(parts) > 2 else 0.2)
        u, ut, _ = subspace(x, xt, rng, r, std_mean, {"bsub": std_matrix, "obsub": 0}.get(kind))
        return np.mean(np.argmax(ut @ unit(class_sums(u, y, m, rest, rng)).T, 1) == yt)
    if kind == "bdiag":
        return bdiag(parts, x, y, xt, yt, rng, zstar, m)
    if kind in ("pb", "jsb", "jsb2", "bsubjs"):
        return shrunk(kind, parts, x, y, xt, yt, rng, zstar, m)
    ridge = "sample"
    if kind == "proto-noise":  # the noise ridge 2√D·σ/n instead
        kind, ridge = "proto", "noise"
    share = float(parts[1]) if kind in ("proto", "oracle-mean", "oracle-matrix", "oracle-sums") and len(parts) > 1 else 0.2
    std_mean, std_matrix = zstar / np.sqrt(share / 4), zstar / np.sqrt(share * 3 / 4)
    rest = zstar / np.sqrt(1 - share)  # the method's noise multiplier for one release
    mean, proj = whiten(x, rng, 0 if kind == "oracle-mean" else std_mean, 0 if kind in ("oracle-matrix", "otrunc") else std_matrix, ridge)
    z, zt = through(x, mean, proj), through(xt, mean, proj)  # x, xt: unit rows, or their projections
    if kind in ("proto", "oracle-mean", "oracle-matrix"):
        pred = np.argmax(zt @ unit(class_sums(z, y, m, rest, rng)).T, 1)
    elif kind in ("trunc", "otrunc"):  # unit rows of the whole whitening, only the top K directions kept (no renormalisation)
        k = int(parts[1]) if len(parts) > 1 else 16
        z, zt = z[:, -k:], zt[:, -k:]
        pred = np.argmax(zt @ unit(class_sums(z, y, m, rest, rng)).T, 1)
    elif kind == "oracle-sums":  # the whitening as released, the class sums exact
        pred = np.argmax(zt @ unit(class_sums(z, y, m, 0, rng)).T, 1)
    elif kind == "eb":  # class sums shrunk per whitened direction by its estimated signal share
        bands = int(parts[1]) if len(parts) > 1 else 8
        s = class_sums(z, y, m, rest, rng)
        q = (s**2).mean(0) - rest**2  # per direction: signal second moment across classes
        d = s.shape[1]
        qs = np.zeros(d)
        if bands == 0:  # isotonic: the signal share does not grow as the eigenvalue falls
            qs = np.maximum(pava(q[::-1])[::-1], 0)  # coordinates here ascend in eigenvalue
        else:
            for b in np.array_split(np.arange(d), bands):
                qs[b] = max(q[b].mean(), 0)
        pred = np.argmax(zt @ unit(s * (qs / (qs + rest**2))).T, 1)
    elif kind == "sgd":
        steps = int(parts[1]) if len(parts) > 1 else 50
        pred = np.argmax(logits(dpsgd(z, y, m, rest * np.sqrt(steps), rng, steps), zt), 1)
    elif kind in ("warm", "avg"):
        a, alpha = float(parts[1]), float(parts[2])
        steps = int(parts[3]) if len(parts) > 3 else 50
        p = unit(class_sums(z, y, m, rest / np.sqrt(a), rng))
        std = rest / np.sqrt(1 - a) * np.sqrt(steps)
        if kind == "warm":
            theta = np.hstack([alpha * p * np.sqrt(2), np.full((m, 1), -3 * np.sqrt(2))])
            pred = np.argmax(logits(dpsgd(z, y, m, std, rng, steps, theta=theta), zt), 1)
        else:
            pred = np.argmax(logits(dpsgd(z, y, m, std, rng, steps), zt) + alpha * unit(zt) @ p.T, 1)
    else:
        sys.exit(f"sim.py: unknown variant {variant!r}")
    return np.mean(pred == yt)


BASIS = {}  # feature dimension → the basis's principal directions (rows), of the encoder being read


def stds(zstar, share=0.2):
    """The noise stds of the transform's mean and matrix (share of μ², split 1:3) and the method's."""
    return zstar / np.sqrt(share / 4), zstar / np.sqrt(share * 3 / 4), zstar / np.sqrt(1 - share)


def subspace(x, xt, rng, r, std_mean, std_matrix):
    """bsub's transform: the rows centred on their noisy mean, projected on the basis's top R
    directions, renormalised, then whitened with a noisy R×R matrix (std_matrix 0: exact; None:
    not whitened) and renormalised: (rows, test rows, the whitening's projection)."""
    n, d = x.shape
    vr = BASIS[d][:r]
    mean = (x.sum(0) + rng.normal(0, std_mean, d)) / n
    u, ut = unit(unit(x - mean) @ vr.T), unit(unit(xt - mean) @ vr.T)
    if std_matrix is None:
        return u, ut, np.eye(r)
    g = u.T @ u
    if std_matrix > 0:
        e = np.triu(rng.normal(0, std_matrix, (r, r)))
        g = g + e + np.triu(e, 1).T
    vals, vecs = np.linalg.eigh(g / n)
    proj = (vecs / np.sqrt(np.maximum(vals, 0) + 4 / np.sqrt(n * r) + 1e-6 * max(vals[-1], 0))).T
    return unit(u @ proj.T), unit(ut @ proj.T), proj


def shrunk(kind, parts, x, y, xt, yt, rng, zstar, m):
    """pb, jsb, jsb2 and bsubjs: DPPL-Mean's noisy class sums shrunk outside the whitened image of
    the basis's top directions (post-processing of the sums' one release)."""
    std_mean, std_matrix, rest = stds(zstar)
    if kind == "bsubjs":  # bsub's releases in R directions; the top K inside them
        r, k = int(parts[1]), int(parts[2])
        z, zt, proj = subspace(x, xt, rng, r, std_mean, std_matrix)
        top = proj @ np.eye(r)[:k].T
    else:  # proto's whole whitening; the basis's top K directions through it
        k = int(parts[1]) if len(parts) > 1 else 32
        mean, proj = whiten(x, rng, std_mean, std_matrix)
        z, zt = through(x, mean, proj), through(xt, mean, proj)
        top = proj @ BASIS[x.shape[1]][:k].T
    s = class_sums(z, y, m, rest, rng)
    q, _ = np.linalg.qr(top)
    inside = (s @ q) @ q.T
    outside = s - inside
    dz = z.shape[1]
    beta = 0.0 if kind == "pb" else max(0.0, 1 - (dz - k) * m * rest**2 / (outside**2).sum())
    alpha = max(0.0, 1 - k * m * rest**2 / (inside**2).sum()) if kind == "jsb2" else 1.0
    return np.mean(np.argmax(zt @ unit(alpha * inside + beta * outside).T, 1) == yt)


def bdiag(parts, x, y, xt, yt, rng, zstar, m):
    """bsub in the basis's top R directions, the other D − R added back, whitened by their noisy
    variances (released with the R×R matrix) and weighted by W."""
    r, w = int(parts[1]), float(parts[2])
    std_mean, std_matrix, rest = stds(zstar)
    v = BASIS[x.shape[1]]
    n, d = x.shape
    mean = (x.sum(0) + rng.normal(0, std_mean, d)) / n
    c, ct = unit(x - mean) @ v.T, unit(xt - mean) @ v.T  # every basis coordinate, of unit rows
    e = np.triu(rng.normal(0, std_matrix, (r, r)))
    vals, vecs = np.linalg.eigh((c[:, :r].T @ c[:, :r] + e + np.triu(e, 1).T) / n)
    nu = 4 / np.sqrt(n * d) + 1e-6 * max(vals[-1], 0)
    proj = (vecs / np.sqrt(np.maximum(vals, 0) + nu)).T
    var = ((c[:, r:] ** 2).sum(0) + rng.normal(0, std_matrix, d - r)) / n
    scale = w / np.sqrt(np.maximum(var, 0) + nu)
    z = unit(np.hstack([c[:, :r] @ proj.T, c[:, r:] * scale]))
    zt = unit(np.hstack([ct[:, :r] @ proj.T, ct[:, r:] * scale]))
    return np.mean(np.argmax(zt @ unit(class_sums(z, y, m, rest, rng)).T, 1) == yt)


def load_basis(enc):
    """The principal directions of 10,000 of the basis's rows, centred (bsub, pb, jsb variants)."""
    path = os.environ.get("SIM_BASIS", DIR + "basis-fmnist-{enc}.npz").format(enc=enc)
    b = unit(np.load(path)["X"][:10000].astype(np.float64))
    _, _, vt = np.linalg.svd(b - b.mean(0), full_matrices=False)
    BASIS[b.shape[1]] = vt


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    eps, variants = float(sys.argv[1]), sys.argv[2].split(",")
    encoders = sys.argv[3].split(",") if len(sys.argv) > 3 else ["resnet", "vit"]
    seeds = int(sys.argv[4]) if len(sys.argv) > 4 else 3
    sets = sys.argv[5].split(",") if len(sys.argv) > 5 else SETS
    print(f"ε = {eps}, n = {N}, medians of {seeds} seeds\n")
    print("| features | " + " | ".join(variants) + " |")
    print("|---" * (len(variants) + 1) + "|")
    cells = []
    for enc in encoders:
        if any(v.split(":")[0] in ("bsub", "obsub", "bsubnw", "pb", "jsb", "jsb2", "bsubjs", "bdiag") for v in variants):
            load_basis(enc)
        for name in sets:
            stem = f"{DIR}fmnist-{enc}" if name == "id" else f"{DIR}{name}-fmnist-{enc}"
            a, b = np.load(f"{stem}-private.npz"), np.load(f"{stem}-test.npz")
            acc = np.zeros((seeds, len(variants)))
            for seed in range(seeds):
                idx = np.random.default_rng(1000 + seed).choice(len(a["X"]), min(N, len(a["X"])), replace=False)
                x, y = unit(a["X"][idx].astype(np.float64)), a["y"][idx]
                for j, v in enumerate(variants):
                    acc[seed, j] = accuracy(v, x, y, unit(b["X"].astype(np.float64)), b["y"], eps, seed)
            cells.append(np.median(acc, 0))
            print(f"| {name}-{enc} | " + " | ".join(f"{v:.3f}" for v in cells[-1]) + " |", flush=True)
    print("| mean | " + " | ".join(f"{v:.3f}" for v in np.mean(cells, 0)) + " |")


if __name__ == "__main__":
    main()
