#!/usr/bin/env python3
"""track_goldens.py — dev-time only: the tracker goldens of tests/golden/track/.

Makes deterministic synthetic detection streams with known ground truth
(objects that move, cross, get occluded, miss detections, jitter, enter and
leave, plus false positives), runs them through the reference ByteTrack of
Roboflow supervision 0.26 (sv.ByteTrack, the last supervision release that
ships it; later ones moved trackers to another package with a different
algorithm), and writes for each stream NAME:

  NAME.jsonl    the detections, in infer's video JSON Lines format (what
                `infer --detections` replays): frame (0-based), pts,
                detections sorted by decreasing score, boxes as float32
  NAME.gt.txt   the ground truth, MOTChallenge rows (frame from 1)
  NAME.ref.txt  per detection: "frame index direct public", frame 0-based,
                index in the frame's JSON array; direct = the identity of
                the confirmed track the detection updated inside ByteTrack
                (-1: none), public = what sv.ByteTrack.update_with_detections
                returns for it (-1: dropped).  The two differ only where
                supervision's final step (re-matching its tracks' filtered
                boxes to the detections with IoU > 0.5) drops a detection.

strix's tracker reports the direct association; tests/test_track.c compares
it with `direct` exactly and checks that every public id equals the direct
one or is -1.

Run:  /opt/strix-ref/bin/pip install --target /opt/sv026 --no-deps supervision==0.26.1
      PYTHONPATH=/opt/sv026 /opt/strix-ref/bin/python tools/reference/track_goldens.py tests/golden/track
"""
import json
import os
import sys

import numpy as np
import supervision as sv
from supervision.tracker.byte_tracker import core as bt_core
from supervision.tracker.byte_tracker.single_object_track import STrack

W, H = 1280, 720
NAMES = {0: "person", 2: "car", 16: "dog"}


def f32(x):
    return np.float32(x)


def fmt(x):
    """shortest decimal that reads back as the same float32 (as infer prints)"""
    return np.format_float_positional(np.float32(x), unique=True, trim="-")


class Obj:
    def __init__(self, oid, cls, x, y, w, h, vx, vy, t0, t1):
        self.oid, self.cls = oid, cls
        self.x, self.y, self.w, self.h, self.vx, self.vy = x, y, w, h, vx, vy
        self.t0, self.t1 = t0, t1  # present on frames t0 <= f < t1


def scenario(name, rng):
    """objects, frames, fps, and per-frame hooks (occlusion windows etc.)"""
    objs, hidden = [], {}  # hidden: oid -> set of frames without a detection
    lowscore = {}  # oid -> set of frames with a low score (partial occlusion)
    if name == "cross":
        n = 90
        objs.append(Obj(1, 0, 100, 300, 60, 150, 12.0, 0.3, 0, n))
        objs.append(Obj(2, 0, 1150, 310, 58, 148, -12.5, -0.2, 0, n))
        lowscore[1] = set(range(40, 50))
        fps = 30.0
    elif name == "occlusion":
        n = 150
        objs.append(Obj(1, 16, 80, 400, 120, 90, 6.0, 0.5, 0, n))
        objs.append(Obj(2, 0, 600, 200, 50, 140, -1.0, 1.0, 0, n))
        hidden[1] = set(range(50, 70))  # 20 frames unseen: within the lost buffer
        hidden[2] = set(range(40, 85))  # 45 frames: past it, comes back as a new track
        lowscore[1] = set(range(45, 50)) | set(range(70, 74))
        fps = 30.0
    elif name == "crowd":
        n = 300
        for i in range(24):  # dense: crossings, occlusions and identity switches
            w = rng.uniform(30, 90)
            h = w * rng.uniform(1.2, 2.8)
            objs.append(Obj(i + 1, int(rng.choice([0, 0, 2, 16])), rng.uniform(0, W - w), rng.uniform(0, H - h),
                            w, h, rng.uniform(-9, 9), rng.uniform(-5, 5), 0, n))
        fps = 30.0
    elif name == "enter_exit":
        n = 240
        oid = 1
        for k in range(10):
            t0 = int(rng.integers(0, 180))
            dur = int(rng.integers(25, 120))
            w = rng.uniform(40, 80)
            h = w * rng.uniform(1.5, 2.5)
            left = rng.random() < 0.5
            vx = rng.uniform(5, 14) * (1 if left else -1)
            x = -w * 0.5 if left else W - w * 0.5
            objs.append(Obj(oid, int(rng.choice([0, 2])), x, rng.uniform(50, H - h - 50), w, h, vx,
                            rng.uniform(-1, 1), t0, min(n, t0 + dur)))
            oid += 1
        fps = 25.0
    elif name == "burst":
        # groups of 3 to 16 objects appear together while others are tracked:
        # many new tracks in one frame (their identities follow the
        # reference's unmatched-list order, a Python set's order)
        n = 160
        oid = 1
        for t0, count in ((0, 6), (12, 16), (40, 3), (41, 9), (90, 12)):
            for _ in range(count):
                w = rng.uniform(25, 70)
                h = w * rng.uniform(1.2, 2.5)
                objs.append(Obj(oid, int(rng.choice([0, 2, 16])), rng.uniform(0, W - w), rng.uniform(0, H - h), w, h,
                                rng.uniform(-4, 4), rng.uniform(-2, 2), t0, min(n, t0 + int(rng.integers(30, 140)))))
                oid += 1
        fps = 30.0
    elif name == "slow_fps":
        # 10 fps: the lost buffer shrinks to int(10 / 30 * 30) = 10 frames
        n = 80
        objs.append(Obj(1, 0, 100, 200, 60, 160, 20.0, 2.0, 0, n))
        objs.append(Obj(2, 2, 900, 420, 160, 90, -15.0, -1.0, 0, n))
        hidden[1] = set(range(20, 29))  # 9 frames: kept
        hidden[2] = set(range(30, 44))  # 14 frames: lost for good, new identity
        fps = 10.0
    else:
        raise ValueError(name)
    return objs, n, fps, hidden, lowscore


