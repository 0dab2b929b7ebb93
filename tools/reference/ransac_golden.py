#!/usr/bin/env python3
"""ransac_golden.py — dev-time only: tests/golden/gmc/ransac.txt.

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
  the 2x3 transform, 6 numbers (%.17g)

tests/test_track.c (gmc_ransac_matches_opencv) checks strix's RANSAC gives
the same inliers and the transform within 1e-5 px.

  /tmp/ulref/bin/python tools/reference/ransac_golden.py tests/golden/gmc/ransac.txt
"""
import sys

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


def main():
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
