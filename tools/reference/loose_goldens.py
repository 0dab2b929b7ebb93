#!/usr/bin/env python3
"""loose_goldens.py — dev-time only: the goldens of TrackTrack's recovered
detections (Ultralytics 8.4.190's trackers/track_tracker.py: compute_dets_del
and TRACKTRACK.update's dets_del).

  tests/golden/tasks/recovered.txt  compute_dets_del on seeded heads: the
      head rows come from recovered_inputs (splitmix64, repeated in
      tests/test_tasks.c), clusters of jittered boxes so that NMS at IoU 0.7
      drops boxes that NMS at 0.95 keeps; for each case
        "case id anchors nc obb max_det conf agnostic seed"
        "tight n"           the detections NMS at 0.7 kept
        "rec i v0 v1 v2 v3 score cls"  recovered detection i: x1 y1 x2 y2
                            (obb: the regularised cx cy w h and then r on
                            the next field, "rec i cx cy w h r score cls")
      as the predictor's postprocess makes them, in tensor pixels (no
      letterbox to undo), then box_iou against the tight ones < 0.97.
  tests/golden/track/loose.tracktrack.txt, loose_obb.tracktrack.txt
      TRACKTRACK (tracktrack.yaml) on a
      synthetic stream of people crossing: the candidates of each frame go
      through non_max_suppression at IoU 0.7 (the detections) and 0.95
      (then deduplicated as compute_dets_del: the recovered ones); per
      frame "frame f", then per detection "det x1 y1 x2 y2 score id
      id_nodel bx1 by1 bx2 by2" and per recovered detection "rec x1 y1 x2
      y2 score id - bx1 by1 bx2 by2": the identity TRACKTRACK returned for
      it given dets_del, then (detections) without them, then the row's box
      ("- - - -": none; -1: no identity); loose_obb the same people as
      turning rotated boxes (rotated NMS, dedup on OBB.xyxy), the boxes
      "cx cy w h r" (the rows' x y w h angle).  A row whose idx is -1 (a track a
      recovered detection updated) is attributed to that detection.

Needs PyTorch (non_max_suppression): /tmp/coldref (ultralytics 8.4.190 +
torch):  /tmp/coldref/bin/python tools/reference/loose_goldens.py tests/golden
"""
import os
import sys

import numpy as np
import torch

from ultralytics.trackers import track_tracker
from ultralytics.trackers.track_tracker import TRACKTRACK, TTSTrack
from ultralytics.utils import YAML, IterableSimpleNamespace, ops
from ultralytics.utils.metrics import box_iou
from ultralytics.utils.nms import non_max_suppression

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from task_goldens import Gen, distinct_scores  # noqa: E402  (splitmix64, as tests/test_tasks.c)

LOOSE = track_tracker._LOOSE_NMS_IOU
DEDUP = track_tracker._LOOSE_NMS_DEDUP_IOU


def g9(x):
    """the shortest decimal that reads back as the same float32"""
    return np.format_float_positional(np.float32(x), unique=True, trim="-")


# id, anchors, nc, obb, max_det, conf, agnostic, seed
CASES = [
    (0, 400, 3, 0, 300, 0.25, 0, 71),
    (1, 600, 5, 0, 300, 0.1, 1, 72),
    (2, 300, 2, 0, 20, 0.3, 0, 73),
    (3, 400, 3, 1, 300, 0.25, 0, 74),
]