def simulate(name, seed):
    rng = np.random.default_rng(seed)
    objs, n, fps, hidden, lowscore = scenario(name, rng)
    gt, frames = [], []
    for f in range(n):
        dets = []
        for o in objs:
            if not (o.t0 <= f < o.t1):
                continue
            t = f - o.t0
            x, y = o.x + o.vx * t, o.y + o.vy * t
            if name == "crowd":  # bounce off the borders
                span_x, span_y = W - o.w, H - o.h
                x = span_x - abs((x % (2 * span_x)) - span_x)
                y = span_y - abs((y % (2 * span_y)) - span_y)
            x1, y1, x2, y2 = max(x, 0), max(y, 0), min(x + o.w, W), min(y + o.h, H)
            if x2 - x1 < 4 or y2 - y1 < 4:
                continue
            gt.append((f + 1, o.oid, x1, y1, x2 - x1, y2 - y1))
            if f in hidden.get(o.oid, ()) or rng.random() < (0.1 if name in ("crowd", "enter_exit", "burst") else 0.0):
                continue  # missed
            j = rng.normal(0, 1.5, 4) * np.array([1, 1, 1, 1]) * max(1.0, (x2 - x1) / 60)
            bx = [x1 + j[0], y1 + j[1], x2 + j[2], y2 + j[3]]
            bx = [min(max(bx[0], 0), W - 2), min(max(bx[1], 0), H - 2), min(max(bx[2], 1), W), min(max(bx[3], 1), H)]
            if bx[2] <= bx[0] + 1 or bx[3] <= bx[1] + 1:
                continue
            low = f in lowscore.get(o.oid, ()) or rng.random() < (0.08 if name in ("crowd", "enter_exit") else 0.02)
            score = rng.uniform(0.15, 0.45) if low else rng.uniform(0.62, 0.97)
            dets.append((bx, score, o.cls))
        nfp = rng.poisson(0.4 if name in ("crowd", "enter_exit") else 0.1)
        for _ in range(nfp):  # false positives: random boxes, mostly low score
            w = rng.uniform(20, 80)
            h = rng.uniform(20, 120)
            x = rng.uniform(0, W - w)
            y = rng.uniform(0, H - h)
            s = rng.uniform(0.12, 0.55) if rng.random() < 0.85 else rng.uniform(0.6, 0.8)
            dets.append(([x, y, x + w, y + h], s, int(rng.choice([0, 2, 16]))))
        # as infer writes them: float32, by decreasing score
        dets = [([f32(v) for v in b], f32(s), c) for b, s, c in dets]
        dets.sort(key=lambda d: -float(d[1]))
        frames.append(dets)
    return frames, gt, fps


