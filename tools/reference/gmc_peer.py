#!/usr/bin/env python3
"""gmc_peer.py — dev-time only: the peer of perf/bench_track's "gmc alone" rows.

Ultralytics' own BoT-SORT camera-motion compensation,
ultralytics.trackers.utils.gmc.GMC(method="sparseOptFlow") with its default
downscale (2): cv2.cvtColor to grey, cv2.resize to half size,
cv2.goodFeaturesToTrack, cv2.calcOpticalFlowPyrLK, cv2.estimateAffinePartial2D
(RANSAC) — on the very clip perf/bench_track.c times strix's GMC on:

- the world: (ww, wh) = (W + 80 + 2 * frames + 64, H + 80 + 64) pixels of 8x8
  cells, RGB = the low three bytes of the cell's hash (clip_make's, unsigned
  32-bit arithmetic);
- the camera: frame f is the W x H window at (cam_x, cam_y) = (40 + 2f +
  int(u * 41) - 20, 40 + int(v * 29) - 14), u and v drawn in turn from
  bench_track's xorshift generator (next_uniform) seeded with 42.

strix is given the RGB window (bgr = 0); Ultralytics gets the same pixels as
BGR (channels reversed, as OpenCV decodes video), made contiguous before the
clock starts.  Timed: GMC.apply(frame) alone, per frame; each run starts a
fresh GMC and its first frame (which only initialises it) is left out, as in
bench_track.  One line in bench_track's format:

  gmc, Ultralytics U + OpenCV V ms/frame wall: median ..  p90 ..  mean ..;  cpu: median ..  p90 ..  mean ..  (N frames)

cpu is time.thread_time() (CLOCK_THREAD_CPUTIME_ID, as bench_track): with
cv2.setNumThreads(1) (the default here, --threads 1: one core, issue 20's
goal) OpenCV runs every parallel loop on the calling thread, so this thread's
CPU time is all the work.  With --threads N > 1 OpenCV's worker threads do
part of it, so cpu is then time.process_time() (every thread of the process)
and the line says so.

--transforms FILE writes the first run's 2x3 matrices, one line a frame
(6 numbers, %.9g), as bench_track --transforms does for strix; --compare FILE
(a bench_track --transforms file of the same clip) prints the largest
difference between the two over the clip: linear part (largest |difference|
of the four entries) and translation (largest length of the difference, in
full-size pixels), with the frame and the medians.

  /opt/strix-ref/bin/python tools/reference/gmc_peer.py [--width 1920 --height 1080]
      [--frames 300] [--runs 5] [--threads 1] [--transforms FILE] [--compare STRIX_FILE]

gmc.py is loaded from Ultralytics' installed package by file path: importing
ultralytics.trackers would import lap (the trackers' assignment solver),
which GMC does not use and the venv lacks.
"""
import argparse
import importlib.util
import os
import statistics
import sys
import time

import cv2
import numpy as np

M64 = (1 << 64) - 1


def next_uniform(s):
    """bench_track's next_uniform: (new state, uniform double in [0, 1))."""
    s ^= s >> 12
    s ^= (s << 25) & M64
    s ^= s >> 27
    return s, (((s * 0x2545F4914F6CDD1D) & M64) >> 11) / 9007199254740992.0


