#!/usr/bin/env python3
"""gmc_corner_check.py — dev-time only: strix's corner strengths, OpenCV 5's arithmetic.

goodFeaturesToTrack ranks corners by cv2.cornerMinEigenVal (blockSize 3,
ksize 3).  engine/analytics/gmc_kernels.h (corner_rows) computes it with
every rounding OpenCV 5.0 makes on an x86-64 CPU with AVX2 and FMA; this
script is that arithmetic in numpy, step by step, checked to the bit
against cv2.Sobel and cv2.cornerMinEigenVal on the half-size grey frames
of the wild clips (tools/reference/gmc_wild_golden.py) and on random
images of awkward widths (the vector blocks' tails):

- Dy: the row filter [K 2K K] (K = float(1/3060)) as fused multiply-adds
  on whole 32-column blocks, the products rounded before each addition on
  the columns after them; the column filter r[y+1] - r[y-1];
- Dx: the row filter [-1 0 1] (exact), the column filter
  fma(d[y-1] + d[y+1], K, d[y] * 2K) on every column;
- the products in float, then boxFilter's in-place BlockSum<double, float>:
  each row's 3-sums in double, a running sum down the rows in double;
- (a + c) - sqrt(b^2 + (a - c)^2) in float, a and c halved.

It also shows that the numbers depend on the CPU dispatch: with
cv2.setUseOptimized(False) (OpenCV's baseline code) the strengths differ.
A fused multiply-add is emulated in double: exact for these operands (see
gmc_kernels.h).  Needs opencv-python-headless 5.0.0.93 and numpy (no torch):

  /tmp/ulref/bin/python tools/reference/gmc_corner_check.py ../shared/data
"""
import os
import sys

import cv2
import numpy as np

import gmc_wild_golden as wild  # the clips' frames (same folder)

f32, f64 = np.float32, np.float64
K = f32(1.0 / (4 * 3 * 255.0))


def fma(a, b, c):
    return (f64(a) * f64(b) + f64(c)).astype(f32)


def reflect(i, n):
    while i < 0 or i >= n:
        i = -i if i < 0 else 2 * n - 2 - i
    return i


def sobel(img):
    """OpenCV's Sobel dx and dy (CV_32F, scale 1/3060, BORDER_REFLECT_101) on the AVX2 dispatch."""
    p = cv2.copyMakeBorder(img, 1, 1, 1, 1, cv2.BORDER_REFLECT_101).astype(f32)
    w = img.shape[1]
    g0, g1, g2 = p[:, 0:w], p[:, 1:w + 1], p[:, 2:w + 2]
    r = fma(g2, K, fma(g1, 2 * K, g0 * K))
    nv = w - w % 32  # RowVec_8u32f's whole blocks; RowFilter's scalar loop after them
    r[:, nv:] = ((g0 * K + g1 * (2 * K)) + g2 * K)[:, nv:]
    dy = r[2:] - r[:-2]
    d = g2 - g0
    dx = fma(d[:-2] + d[2:], K, d[1:-1] * (2 * K))
    return dx, dy


def box(c):
    """boxFilter(3x3, unnormalised, in place) on one float plane: BlockSum<double, float>."""
    h, w = c.shape
    R = np.concatenate([c[:, 1:2], c, c[:, w - 2:w - 1]], axis=1).astype(f64)
    S = (R[:, 0:w] + R[:, 1:w + 1]) + R[:, 2:w + 2]
    run, out = np.zeros(w), np.zeros((h, w), f32)
    for rc in range(h + 2):
        s = run + S[reflect(rc - 1, h)]
        if rc >= 2:
            out[rc - 2] = s.astype(f32)
        run = s - (S[reflect(rc - 3, h)] if rc >= 2 else 0)
    return out


def min_eig(img):
    dx, dy = sobel(img)
    a, b, c = box(dx * dx), box(dx * dy), box(dy * dy)
    a, c = a * f32(0.5), c * f32(0.5)
    t = a - c
    return (a + c) - np.sqrt(b * b + t * t)


def differ(x, y):
    return int((x.view(np.int32) != y.view(np.int32)).sum())


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: gmc_corner_check.py PHOTO_DIR")
    cv2.setNumThreads(1)
    rng = np.random.default_rng(1)
    images = [("random %dx%d" % (w, h), rng.integers(0, 256, (h, w), dtype=np.uint8))
              for w, h in ((241, 33), (250, 20), (383, 287), (37, 5), (3, 3))]
    for name, photo, seed, n, shake, blur, flat in wild.CLIPS:
        img = cv2.imread(os.path.join(sys.argv[1], photo))
        if img is None:
            sys.exit("gmc_corner_check: cannot read %s" % os.path.join(sys.argv[1], photo))
        for k, f in enumerate(wild.frames(img, seed, n, shake, blur, flat)):
            g = cv2.resize(cv2.cvtColor(f, cv2.COLOR_BGR2GRAY), (wild.W // 2, wild.H // 2))
            images.append(("%s frame %d" % (name, k), g))
    sc = 1.0 / (4 * 3 * 255.0)
    avx2, fma3 = cv2.checkHardwareSupport(11), cv2.checkHardwareSupport(12)  # OpenCV's CV_CPU_AVX2, CV_CPU_FMA3
    bad = {"Sobel": 0, "cornerMinEigenVal": 0}
    base = 0
    for name, g in images:
        dx, dy = sobel(g)
        n = differ(dx, cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3, scale=sc)) + \
            differ(dy, cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3, scale=sc))
        e = cv2.cornerMinEigenVal(g, 3, ksize=3)
        m = differ(min_eig(g), e)
        bad["Sobel"] += n
        bad["cornerMinEigenVal"] += m
        if n or m:
            print("%s: %d Sobel values and %d strengths differ" % (name, n, m))
        cv2.setUseOptimized(False)
        base += differ(cv2.cornerMinEigenVal(g, 3, ksize=3), e)
        cv2.setUseOptimized(True)
    print("%d images, this CPU with%s AVX2 and with%s FMA: %d Sobel values and %d corner strengths differ "
          "from cv2's; cv2's baseline code (setUseOptimized(False)) differs from cv2's own in %d strengths"
          % (len(images), "" if avx2 else "out", "" if fma3 else "out", bad["Sobel"], bad["cornerMinEigenVal"], base))
    sys.exit(1 if bad["Sobel"] or bad["cornerMinEigenVal"] else 0)


if __name__ == "__main__":
    main()