def run_reference(frames, fps):
    """direct and public identities per detection, from sv.ByteTrack"""
    tracker = sv.ByteTrack(track_activation_threshold=0.5, lost_track_buffer=30, minimum_matching_threshold=0.8,
                           frame_rate=int(fps), minimum_consecutive_frames=1)
    created, hits = [], {}

    orig_init, orig_update, orig_react, orig_act = STrack.__init__, STrack.update, STrack.re_activate, STrack.activate

    def init(self, *a, **k):
        orig_init(self, *a, **k)
        self._order = len(created)
        created.append(self)

    def update(self, new_track, frame_id):
        orig_update(self, new_track, frame_id)
        hits[id(self)] = new_track._order

    def react(self, new_track, frame_id):
        orig_react(self, new_track, frame_id)
        hits[id(self)] = new_track._order

    def act(self, kf, frame_id):
        orig_act(self, kf, frame_id)
        hits[id(self)] = self._order

    STrack.__init__, STrack.update, STrack.re_activate, STrack.activate = init, update, react, act
    out = []
    try:
        for dets in frames:
            created.clear()
            hits.clear()
            n = len(dets)
            xyxy = np.array([[float(v) for v in b] for b, _, _ in dets], dtype=np.float64).reshape(n, 4)
            conf = np.array([float(s) for _, s, _ in dets], dtype=np.float64)
            th = tracker.track_activation_threshold
            order = list(np.where(conf > th)[0]) + list(np.where((conf > 0.1) & (conf < th))[0])
            d = sv.Detections(xyxy=xyxy, confidence=conf, class_id=np.array([c for _, _, c in dets], dtype=int),
                              data={"idx": np.arange(n)})
            # what update_with_detections computes, with the tracks kept to read the direct hits
            res = tracker.update_with_detections(d)
            direct = [-1] * n
            for t in tracker.tracked_tracks:
                if t.is_activated and id(t) in hits and t.frame_id == tracker.frame_id:
                    direct[int(order[hits[id(t)]])] = int(t.external_track_id)
            public = [-1] * n
            for i, tid in zip(res.data.get("idx", []), res.tracker_id):
                public[int(i)] = int(tid)
            out.append((direct, public))
    finally:
        STrack.__init__, STrack.update, STrack.re_activate, STrack.activate = orig_init, orig_update, orig_react, orig_act
    return out


def write(outdir, name, frames, gt, fps, ref):
    with open(os.path.join(outdir, name + ".jsonl"), "w") as f:
        for i, dets in enumerate(frames):
            items = []
            for b, s, c in dets:
                items.append('{"class_id": %d, "class_name": "%s", "score": %s, "box": [%s]}'
                             % (c, NAMES[c], fmt(s), ", ".join(fmt(v) for v in b)))
            f.write('{"frame": %d, "pts": %s, "inferred": true, "detections": [%s]}\n'
                    % (i, json.dumps(round(i / fps, 6)), ", ".join(items)))
    with open(os.path.join(outdir, name + ".gt.txt"), "w") as f:
        for fr, oid, x, y, w, h in gt:
            f.write("%d,%d,%.3f,%.3f,%.3f,%.3f,1,-1,-1,-1\n" % (fr, oid, x, y, w, h))
    with open(os.path.join(outdir, name + ".ref.txt"), "w") as f:
        f.write("# frame index direct public  (supervision %s, sv.ByteTrack(track_activation_threshold=0.5, "
                "lost_track_buffer=30, minimum_matching_threshold=0.8, frame_rate=%d))\n" % (sv.__version__, int(fps)))
        for i, (direct, public) in enumerate(ref):
            for k, (a, b) in enumerate(zip(direct, public)):
                f.write("%d %d %d %d\n" % (i, k, a, b))


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "tests/golden/track"
    os.makedirs(outdir, exist_ok=True)
    assert sv.__version__.startswith("0.26"), "needs supervision 0.26 (see the header)"
    for seed, name in enumerate(["cross", "occlusion", "crowd", "enter_exit", "slow_fps", "burst"]):
        frames, gt, fps = simulate(name, 1000 + seed)
        ref = run_reference(frames, fps)
        write(outdir, name, frames, gt, fps, ref)
        ndet = sum(len(d) for d in frames)
        ids = {i for dr, _ in ref for i in dr if i >= 0}
        diff = sum(1 for dr, pb in ref for a, b in zip(dr, pb) if a != b)
        print("%-10s %4d frames %5d detections %3d identities; public differs from direct on %d"
              % (name, len(frames), ndet, len(ids), diff))


if __name__ == "__main__":
    main()
