#!/usr/bin/env python3
"""track_obb_goldens.py — dev-time only: the oriented-box tracker goldens of
tests/golden/track/ (obb_*.obb.txt).

Ultralytics 8.4.190 tracks an obb model's boxes on xywhr: STrack takes
(x, y, w, h, angle, idx), holds the long-edge form, keeps the angle's
half-turn form nearest the track's, matches on batch_probiou (PyTorch) and
turns the angle with the camera (stracks.multi_gmc).  This runs synthetic
rotated-box streams through its six trackers (BYTETracker, BOTSORT, OCSORT,
DeepOCSORT, FASTTracker, TRACKTRACK, from their YAMLs) and writes for each
stream NAME (obb_cross, obb_crowd, obb_pan) NAME.obb.txt:

  "# ..." comment lines, then per detection one line
  "frame index cx cy w h r score" then for each column of COLUMNS
  "id x y w h r": the identity that tracker returned for the detection
  and its row's box (float32, shortest decimal; -1 and "- - - - -": not
  returned).  frame 0-based, index the detection's place in its frame (by
  decreasing score); the detections are OBB.xywhr as the obb predictor
  gives them (ops.regularize_rboxes: angle in [0, pi/2), so w < h where the
  object's long side is past a quarter turn).

Streams:
  obb_cross  two long boxes crossing, one spinning through the quarter and
             half turns (the regularised angle wraps, w and h swap), the
             other turning slowly near 90 degrees; misses and low scores;
  obb_crowd  ten boxes moving and turning, misses, jitter, false positives;
  obb_pan    track_goldens.py's "pan" camera clip (its scene, drawn as
             there: tests/golden/track/pan.scene.txt), each walking person
             a rotated box about its ground-truth box; BOTSORT, TRACKTRACK
             and DeepOCSORT's GMC column run sparseOptFlow on the frames.

Needs PyTorch (batch_probiou), unlike track_goldens.py, whose helpers it
imports after torch:
  /tmp/coldref/bin/python tools/reference/track_obb_goldens.py tests/golden/track
(ultralytics==8.4.190, torch, torchvision, opencv-python 5, lap).
"""
import os
import sys

import numpy as np
import torch
import torchvision  # noqa: F401  (imported before track_goldens' torch stub, so the real ones stay)

import ultralytics  # noqa: E402
from ultralytics.trackers.bot_sort import BOTSORT  # noqa: E402
from ultralytics.trackers.byte_tracker import BYTETracker  # noqa: E402
from ultralytics.trackers.deep_oc_sort import DeepOCSORT  # noqa: E402
from ultralytics.trackers.fast_tracker import FASTTracker  # noqa: E402
from ultralytics.trackers.oc_sort import OCSORT  # noqa: E402
from ultralytics.trackers.track_tracker import TRACKTRACK  # noqa: E402
from ultralytics.utils import ops  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import track_goldens as tg  # noqa: E402

# (column, tracker class, yaml, overrides, gets the frames)
COLUMNS = (
    ("bytetrack", BYTETracker, "bytetrack", {}, False),
    ("botsort", BOTSORT, "botsort", {}, True),
    ("ocsort", OCSORT, "ocsort", {}, False),
    ("deepocsort", DeepOCSORT, "deepocsort", {}, False),
    ("deepocsort_gmc", DeepOCSORT, "deepocsort", tg.DEEPOCSORT_ALT, True),
    ("fasttrack", FASTTracker, "fasttrack", {}, False),
    ("tracktrack", TRACKTRACK, "tracktrack", {}, True),
)


class OBBs:
    """What the trackers read of ultralytics.engine.results.OBB after .cpu().numpy():
    float32 xywhr, conf, cls, and xyxy (the corners' bounds; GMC's, unused by sparseOptFlow)."""

    def __init__(self, xywhr, conf, cls):
        self.xywhr = np.asarray(xywhr, dtype=np.float32).reshape(-1, 5)
        self.conf = np.asarray(conf, dtype=np.float32)
        self.cls = np.asarray(cls, dtype=np.float32)
        c = ops.xywhr2xyxyxyxy(self.xywhr)
        self.xyxy = np.concatenate([c.min(1), c.max(1)], -1) if len(c) else np.empty((0, 4), np.float32)

    def __len__(self):
        return len(self.conf)

    def __getitem__(self, m):
        return OBBs(self.xywhr[m], self.conf[m], self.cls[m])


def regularized(cx, cy, long_side, short_side, theta):
    """the obb predictor's box of an object (ops.regularize_rboxes in float32)"""
    r = torch.tensor([[cx, cy, long_side, short_side, theta]], dtype=torch.float32)
    return [np.float32(v) for v in ops.regularize_rboxes(r)[0].tolist()]


