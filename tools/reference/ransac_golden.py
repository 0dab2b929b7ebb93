#!/usr/bin/env python3
"""ransac_golden.py — dev-time only: tests/golden/gmc/ransac.txt, and a check of strix against it.

BoT-SORT's GMC ends with cv2.estimateAffinePartial2D(prev, cur,
cv2.RANSAC): 2-point samples drawn by OpenCV's RNG (seeded with -1), the
second index drawn again until it differs from the first, each sample's
similarity from the closed form of AffinePartial2DEstimatorCallback, its
inliers from float32 squared errors <= 9, then Levenberg-Marquardt over the
best inliers.  This writes point sets where those details decide the
inliers (few points, many outliers; points about 3 px off the model) with
what the installed OpenCV (opencv-python-headless 5.0.0.93) returns:

  # comment lines
  n
  n lines "px py qx qy" (float32, shortest decimals)
  the inlier mask, n characters 0/1
  the 2x3 transform, 6 numbers (%.17g: every double back)

tests/test_track.c (gmc_ransac_matches_opencv) checks strix's RANSAC gives
the same inliers and the same transform, to the bit.

  /tmp/ulref/bin/python tools/reference/ransac_golden.py tests/golden/gmc/ransac.txt

--check BUILD [FILE] runs strix's own code from BUILD/libstrix.a (its GMC
objects linked into a temporary shared library, called through ctypes) on
every point set of FILE (default tests/golden/gmc/ransac.txt) and prints,
per set where they differ and then overall, the largest difference between
strix's transform and OpenCV's: of the six entries, and in pixels at the
corners of the points' bounding box.  Point it at a build of another commit to see
a change's effect (e.g. the least-squares fit strix had before it took
OpenCV's refinement step for step).

  /tmp/ulref/bin/python tools/reference/ransac_golden.py --check build/dev
"""
import ctypes
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np


def f32s(x):
    return np.format_float_positional(np.float32(x), unique=True, trim="-")


def cases(rng):
    for t in range(60):  # few points, many outliers: duplicate draws happen
        n = int(rng.integers(5, 14))
        P = rng.uniform(0, 300, (n, 2)).astype(np.float32)
        a, s = rng.uniform(-0.1, 0.1), rng.uniform(0.9, 1.1)
        R = s * np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        Q = (P @ R.T + rng.uniform(-20, 20, 2) + rng.normal(0, rng.uniform(0.2, 2.5), (n, 2))).astype(np.float32)
        out = rng.random(n) < rng.uniform(0.2, 0.6)
        Q[out] += rng.uniform(-40, 40, (int(out.sum()), 2)).astype(np.float32)
        yield P, Q
    for t in range(40):  # half the points about 3 px off a translation: float32 errors decide them
        n = int(rng.integers(8, 40))
        P = rng.uniform(0, 300, (n, 2)).astype(np.float32)
        ang = rng.uniform(0, 2 * np.pi, n)
        r = np.where(rng.random(n) < 0.5, 3.0 + rng.normal(0, 2e-6, n), 0)
        yield P, (P + np.float32(5) + np.c_[r * np.cos(ang), r * np.sin(ang)]).astype(np.float32)
    for n in (70, 150, 200, 400):  # >= 50 inliers: OpenCV hands J^T r to OpenBLAS (one K block, two, three)
        P = rng.uniform(0, 480, (n, 2)).astype(np.float32)
        a, s = rng.uniform(-0.05, 0.05), rng.uniform(0.95, 1.05)
        R = s * np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        Q = (P @ R.T + rng.uniform(-20, 20, 2) + rng.normal(0, 0.5, (n, 2))).astype(np.float32)
        out = rng.random(n) < 0.15
        Q[out] += rng.uniform(-40, 40, (int(out.sum()), 2)).astype(np.float32)
        yield P, Q