def clip(w, h, frames):
    """(world [wh, ww, 3] uint8 RGB, camera [(x, y)] per frame): clip_make's."""
    ww, wh = w + 2 * 40 + 2 * frames + 64, h + 2 * 40 + 64
    cx = (np.arange(ww, dtype=np.uint32) // 8)[None, :]
    cy = (np.arange(wh, dtype=np.uint32) // 8)[:, None]
    v = (cx * np.uint32(73856093)) ^ (cy * np.uint32(19349663))
    v ^= v >> np.uint32(13)
    v *= np.uint32(0x5BD1E995)
    v ^= v >> np.uint32(15)
    world = np.stack([v & 255, (v >> 8) & 255, (v >> 16) & 255], axis=-1).astype(np.uint8)
    s, cam = 42, []
    for f in range(frames):
        s, a = next_uniform(s)
        s, b = next_uniform(s)
        cam.append((40 + 2 * f + int(a * 41) - 20, 40 + int(b * 29) - 14))
    return world, cam


def load_gmc():
    """Ultralytics' GMC class, from its installed gmc.py."""
    root = importlib.util.find_spec("ultralytics").submodule_search_locations[0]
    spec = importlib.util.spec_from_file_location("ultralytics_gmc", os.path.join(root, "trackers", "utils", "gmc.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod.GMC


def loadavg():
    with open("/proc/loadavg") as f:
        return f.read().strip()


def compare(ours, path):
    """One line: strix's transforms (bench_track --transforms) against ours."""
    theirs = np.loadtxt(path, ndmin=2)
    if theirs.shape != ours.shape:
        sys.exit("gmc_peer: %s: %d x %d numbers, this clip has %d frames x 6: run bench_track with the same "
                 "--width, --height and --frames" % (path, theirs.shape[0], theirs.shape[1], ours.shape[0]))
    d = theirs - ours
    lin = np.abs(d[:, [0, 1, 3, 4]]).max(axis=1)
    tr = np.hypot(d[:, 2], d[:, 5])
    eye = np.array([1, 0, 0, 0, 1, 0], dtype=float)
    fallback = np.all(theirs == eye, axis=1) != np.all(ours == eye, axis=1)
    fl, ft = int(lin.argmax()), int(tr.argmax())
    print("transforms, strix vs OpenCV over %d frames: linear part max |diff| %.3g (frame %d), median %.3g; "
          "translation max |diff| %.3g px (frame %d), median %.3g px; identity in one only: %d frames"
          % (len(ours), lin[fl], fl, float(np.median(lin)), tr[ft], ft, float(np.median(tr)), int(fallback.sum())))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--width", type=int, default=1920)
    ap.add_argument("--height", type=int, default=1080)
    ap.add_argument("--frames", type=int, default=300)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1, help="cv2.setNumThreads (default 1: one core)")
    ap.add_argument("--transforms", metavar="FILE", help="write the first run's 2x3 matrices, a line a frame")
    ap.add_argument("--compare", metavar="FILE", help="bench_track --transforms FILE of the same clip")
    a = ap.parse_args()
    if not (64 <= a.width <= 8192 and 64 <= a.height <= 8192 and 2 <= a.frames <= 100000 and 1 <= a.runs <= 1000
            and a.threads >= 1):
        sys.exit("gmc_peer: --width/--height 64..8192, --frames 2..100000, --runs 1..1000, --threads >= 1 "
                 "(bench_track's limits)")
    if a.compare and not os.path.isfile(a.compare):
        sys.exit("gmc_peer: %s: no such file (write it with bench_track --transforms)" % a.compare)
    cv2.setNumThreads(a.threads)
    GMC = load_gmc()
    import ultralytics

    world, cam = clip(a.width, a.height, a.frames)
    cpu = time.thread_time if a.threads == 1 else time.process_time
    print("gmc_peer: %dx%d, %d frames x %d runs, cv2.setNumThreads(%d), cpu = %s; load average before: %s"
          % (a.width, a.height, a.frames, a.runs, a.threads, cpu.__name__, loadavg()), flush=True)
    t, u, first = [], [], []
    for r in range(a.runs):
        g = GMC(method="sparseOptFlow")
        for f, (x, y) in enumerate(cam):
            frame = np.ascontiguousarray(world[y:y + a.height, x:x + a.width, ::-1])
            t0, u0 = time.perf_counter(), cpu()
            H = g.apply(frame)
            ms, cms = (time.perf_counter() - t0) * 1e3, (cpu() - u0) * 1e3
            if r == 0:
                first.append(np.asarray(H, dtype=float).reshape(6))
            if f > 0:
                t.append(ms)
                u.append(cms)
    n = len(t)
    t.sort()
    u.sort()
    name = "gmc, Ultralytics %s + OpenCV %s" % (ultralytics.__version__, cv2.__version__)
    print("%-28s ms/frame wall: median %.3f  p90 %.3f  mean %.3f;  cpu: median %.3f  p90 %.3f  mean %.3f  "
          "(%d frames)" % (name, t[n // 2], t[n * 9 // 10], statistics.fmean(t), u[n // 2], u[n * 9 // 10],
                           statistics.fmean(u), n))
    print("load average after: %s" % loadavg())
    first = np.array(first)
    if a.transforms:
        with open(a.transforms, "w") as f:
            for h in first:
                f.write(" ".join("%.9g" % v for v in h) + "\n")
    if a.compare:
        compare(first, a.compare)


if __name__ == "__main__":
    main()
