"""Float32 rounding error of Winograd's F(m x m, 5 x 5) on data shaped like the MNIST CNN's
second layer (14 x 14 x 32 -> 64, ReLU inputs, filters of std 0.1), against a float64
direct sum, for several sets of interpolation points: which tile size the kernels could
use before the CNN's losses drift from TensorFlow's. The transforms are built from the
points (modified Toom-Cook, with the point at infinity) and checked in 1-D first; the
filter transform runs in float64, everything else in float32, as in winograd.rs.

Usage: .venv/bin/python scripts/bench/winograd_error.py   (numpy only)
"""
import numpy as np
from fractions import Fraction as Fr
from itertools import product

def polymul(a, b):
    out = [Fr(0)] * (len(a) + len(b) - 1)
    for i, x in enumerate(a):
        for j, y in enumerate(b):
            out[i + j] += x * y
    return out

def mats(m, r, pts):
    n = m + r - 1
    assert len(pts) == n - 1
    pts = [Fr(p) for p in pts]
    AT = [[p ** i for p in pts] + [Fr(1 if i == m - 1 else 0)] for i in range(m)]
    G = []
    for j, p in enumerate(pts):
        N = Fr(1)
        for l, q in enumerate(pts):
            if l != j:
                N *= (p - q)
        G.append([p ** k / N for k in range(r)])
    G.append([Fr(1 if k == r - 1 else 0) for k in range(r)])
    BT = []
    for j in range(n - 1):
        c = [Fr(1)]
        for l, q in enumerate(pts):
            if l != j:
                c = polymul(c, [-q, Fr(1)])
        BT.append(c + [Fr(0)] * (n - len(c)))
    c = [Fr(1)]
    for q in pts:
        c = polymul(c, [-q, Fr(1)])
    BT.append(c)
    f = lambda M: np.array([[float(x) for x in row] for row in M])
    return f(AT), f(G), f(BT)

def check1d(m, r, pts):
    AT, G, BT = mats(m, r, pts)
    rng = np.random.default_rng(0)
    d, g = rng.normal(size=m + r - 1), rng.normal(size=r)
    want = np.array([sum(d[i + k] * g[k] for k in range(r)) for i in range(m)])
    got = AT @ ((G @ g) * (BT @ d))
    return np.abs(got - want).max()

def run(m, pts, c=32, k=64, images=4, seed=1):
    r = 5
    n = m + r - 1
    AT, G, BT = mats(m, r, pts)
    assert check1d(m, r, pts) < 1e-9, check1d(m, r, pts)
    rng = np.random.default_rng(seed)
    H = 14
    x = np.maximum(rng.normal(size=(images, H, H, c)), 0).astype(np.float32)  # relu, pooled
    w = (np.clip(rng.normal(size=(5, 5, c, k)), -2, 2) * 0.1).astype(np.float32)
    xp = np.zeros((images, H + 4 + n, H + 4 + n, c), np.float32)
    xp[:, 2:2 + H, 2:2 + H] = x
    direct = np.zeros((images, H, H, k))
    x64 = xp.astype(np.float64)
    for ky, kx in product(range(5), range(5)):
        direct += np.einsum('bhwc,ck->bhwk', x64[:, ky:ky + H, kx:kx + H], w[ky, kx].astype(np.float64))
    # filter transform in f64, then f32
    U = np.einsum('ia,abck,jb->ijck', G, w.astype(np.float64), G).astype(np.float32)
    BT32, AT32 = BT.astype(np.float32), AT.astype(np.float32)
    out = np.zeros((images, H + m, H + m, k), np.float32)
    T = -(-H // m)
    for ty, tx in product(range(T), range(T)):
        d = xp[:, ty * m:ty * m + n, tx * m:tx * m + n]  # b n n c
        V = np.einsum('ia,bajc->bijc', BT32, d, dtype=np.float32)
        V = np.einsum('biac,ja->bijc', V, BT32, dtype=np.float32)
        M = np.einsum('bijc,ijck->bijk', V, U, dtype=np.float32)
        Y = np.einsum('ia,bajk->bijk', AT32, M, dtype=np.float32)
        Y = np.einsum('biak,ja->bijk', Y, AT32, dtype=np.float32)
        out[:, ty * m:ty * m + m, tx * m:tx * m + m] = Y
    out = out[:, :H, :H]
    err = np.abs(out.astype(np.float64) - direct).max() / np.abs(direct).max()
    d32 = np.zeros_like(direct, dtype=np.float32)
    for ky, kx in product(range(5), range(5)):
        d32 += np.einsum('bhwc,ck->bhwk', xp[:, ky:ky + H, kx:kx + H], w[ky, kx], dtype=np.float32)
    e32 = np.abs(d32.astype(np.float64) - direct).max() / np.abs(direct).max()
    return err, e32

sets = {
    "F(2x2,5x5) {0,1,-1,1/2,-2}": (2, [0, 1, -1, Fr(1, 2), -2]),
    "F(3x3,5x5) {0,1,-1,2,-2,1/2}": (3, [0, 1, -1, 2, -2, Fr(1, 2)]),
    "F(3x3,5x5) {0,1,-1,1/2,-1/2,2}": (3, [0, 1, -1, Fr(1, 2), Fr(-1, 2), 2]),
    "F(3x3,5x5) {0,1,-1,2,-1/2,1/2}": (3, [0, 1, -1, 2, Fr(-1, 2), Fr(1, 2)]),
    "F(3x3,5x5) {0,1,-1,1/2,-2,-1/2}": (3, [0, 1, -1, Fr(1, 2), -2, Fr(-1, 2)]),
    "F(4x4,5x5) {0,1,-1,2,-2,1/2,-1/2}": (4, [0, 1, -1, 2, -2, Fr(1, 2), Fr(-1, 2)]),
}
for name, (m, pts) in sets.items():
    errs = [run(m, pts, seed=s) for s in (1, 2)]
    print(f"{name:40s} winograd f32 err/max {max(e for e, _ in errs):.2e}   direct f32 {max(e for _, e in errs):.2e}")
