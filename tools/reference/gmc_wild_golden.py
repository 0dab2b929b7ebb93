#!/usr/bin/env python3
"""gmc_wild_golden.py — dev-time only: OpenCV 5's GMC transforms on wild handheld clips.

BoT-SORT's camera-motion compensation (Ultralytics' GMC(method="sparseOptFlow"),
ultralytics/trackers/utils/gmc.py, loaded from the installed package as
gmc_peer.py does) run on clips made from the project's photographs
(../shared/data/*.jpg) by a deterministic handheld path.  tests/test_track.c
(gmc_wild_clips_match_opencv) makes the same frames in C from the same JPEG
(strix_image_load gives cv2.imread's pixels) and compares strix's transform
with the one written here, frame by frame.

A clip (all integer arithmetic, so C and Python make the same bytes):
- the photograph P (W0 x H0, as decoded; BGR here, RGB in C), optionally
  flattened by F bits (low texture): every channel value v becomes
  128 - (128 >> F) + (v >> F);
- frames of W x H = 480 x 320 at crop origin (ox, oy) for frame f = 0..N-1:
    s = s * 1664525 + 1013904223 (mod 2^32), three times a frame, seeded with
    the clip's seed: u1, u2, u3 = the three states >> 16;
    tri(f, p) = |f mod 2p - p| - p / 2 (a slow pan, p frames each way);
    ox = clamp((W0 - W) / 2 + tri(f, 60) + u1 mod (2 S + 1) - S, 0, W0 - W),
    oy = clamp((H0 - H) / 2 + tri(f, 44) + u2 mod (2 S + 1) - S, 0, H0 - H),
    with S the shake (30 px: jumps of up to 60 px between frames);
- motion blur of length L = 1 + u3 mod B (B the blur bound; L = 1: none),
  along x on odd frames and along y on even ones: each value is
  (sum over k = 0..L-1 of P at the pixel moved by k - L / 2 along the blur,
  clamped to the photograph + L / 2) / L, integer division.

Written: tests/golden/gmc/wild_NAME.txt, a header line "# photo seed N
shake blur flat" then one line per frame with the 2x3 matrix (6 numbers,
%.17g; the identity on frame 0), and one line per frame of the RANSAC inlier
count ("# inliers" block; -1 where OpenCV found no model) so the test can
say which frames had few.

gmc.py imports ultralytics.utils, which imports torch: run it in a venv that has
ultralytics 8.4.190, torch and opencv-python-headless 5.0.0.93:

  /tmp/coldref/bin/python tools/reference/gmc_wild_golden.py ../shared/data tests/golden/gmc

--check BUILD PHOTO_DIR [GOLDEN_DIR] replays the clips through strix's GMC
from BUILD/libstrix.a (ransac_golden.py's load_strix; no torch needed) and
prints, per clip, how many frames' transforms equal the golden's to the bit
and the largest difference (linear part: largest |difference| of the four
entries; translation: length of the difference, full-size pixels), with the
frame:

  /tmp/ulref/bin/python tools/reference/gmc_wild_golden.py --check build/dev ../shared/data
"""
import ctypes
import os
import sys

import cv2
import numpy as np

from gmc_peer import load_gmc  # Ultralytics' GMC class from its installed gmc.py (same folder)
from ransac_golden import load_strix  # strix's GMC through ctypes (same folder)

W, H = 480, 320

# name, photo, seed, frames, shake, blur bound, flat (F: low texture)
CLIPS = [
    ("dog_shake", "dog.jpg", 1, 150, 30, 1, 0),
    ("horses_blur", "horses.jpg", 2, 150, 30, 9, 0),
    ("person_blur", "person.jpg", 3, 150, 30, 15, 0),
    ("eagle_flat", "eagle.jpg", 4, 150, 30, 9, 3),
    ("dog_flat", "dog.jpg", 5, 150, 30, 15, 5),
]


def tri(f, p):
    return abs(f % (2 * p) - p) - p // 2