def load_strix(build):
    """strix's GMC (engine/analytics/gmc*.c) from BUILD/libstrix.a, through ctypes."""
    lib = os.path.abspath(os.path.join(build, "libstrix.a"))
    members = subprocess.run(["ar", "t", lib], check=True, capture_output=True, text=True).stdout.split()
    objs = [m for m in members if m.startswith("gmc") and m.endswith(".o")]
    with tempfile.TemporaryDirectory(prefix="strix_gmc_") as tmp:  # loaded, the file may go
        subprocess.run(["ar", "x", lib] + objs, cwd=tmp, check=True)
        subprocess.run(["cc", "-shared", "-o", "gmc.so"] + objs + ["-lm"], cwd=tmp, check=True)
        so = ctypes.CDLL(os.path.join(tmp, "gmc.so"))
    dp, u8 = ctypes.POINTER(ctypes.c_double), ctypes.POINTER(ctypes.c_uint8)
    so.strix_gmc_ransac.argtypes = [dp, dp, ctypes.c_int, u8, dp]
    so.strix_gmc_create.restype = ctypes.c_void_p
    so.strix_gmc_free.argtypes = [ctypes.c_void_p]
    so.strix_gmc_apply.argtypes = [ctypes.c_void_p, u8, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int, dp]
    return so


def read_sets(path):
    """The point sets of a ransac.txt: (P, Q) float32 [n, 2] each."""
    lines = [x for x in open(path).read().split("\n") if x and not x.startswith("#")]
    i = 0
    while i < len(lines):
        n = int(lines[i])
        pq = np.array([[float(v) for v in lines[i + 1 + j].split()] for j in range(n)], dtype=np.float32)
        yield np.ascontiguousarray(pq[:, :2]), np.ascontiguousarray(pq[:, 2:])
        i += n + 3


def ptr(a, t):
    return a.ctypes.data_as(ctypes.POINTER(t))


def check(build, path):
    so = load_strix(build)
    worst, worst_px, exact, k = 0.0, 0.0, 0, 0
    for P, Q in read_sets(path):
        k += 1
        Hw, inl = cv2.estimateAffinePartial2D(P.reshape(-1, 1, 2), Q.reshape(-1, 1, 2), cv2.RANSAC)
        p, q = np.ascontiguousarray(P, np.float64), np.ascontiguousarray(Q, np.float64)
        m, H = np.zeros(len(P), np.uint8), np.zeros(6)
        if so.strix_gmc_ransac(ptr(p, ctypes.c_double), ptr(q, ctypes.c_double), len(P), ptr(m, ctypes.c_uint8),
                               ptr(H, ctypes.c_double)) or Hw is None:
            print("set %d: %s has no model" % (k, "strix" if Hw is not None else "OpenCV"))
            continue
        if (m != inl.ravel()).any():
            print("set %d: other inliers" % k)
            continue
        D = H - Hw.ravel()
        d = np.abs(D).max()
        px = max(np.hypot(D[0] * x + D[1] * y + D[2], D[3] * x + D[4] * y + D[5])
                 for x in (P[:, 0].min(), P[:, 0].max()) for y in (P[:, 1].min(), P[:, 1].max()))
        exact += d == 0
        if d:
            print("set %d (%d points, %d inliers): entries %.3g apart, %.3g px" % (k, len(P), m.sum(), d, px))
        worst, worst_px = max(worst, d), max(worst_px, px)
    print("%d point sets, %d transforms bit-equal; at most %.3g apart (entries), %.3g px" % (k, exact, worst, worst_px))


def main():
    if len(sys.argv) >= 3 and sys.argv[1] == "--check":
        check(sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "tests/golden/gmc/ransac.txt")
        return
    rng = np.random.default_rng(36)
    with open(sys.argv[1], "w") as f:
        f.write("# cv2.estimateAffinePartial2D(p, q, cv2.RANSAC), opencv %s (tools/reference/ransac_golden.py)\n"
                % cv2.__version__)
        k = 0
        for P, Q in cases(rng):
            H, inl = cv2.estimateAffinePartial2D(P.reshape(-1, 1, 2), Q.reshape(-1, 1, 2), cv2.RANSAC)
            if H is None:
                continue
            f.write("%d\n" % len(P))
            for p, q in zip(P, Q):
                f.write("%s %s %s %s\n" % (f32s(p[0]), f32s(p[1]), f32s(q[0]), f32s(q[1])))
            f.write("".join("1" if v else "0" for v in inl.ravel()) + "\n")
            f.write(" ".join("%.17g" % v for v in H.ravel()) + "\n")
            k += 1
    print("%d cases" % k)


if __name__ == "__main__":
    main()