def recovered_inputs(g, a, nc, obb):
    """Rows [A, 4 + nc + obb]: a/8 cluster boxes (cx, cy in eighths of 0..256,
    w, h 8..72 px), each anchor one of them (u24 % clusters) moved by
    -2..2 px and resized by -2..2 px in eighths; scores as
    task_goldens.py's topk_inputs (distinct); obb: the angle (unit() - 0.5)
    x 1.5 rad."""
    k = max(a // 8, 1)
    cl = [(g.u24() % 2048 / 8.0, g.u24() % 2048 / 8.0, 8 + g.u24() % 512 / 8.0, 8 + g.u24() % 512 / 8.0)
          for _ in range(k)]
    rows = np.zeros((a, 4 + nc + obb), np.float32)
    for i in range(a):
        c = cl[g.u24() % k]
        for q in range(4):
            rows[i, q] = c[q] + (int(g.u24() % 33) - 16) / 8.0
    distinct_scores(g, rows, a, nc)
    if obb:
        for i in range(a):
            rows[i, 4 + nc] = (g.unit() - np.float32(0.5)) * np.float32(1.5)
    return rows


def nms(rows, conf, iou, max_det, nc, agnostic, obb):
    """the predictor's postprocess in tensor pixels: [n, 6] xyxy conf cls, or
    obb [n, 7] regularised xywhr conf cls, and the xyxy box_iou sees"""
    pred = torch.from_numpy(rows.T.copy())[None]  # NMS converts in place: a fresh tensor per call
    out = non_max_suppression(pred, conf, iou, None, bool(agnostic), max_det=max_det, nc=nc, rotated=bool(obb))[0]
    if not obb:
        return out, out[:, :4]
    rb = ops.regularize_rboxes(torch.cat([out[:, :4], out[:, -1:]], dim=-1))
    data = torch.cat([rb, out[:, 4:6]], dim=-1)
    corners = ops.xywhr2xyxyxyxy(rb)
    xyxy = torch.stack([corners[..., 0].min(1).values, corners[..., 1].min(1).values,
                        corners[..., 0].max(1).values, corners[..., 1].max(1).values], -1)
    return data, xyxy


def dets_del(loose, loose_xyxy, tight_xyxy):
    """compute_dets_del's selection"""
    if len(loose) == 0 or len(tight_xyxy) == 0:
        return loose[:0]
    mask = box_iou(loose_xyxy, tight_xyxy).max(dim=1).values < DEDUP
    return loose[mask]


def make_engine(out):
    lines = []
    for cid, a, nc, obb, max_det, conf, agnostic, seed in CASES:
        rows = recovered_inputs(Gen(seed), a, nc, obb)
        tight, txy = nms(rows, conf, 0.7, max_det, nc, agnostic, obb)
        loose, lxy = nms(rows, conf, LOOSE, max_det, nc, agnostic, obb)
        rec = dets_del(loose, lxy, txy)
        assert len(rec) > 2, (cid, len(rec))
        lines.append("case %d %d %d %d %d %s %d %d" % (cid, a, nc, obb, max_det, g9(conf), agnostic, seed))
        lines.append("tight %d" % len(tight))
        for i, r in enumerate(rec):
            lines.append("rec %d %s" % (i, " ".join(g9(v) for v in r.tolist())))
    open(os.path.join(out, "tasks", "recovered.txt"), "w").write("\n".join(lines) + "\n")


# ------------------------------------------------------------ the stream

FRAMES = 80


def stream_candidates(f, rng, obb):
    """frame f's candidate boxes: four people walking in two pairs that
    cross (their boxes overlapping with IoU up to ~0.9 while they pass),
    each box with two jittered copies scoring less (what NMS removes); obb:
    turning slowly, rows cx cy w h score angle"""
    people = [(60 + 9.0 * f, 200, 70, 170, 0.9), (780 - 9.0 * f, 206, 68, 166, 0.85),
              (100 + 7.5 * f, 470, 64, 150, 0.8), (700 - 7.5 * f, 474, 62, 148, 0.88)]
    rows = []
    for k, (x, y, w, h, s) in enumerate(people):
        x = x + rng.normal(0, 1.0)
        y = y + rng.normal(0, 1.0)
        sc = min(max(s + rng.normal(0, 0.04), 0.3), 0.99)
        r = 0.2 * k + 0.01 * f
        boxes = [(x, y, x + w, y + h, sc, r)]
        for _ in range(2):
            d = rng.normal(0, 2.5, 4)
            boxes.append((x + d[0], y + d[1], x + w + d[2], y + h + d[3], sc * rng.uniform(0.6, 0.97),
                          r + rng.normal(0, 0.03)))
        for x1, y1, x2, y2, sc, r in boxes:
            x1, y1, x2, y2 = np.float32(x1), np.float32(y1), np.float32(x2), np.float32(y2)
            rows.append([(x1 + x2) / 2, (y1 + y2) / 2, x2 - x1, y2 - y1, sc] + ([r] if obb else []))
    return np.array(rows, np.float32)


class Boxes:
    """What TRACKTRACK reads of Boxes (xyxy, conf, cls, xywh in float32) or,
    obb, of OBB (xywhr) after .cpu().numpy(), from data rows as
    non_max_suppression (and the obb predictor) leave them"""

    def __init__(self, data, obb):
        self.data, self.obb = data, obb
        self.conf = data[:, -2].astype(np.float32)
        self.cls = data[:, -1].astype(np.float32)
        if obb:
            self.xywhr = data[:, :5].astype(np.float32)
            return
        x = data[:, :4].astype(np.float32)
        self.xywh = np.stack([(x[:, 0] + x[:, 2]) / np.float32(2), (x[:, 1] + x[:, 3]) / np.float32(2),
                              x[:, 2] - x[:, 0], x[:, 3] - x[:, 1]], axis=1).astype(np.float32)

    def __len__(self):
        return len(self.conf)

    def __getitem__(self, m):
        return Boxes(self.data[m], self.obb)


def stream(out, obb):
    rng = np.random.default_rng(36 + obb)
    frames = []
    for f in range(FRAMES):
        rows = stream_candidates(f, rng, obb)
        tight, txy = nms(rows, 0.25, 0.7, 300, 1, 0, obb)
        loose, lxy = nms(rows, 0.25, LOOSE, 300, 1, 0, obb)
        frames.append((tight.numpy(), dets_del(loose, lxy, txy).numpy()))
    assert sum(len(d) for _, d in frames) > 10

    # attribute a row of idx -1 to the recovered detection that updated its track
    created = []
    init, upd, rea = TTSTrack.__init__, TTSTrack.update, TTSTrack.re_activate

    def init_hook(self, *a, **k):
        init(self, *a, **k)
        created.append(self)

    def upd_hook(self, new, frame_id):
        self.src = new
        upd(self, new, frame_id)

    def rea_hook(self, new, frame_id, new_id=False):
        self.src = new
        rea(self, new, frame_id, new_id)

    TTSTrack.__init__, TTSTrack.update, TTSTrack.re_activate = init_hook, upd_hook, rea_hook
    path = os.path.join(os.path.dirname(track_tracker.__file__), "..", "cfg", "trackers", "tracktrack.yaml")
    cfg = IterableSimpleNamespace(**YAML.load(path))

    def run(with_del):
        tr = TRACKTRACK(cfg)
        res = []
        for tight, rec in frames:
            created.clear()
            b = Boxes(tight, obb)
            dd = None
            if with_del and len(rec):
                rb = Boxes(rec, obb)
                dd = (rb.xywhr if obb else rb.xywh, rb.conf, rb.cls)
            rows = tr.update(b, None, dets_del=dd)
            ids, boxes = [-1] * (len(tight) + len(rec)), [None] * (len(tight) + len(rec))
            rec_objs = []
            if dd is not None:
                kept = np.nonzero(dd[1] > cfg.track_high_thresh)[0]
                rec_objs = list(zip(created[len(created) - len(kept):], kept)) if len(kept) else []
            outs = [t for t in tr.tracked_stracks if t.is_activated and t.frame_id == tr.frame_id]
            assert len(outs) == len(rows)
            for t, r in zip(outs, rows):
                i = int(r[-1])
                if i < 0:
                    i = len(tight) + [j for o, j in rec_objs if o is t.src][0]
                ids[i] = int(r[5 if obb else 4])
                boxes[i] = r[:5 if obb else 4]
            res.append((ids, boxes))
        return res

    with_del, without = run(True), run(False)
    TTSTrack.__init__, TTSTrack.update, TTSTrack.re_activate = init, upd, rea
    differ = sum(a != b for (x, _), (y, _) in zip(with_del, without) for a, b in zip(x, y))
    assert differ > 0, "the recovered detections change nothing"
    lines = []
    k = 5 if obb else 4
    for f, ((tight, rec), (ids, boxes), (ids0, _)) in enumerate(zip(frames, with_del, without)):
        lines.append("frame %d" % f)
        for i, r in enumerate(list(tight) + list(rec)):
            det = i < len(tight)
            bx = " ".join(g9(v) for v in boxes[i]) if boxes[i] is not None else " ".join("-" * k)
            lines.append("%s %s %s %d %s %s" % ("det" if det else "rec", " ".join(g9(v) for v in r[:k]), g9(r[k]),
                                                ids[i], str(ids0[i]) if det else "-", bx))
    name = "loose_obb.tracktrack.txt" if obb else "loose.tracktrack.txt"
    open(os.path.join(out, "track", name), "w").write("\n".join(lines) + "\n")
    print("%s: %d frames, %d recovered, %d identities differ without them" %
          (name, FRAMES, sum(len(d) for _, d in frames), differ))


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/golden"
    make_engine(out)
    stream(out, 0)
    stream(out, 1)


if __name__ == "__main__":
    main()