def obb_stream(name, rng):
    """frames of detections ([x y w h r] float32, score, class), sorted by decreasing score"""
    frames = []
    if name == "obb_cross":
        n = 90
        # (cx, cy, vx, vy, long, short, theta0, spin per frame)
        objs = [(150, 300, 11.0, 0.4, 160, 50, 1.2, 0.06), (1100, 330, -11.5, -0.3, 150, 56, np.pi / 2 - 0.05, 0.004)]
        hidden = {0: set(range(52, 58)), 1: set(range(30, 33))}
        low = {0: set(range(40, 46)), 1: set(range(60, 64))}
        fp_rate = 0.1
    elif name == "obb_crowd":
        n = 100
        objs = []
        for _ in range(10):
            L = rng.uniform(40, 140)
            objs.append((rng.uniform(100, 1180), rng.uniform(80, 640), rng.uniform(-7, 7), rng.uniform(-4, 4), L,
                         L * rng.uniform(0.3, 0.8), rng.uniform(0, np.pi), rng.uniform(-0.08, 0.08)))
        hidden, low, fp_rate = {}, {}, 0.4
    else:
        raise ValueError(name)
    for f in range(n):
        dets = []
        for k, (cx, cy, vx, vy, L, S, t0, spin) in enumerate(objs):
            x, y = cx + vx * f, cy + vy * f
            if name == "obb_crowd":  # bounce off the borders
                x = 1180 - abs((x - 100) % 2160 - 1080)
                y = 640 - abs((y - 80) % 1120 - 560)
            if f in hidden.get(k, ()) or (name == "obb_crowd" and rng.random() < 0.1):
                continue
            j = rng.normal(0, 1.0, 5) * np.array([1, 1, 1.5, 1, 0.02])
            box = regularized(x + j[0], y + j[1], L + j[2], S + j[3], t0 + spin * f + j[4])
            lo = f in low.get(k, ()) or rng.random() < 0.05
            dets.append((box, rng.uniform(0.3, 0.55) if lo else rng.uniform(0.75, 0.97), 0))
        for _ in range(rng.poisson(fp_rate)):  # false positives
            L = rng.uniform(30, 90)
            box = regularized(rng.uniform(50, 1230), rng.uniform(50, 670), L, L * rng.uniform(0.3, 1), rng.uniform(0, 3))
            dets.append((box, rng.uniform(0.3, 0.6) if rng.random() < 0.8 else rng.uniform(0.7, 0.8), 0))
        frames.append(sorted([(b, np.float32(s), c) for b, s, c in dets], key=lambda d: -float(d[1])))
    return frames


def pan_stream(rng):
    """the "pan" clip's scene (track_goldens' seed), each object a rotated box about its ground truth"""
    scene, _, gt = tg.camera_clip("pan", np.random.default_rng(2000))
    by_frame = {}
    for f, oid, x, y, w, h in gt:
        by_frame.setdefault(f - 1, []).append((oid, x, y, w, h))
    frames = []
    for f in range(len(scene)):
        dets = []
        for oid, x, y, w, h in by_frame.get(f, []):
            if rng.random() < 0.05:
                continue
            theta = np.pi / 2 + 0.3 * np.sin(f / 9.0 + oid) + rng.normal(0, 0.02)  # upright people, swaying
            j = rng.normal(0, 1.0, 4)
            box = regularized(x + w / 2 + j[0], y + h / 2 + j[1], h + j[2], w * 0.8 + j[3], theta)
            dets.append((box, np.float32(rng.uniform(0.3, 0.55) if rng.random() < 0.05 else rng.uniform(0.75, 0.97)), 0))
        frames.append(sorted(dets, key=lambda d: -float(d[1])))
    return scene, frames


def run(column, frames, images):
    _, cls, yaml, over, with_frames = column
    tracker = cls(tg.cfg(yaml, **over))
    ids, boxes = [], []
    for f, dets in enumerate(frames):
        b = OBBs([d[0] for d in dets], [d[1] for d in dets], [d[2] for d in dets])
        rows = tracker.update(b, images(f) if images and with_frames else None)
        i, bx = [-1] * len(dets), [None] * len(dets)
        for r in rows:
            i[int(r[-1])] = int(r[5])
            bx[int(r[-1])] = [np.float32(v) for v in r[:5]]
        ids.append(i)
        boxes.append(bx)
    return ids, boxes


def write(outdir, name, frames, images, note):
    refs = [run(c, frames, images) for c in COLUMNS]
    with open(os.path.join(outdir, name + ".obb.txt"), "w") as f:
        f.write("# ultralytics %s, made by tools/reference/track_obb_goldens.py%s\n" % (ultralytics.__version__, note))
        f.write("# frame index cx cy w h r score, then per column id x y w h r: %s\n" % " ".join(c[0] for c in COLUMNS))
        for fr, dets in enumerate(frames):
            for k, (box, score, _) in enumerate(dets):
                f.write("%d %d %s %s" % (fr, k, " ".join(tg.fmt(v) for v in box), tg.fmt(score)))
                for ids, boxes in refs:
                    b = boxes[fr][k]
                    f.write(" %d %s" % (ids[fr][k], " ".join(tg.fmt(v) for v in b) if b else "- - - - -"))
                f.write("\n")
    counts = [len({i for fr in ids for i in fr if i >= 0}) for ids, _ in refs]
    print("%-10s %4d frames %5d detections, identities %s" % (name, len(frames), sum(map(len, frames)), counts))


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "tests/golden/track"
    assert ultralytics.__version__ == "8.4.190", "made with ultralytics 8.4.190 (see the header)"
    for seed, name in enumerate(["obb_cross", "obb_crowd"]):
        write(outdir, name, obb_stream(name, np.random.default_rng(3000 + seed)), None, "; no frames: no GMC")
    scene, frames = pan_stream(np.random.default_rng(3100))
    write(outdir, "obb_pan", frames, lambda f: tg.draw(scene[f]),
          "; frames: pan.scene.txt, GMC sparseOptFlow for botsort, deepocsort_gmc, tracktrack")


if __name__ == "__main__":
    main()