def frames(photo, seed, n, shake, blur, flat):
    """The clip's frames (BGR uint8 [H, W, 3]), as the module docstring says."""
    p = photo.astype(np.int64)
    if flat:
        p = 128 - (128 >> flat) + (p >> flat)
    h0, w0 = p.shape[:2]
    s = seed & 0xFFFFFFFF
    out = []
    for f in range(n):
        u = []
        for _ in range(3):
            s = (s * 1664525 + 1013904223) & 0xFFFFFFFF
            u.append(s >> 16)
        ox = min(max((w0 - W) // 2 + tri(f, 60) + u[0] % (2 * shake + 1) - shake, 0), w0 - W)
        oy = min(max((h0 - H) // 2 + tri(f, 44) + u[1] % (2 * shake + 1) - shake, 0), h0 - H)
        L = 1 + u[2] % blur
        acc = np.zeros((H, W, 3), np.int64)
        for k in range(L):
            d = k - L // 2
            if f % 2:
                xs = np.clip(np.arange(ox, ox + W) + d, 0, w0 - 1)
                acc += p[oy:oy + H][:, xs]
            else:
                ys = np.clip(np.arange(oy, oy + H) + d, 0, h0 - 1)
                acc += p[ys][:, ox:ox + W]
        out.append(((acc + L // 2) // L).astype(np.uint8))
    return out


def inliers(prev, cur, pk):
    """The RANSAC inlier count GMC's fit saw between two frames (-1: no model)."""
    g0, g1 = (cv2.resize(cv2.cvtColor(x, cv2.COLOR_BGR2GRAY), (W // 2, H // 2)) for x in (prev, cur))
    if pk is None:
        return -1
    nx, st, _ = cv2.calcOpticalFlowPyrLK(g0, g1, pk, None)
    good = st.ravel().astype(bool)
    if good.sum() <= 4:
        return -1
    m, inl = cv2.estimateAffinePartial2D(pk[good], nx[good], cv2.RANSAC)
    return -1 if m is None else int(inl.sum())


def check(build, photo_dir, golden_dir):
    so = load_strix(build)
    for name, photo, seed, n, shake, blur, flat in CLIPS:
        img = cv2.imread(os.path.join(photo_dir, photo))
        if img is None:
            sys.exit("gmc_wild_golden: cannot read %s" % os.path.join(photo_dir, photo))
        rows = [x for x in open(os.path.join(golden_dir, "wild_%s.txt" % name)).read().split("\n")[1:n + 1]]
        g = so.strix_gmc_create()
        exact, lin, tr, worst_f = 0, 0.0, 0.0, -1
        for f, x in enumerate(frames(img, seed, n, shake, blur, flat)):
            h, want = np.zeros(6), np.array([float(v) for v in rows[f].split()])
            x = np.ascontiguousarray(x)
            so.strix_gmc_apply(g, x.ctypes.data_as(ctypes.POINTER(ctypes.c_uint8)), W, H, 3 * W, 1,
                               h.ctypes.data_as(ctypes.POINTER(ctypes.c_double)))
            D = h - want
            exact += not D.any()
            t = float(np.hypot(D[2], D[5]))
            if t > tr:
                worst_f = f
            lin, tr = max(lin, float(np.abs(D[[0, 1, 3, 4]]).max())), max(tr, t)
        so.strix_gmc_free(g)
        print("%s: %d frames, %d bit-equal; at most %.3g (linear) and %.3g px (translation, frame %d)" % (
            name, n, exact, lin, tr, worst_f))


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "--check":
        check(sys.argv[2], sys.argv[3], sys.argv[4] if len(sys.argv) > 4 else "tests/golden/gmc")
        return
    if len(sys.argv) != 3:
        sys.exit("usage: gmc_wild_golden.py PHOTO_DIR OUT_DIR")
    cv2.setNumThreads(1)
    GMC = load_gmc()
    for name, photo, seed, n, shake, blur, flat in CLIPS:
        path = os.path.join(sys.argv[1], photo)
        img = cv2.imread(path)
        if img is None:
            sys.exit("gmc_wild_golden: cannot read %s" % path)
        fr = frames(img, seed, n, shake, blur, flat)
        g = GMC(method="sparseOptFlow")
        hs, counts = [], []
        for f, x in enumerate(fr):
            pk = g.prevKeyPoints
            hs.append(np.asarray(g.apply(x), dtype=float).reshape(6))
            counts.append(inliers(fr[f - 1], x, pk) if f else -1)
        out = os.path.join(sys.argv[2], "wild_%s.txt" % name)
        with open(out, "w") as o:
            o.write("# %s %d %d %d %d %d\n" % (photo, seed, n, shake, blur, flat))
            for h in hs:
                o.write(" ".join("%.17g" % v for v in h) + "\n")
            o.write("# inliers\n" + " ".join(str(c) for c in counts) + "\n")
        few = sum(1 for c in counts[1:] if 0 <= c < 20)
        print("%s: %d frames, inliers min %d median %d, %d frames under 20" % (
            out, n, min(c for c in counts[1:]), int(np.median(counts[1:])), few))


if __name__ == "__main__":
    main()
