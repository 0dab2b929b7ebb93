#!/usr/bin/env python3
"""cli_track_boxes.py — dev-time only: the tracked-box golden of tests/cli_track.sh.

tests/cli_track.sh makes a 320 x 240, 25 fps, 300-frame clip (ffmpeg's
testsrc2) and replays detections on it with `infer --detections`.  This
writes, in tests/golden/track/:

  edges.jsonl    detections for that clip, in infer's JSON Lines format:
                 objects that walk out of the frame through its left, right
                 and bottom edges (their boxes clipped to the frame, as a
                 detector's are), so the trackers' boxes run past the edges
  edges.ref.txt  "tracker frame track_id x1 y1 x2 y2" for every detection
                 Ultralytics 8.4.190's BYTETracker and BOTSORT (gmc_method
                 none: the clip's pixels come from the local ffmpeg) return:
                 the row's box (tracker.update, float32) clipped to the
                 frame as Results.update does (ops.clip_boxes), shortest
                 decimals, i.e. the box of a tracked result of `yolo track`

  /tmp/ulref/bin/python tools/reference/cli_track_boxes.py tests/golden/track
(the venv of track_goldens.py, whose helpers this imports).
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import track_goldens as tg  # noqa: E402

W, H, FPS, N = 320, 240, 25, 300


def detections():
    frames = []
    for f in range(N):
        dets = []
        if 20 <= f < 120:  # a dog walking right, out through the right edge
            x = 150 + 2.5 * f - 50
            dets.append(([x, 100, x + 60, 160], 0.9, 16))
        if 40 <= f < 110:  # a person walking left, out through the left edge
            x = 120 - 2 * (f - 40)
            dets.append(([x, 30, x + 30, 100], 0.8, 0))
        if 150 <= f < 230:  # a car driving down, out through the bottom
            y = 100 + 2 * (f - 150)
            dets.append(([200, y, 260, y + 40], 0.7, 2))
        if 180 <= f < 200:  # a low-score box: the second association only
            dets.append(([20, 20, 40, 50], 0.2, 0))
        out = []
        for b, s, c in dets:
            b = [min(max(b[0], 0), W), min(max(b[1], 0), H), min(max(b[2], 0), W), min(max(b[3], 0), H)]
            if b[2] - b[0] >= 4 and b[3] - b[1] >= 4:
                out.append(([np.float32(v) for v in b], np.float32(s), c))
        out.sort(key=lambda d: -float(d[1]))
        frames.append(out)
    return frames


def jfmt(x):
    """a float32 as infer's JSON writes it (strix_json_float): the shortest
    decimal that reads back as the same float32, whole numbers without a
    point, Python's exponent form for small and large ones"""
    t = str(np.float32(x))
    return t[:-2] if t.endswith(".0") else t


def run(tracker, frames):
    rows_out = []
    for f, dets in enumerate(frames):
        b = tg.Boxes([[float(v) for v in bx] for bx, _, _ in dets], [float(s) for _, s, _ in dets],
                     [c for _, _, c in dets])
        rows = tracker.update(b, None)
        for r in sorted(rows, key=lambda r: int(r[-1])):
            box = np.array(r[:4], dtype=np.float32)
            box[[0, 2]] = box[[0, 2]].clip(0, W)  # Results.update: ops.clip_boxes, in float32
            box[[1, 3]] = box[[1, 3]].clip(0, H)
            rows_out.append((f, int(r[4]), box))
    return rows_out


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else "tests/golden/track"
    frames = detections()
    names = {0: "person", 2: "car", 16: "dog"}
    with open(os.path.join(outdir, "edges.jsonl"), "w") as f:
        for i, dets in enumerate(frames):
            items = ['{"class_id": %d, "class_name": "%s", "score": %s, "box": [%s]}'
                     % (c, names[c], tg.fmt(s), ", ".join(tg.fmt(v) for v in b)) for b, s, c in dets]
            f.write('{"frame": %d, "pts": %s, "inferred": true, "detections": [%s]}\n'
                    % (i, tg.fmt(i / FPS) if i % FPS else str(i // FPS), ", ".join(items)))
    clipped = 0
    with open(os.path.join(outdir, "edges.ref.txt"), "w") as f:
        for name, tracker in (("bytetrack", tg.BYTETracker(tg.cfg("bytetrack"))),
                              ("botsort", tg.BOTSORT(tg.cfg("botsort", gmc_method="none")))):
            for fr, tid, box in run(tracker, frames):
                f.write("%s %d %d %s\n" % (name, fr, tid, " ".join(jfmt(v) for v in box)))
                clipped += bool((box == 0).any() or box[2] == W or box[3] == H)
    print("edges: %d frames; %d tracked boxes on an edge" % (N, clipped))


if __name__ == "__main__":
    main()
