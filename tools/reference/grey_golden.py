#!/usr/bin/env python3
"""grey_golden.py — dev-time only: the grey-frame goldens of tests/golden/gmc/.

BoT-SORT's GMC (ultralytics/trackers/utils/gmc.py, sparseOptFlow) starts
from cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) and cv2.resize to half size.
OpenCV 5 rounds that grey as (R 9798 + G 19235 + B 3735 + 2^14) >> 15,
OpenCV 4 as (R 4899 + G 9617 + B 1868 + 2^13) >> 14; tests/test_track.c
checks strix's grey against the files written here by the OpenCV this venv
has (opencv-python-headless 5.0.0.93, what `pip install ultralytics` brings
today):

  grey_src.ppm   a crop of a real frame (vtest.avi, the project's sample
                 video, frame 775 as cv2.VideoCapture decodes it, the 160 x
                 120 window of it where the two roundings differ most: 328
                 pixels; in photographs they hardly ever do), binary PPM,
                 RGB
  grey_full.pgm  cv2.cvtColor(crop, COLOR_BGR2GRAY), W x H
  grey_half.pgm  cv2.resize(that grey, (W // 2, H // 2)): GMC's input
  grey_odd.ppm, grey_odd_half.pgm  the same for a 77 x 59 crop of it: odd
                 sizes, where INTER_LINEAR interpolates (even ones halve
                 exactly: 2x2 means)

It also checks the two formulas above against cv2.cvtColor on every one of
the 2^24 colours and prints how many colours each gets wrong.

  /tmp/ulref/bin/python tools/reference/grey_golden.py /work/shared/data/vtest.avi tests/golden/gmc
"""
import os
import sys

import cv2
import numpy as np


def formulas(bgr):
    b, g, r = (bgr[..., k].astype(np.int64) for k in range(3))
    return ((r * 9798 + g * 19235 + b * 3735 + (1 << 14)) >> 15,
            (r * 4899 + g * 9617 + b * 1868 + (1 << 13)) >> 14)


def main():
    src, outdir = sys.argv[1], sys.argv[2]
    v = np.arange(256)
    r, g, b = np.meshgrid(v, v, v, indexing="ij")
    every = np.stack([b, g, r], -1).reshape(4096, 4096, 3).astype(np.uint8)
    grey = cv2.cvtColor(every, cv2.COLOR_BGR2GRAY).astype(np.int64)
    v5, v4 = formulas(every)
    print("opencv %s: of 2^24 colours, %d differ from the 15-bit formula, %d from the 14-bit one"
          % (cv2.__version__, int((grey != v5).sum()), int((grey != v4).sum())))
    cap = cv2.VideoCapture(src)
    cap.set(cv2.CAP_PROP_POS_FRAMES, 775)
    ok, img = cap.read()
    assert ok, src
    crop = np.ascontiguousarray(img[0:120, 384:544])
    h, w = crop.shape[:2]
    full = cv2.cvtColor(crop, cv2.COLOR_BGR2GRAY)
    half = cv2.resize(full, (w // 2, h // 2))
    c5, c4 = formulas(crop)
    print("crop %dx%d: OpenCV's grey differs from the 15-bit formula on %d pixels, from the 14-bit one on %d"
          % (w, h, int((full != c5).sum()), int((full != c4).sum())))
    g4 = c4.astype(np.int64)
    h4 = (g4[0::2, 0::2] + g4[0::2, 1::2] + g4[1::2, 0::2] + g4[1::2, 1::2] + 2) >> 2
    print("half size: %d of %d pixels differ from the 14-bit grey's" % (int((half != h4).sum()), half.size))
    os.makedirs(outdir, exist_ok=True)
    with open(os.path.join(outdir, "grey_src.ppm"), "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (w, h) + crop[..., ::-1].tobytes())
    with open(os.path.join(outdir, "grey_full.pgm"), "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (w, h) + full.tobytes())
    with open(os.path.join(outdir, "grey_half.pgm"), "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (w // 2, h // 2) + half.tobytes())
    odd = np.ascontiguousarray(crop[30:89, 40:117])
    oh, ow = odd.shape[:2]
    with open(os.path.join(outdir, "grey_odd.ppm"), "wb") as f:
        f.write(b"P6\n%d %d\n255\n" % (ow, oh) + odd[..., ::-1].tobytes())
    with open(os.path.join(outdir, "grey_odd_half.pgm"), "wb") as f:
        f.write(b"P5\n%d %d\n255\n" % (ow // 2, oh // 2)
                + cv2.resize(cv2.cvtColor(odd, cv2.COLOR_BGR2GRAY), (ow // 2, oh // 2)).tobytes())


if __name__ == "__main__":
    main()
