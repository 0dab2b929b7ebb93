#!/usr/bin/env python3
"""task_goldens.py — dev-time only: the task post-processing goldens of
tests/golden/tasks/, from Ultralytics 8.4.190's own functions (torch on the
CPU, opencv-python 5.0) on seeded synthetic inputs.

The inputs are not stored: both this script and tests/test_tasks.c draw them
from the same generator (splitmix64; unit() = (u64 >> 40) / 2^24, exact in
float32; every input is built from integers and unit() with exact float32
arithmetic), so the files hold only Ultralytics' outputs:

  masks.txt     per case "case ID in_h in_w src_h src_w c n seed", then per
                box i: "box i x1 y1 x2 y2" (input pixels), "def i RUNS" /
                "ret i RUNS": process_mask(upsample=True) at the input and
                process_mask_native at the source, as run lengths of the
                flattened mask (zeros first); "xy i K x y ...": Results'
                masks.xy of the default mask (masks2segments "all" +
                scale_coords to the source), "rxy i K ...": the same of the
                retina mask; "draw i RUNS": scale_masks(mask) > 0.5 at the
                source, as Annotator.masks draws the default mask
  contours.txt  per mask "mask ID h w density seed", then cv2.findContours
                (RETR_EXTERNAL, CHAIN_APPROX_SIMPLE): "contour K x y ...";
                "all K ...", "largest K ...": masks2segments
  obb.txt       "probiou i j v" (batch_probiou of the boxes), "nms THR K idx...",
                "reg i x y w h r" (regularize_rboxes), "corners i x1 y1 ... y4"
                (xywhr2xyxyxyxy), "scaled i x y w h r" (scale_boxes xywh=True)
  kpts.txt      "kpt i j x y v" (scale_coords of keypoints), "xyn i x y"
                (scale_coords(normalize=True) of points)
  probs.txt     "probs N v...", "top5 K idx...", "top1 idx" of 30 probabilities
                in sixteenths (ties: torch orders them arbitrarily past 16
                values, so the test compares the top-5 values there); "top5q",
                "top1q" of 1000 unit() values (no ties at the top)
  summary.json  Results.summary() of a segment (case 0's default masks, the
                empty ones dropped), pose (kpts.txt's), obb (the first 4 of
                obb.txt's boxes) and classify (probs.txt's 1000) result, and
                the lines Results.save_txt writes for each
  draw_masks.txt "draw H W bytes...": Annotator.masks of 3 masks over a
                random RGB image (classes 0, 5, 7; alpha 0.5), the RGB result
  topk.txt      YOLO26's one-to-one selection of task rows (Detect.postprocess,
                then non_max_suppression(end2end=True) as the predictors call
                it): per case "case ID A nc extra max_det conf agnostic seed
                classes...", then "det i x1 y1 x2 y2 score class anchor" (the
                first extra channel, the anchor index: the rest of the row follows)

Run: /tmp/coldref/bin/python tools/reference/task_goldens.py tests/golden/tasks
"""
import json
import os
import sys

import numpy as np
import torch

from ultralytics.engine.results import Results
from ultralytics.utils import ops
from ultralytics.utils.metrics import batch_probiou
from ultralytics.utils.nms import TorchNMS

M64 = (1 << 64) - 1


class Gen:
    """splitmix64, as tests/testlib.h and tests/test_tasks.c."""

    def __init__(self, seed):
        self.x = seed & M64

    def u64(self):
        self.x = (self.x + 0x9E3779B97F4A7C15) & M64
        z = self.x
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M64
        return z ^ (z >> 31)

    def u24(self):
        return self.u64() >> 40

    def unit(self):
        return np.float32(self.u24() / 16777216.0)


def g9(v):
    return "%.9g" % float(v)


def runs(mask):
    flat = mask.reshape(-1).astype(np.uint8)
    out, cur, n = [], 0, 0
    for v in flat:
        if v != cur:
            out.append(n)
            cur, n = v, 0
        n += 1
    out.append(n)
    return out


def mask_inputs(g, c, mh, mw, n, in_h, in_w):
    """protos: blocks of 4x4 proto pixels, each (unit - 0.5) * 4; coeffs
    (unit - 0.5) * 2; boxes in eighths of input pixels."""
    bh, bw = (mh + 3) // 4, (mw + 3) // 4
    coarse = np.zeros((c, bh, bw), np.float32)
    for k in range(c):
        for y in range(bh):
            for x in range(bw):
                coarse[k, y, x] = (g.unit() - np.float32(0.5)) * np.float32(4)
    protos = np.repeat(np.repeat(coarse, 4, 1), 4, 2)[:, :mh, :mw].copy()
    coeffs = np.zeros((n, c), np.float32)
    for i in range(n):
        for k in range(c):
            coeffs[i, k] = (g.unit() - np.float32(0.5)) * np.float32(2)
    boxes = np.zeros((n, 4), np.float32)
    for i in range(n):
        x1 = g.u24() % (in_w * 8) / 8.0 - 8
        y1 = g.u24() % (in_h * 8) / 8.0 - 8
        x2 = x1 + 2 + g.u24() % (in_w * 4) / 8.0
        y2 = y1 + 2 + g.u24() % (in_h * 4) / 8.0
        boxes[i] = (x1, y1, x2, y2)
    return protos, coeffs, boxes


MASK_CASES = [  # id, in_h, in_w, src_h, src_w, c, n, seed
    (0, 160, 160, 77, 101, 32, 5, 11),   # f = 4
    (1, 160, 160, 156, 160, 32, 4, 12),  # f = 2
    (2, 96, 128, 150, 200, 32, 4, 13),   # f = 1, rect tensor, upscaled source
    (3, 64, 64, 200, 37, 8, 3, 14),      # tall thin source
]


def make_masks(out):
    lines = []
    for cid, in_h, in_w, src_h, src_w, c, n, seed in MASK_CASES:
        g = Gen(seed)
        mh, mw = in_h // 4, in_w // 4
        protos, coeffs, boxes = mask_inputs(g, c, mh, mw, n, in_h, in_w)
        lines.append(f"case {cid} {in_h} {in_w} {src_h} {src_w} {c} {n} {seed}")
        tp, tc, tb = torch.from_numpy(protos), torch.from_numpy(coeffs), torch.from_numpy(boxes.copy())
        dm = ops.process_mask(tp, tc, tb.clone(), (in_h, in_w), upsample=True)
        sb = ops.scale_boxes((in_h, in_w), tb.clone(), (src_h, src_w))
        rm = ops.process_mask_native(tp, tc, sb, (src_h, src_w))
        orig = np.zeros((src_h, src_w, 3), np.uint8)
        for i in range(n):
            lines.append("box %d %s" % (i, " ".join(g9(v) for v in boxes[i])))
            lines.append("def %d %s" % (i, " ".join(map(str, runs(dm[i].numpy())))))
            lines.append("ret %d %s" % (i, " ".join(map(str, runs(rm[i].numpy())))))
            for tag, m in (("xy", dm[i : i + 1]), ("rxy", rm[i : i + 1])):
                # Results.masks.xy of a one-mask result (each mask is independent)
                r = Results(orig, path="", names={0: "a"}, boxes=torch.zeros((1, 6)), masks=m)
                xy = r.masks.xy[0]
                lines.append("%s %d %d %s" % (tag, i, len(xy), " ".join(g9(v) for v in xy.reshape(-1))))
            drawn = ops.scale_masks(dm[i][None, None].float(), (src_h, src_w))[0, 0] > 0.5
            lines.append("draw %d %s" % (i, " ".join(map(str, runs(drawn.numpy())))))
    open(os.path.join(out, "masks.txt"), "w").write("\n".join(lines) + "\n")


def noise_mask(g, h, w, density):
    m = np.zeros((h, w), np.uint8)
    for y in range(h):
        for x in range(w):
            m[y, x] = 1 if g.u24() % 100 < density else 0
    return m


def ring_mask():
    """Nested components: a ring, an island in its hole, a ring in the island's hole, a dot; a diagonal chain."""
    m = np.zeros((24, 30), np.uint8)
    m[1:22, 1:22] = 1
    m[3:20, 3:20] = 0
    m[5:18, 5:18] = 1
    m[7:16, 7:16] = 0
    m[10:12, 10:12] = 1
    for k in range(6):
        m[2 + k, 23 + k % 7] = 1
    m[23, 29] = 1
    m[0, 25:30] = 1
    return m


def make_contours(out):
    import cv2

    lines = []
    cases = [(0, 24, 30, -1, 0)]
    seed = 100
    for h, w in ((1, 1), (1, 7), (7, 1), (9, 13), (16, 16), (23, 31), (40, 33)):
        for density in (10, 35, 50, 65, 90):
            seed += 1
            cases.append((len(cases), h, w, density, seed))
    for mid, h, w, density, s in cases:
        m = ring_mask() if density < 0 else noise_mask(Gen(s), h, w, density)
        lines.append(f"mask {mid} {h} {w} {density} {s}")
        for c in cv2.findContours(m, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)[0]:
            c = c.reshape(-1, 2)
            lines.append("contour %d %s" % (len(c), " ".join(str(int(v)) for v in c.reshape(-1))))
        for strategy in ("all", "largest"):
            seg = ops.masks2segments(m[None], strategy=strategy)[0]
            lines.append("%s %d %s" % (strategy, len(seg), " ".join(g9(v) for v in seg.reshape(-1))))
    open(os.path.join(out, "contours.txt"), "w").write("\n".join(lines) + "\n")


def obb_inputs(g, n):
    b = np.zeros((n, 5), np.float32)
    s = np.zeros(n, np.float32)
    for i in range(n):
        b[i, 0] = g.unit() * np.float32(64)
        b[i, 1] = g.unit() * np.float32(64)
        b[i, 2] = np.float32(1) + g.unit() * np.float32(32)
        b[i, 3] = np.float32(1) + g.unit() * np.float32(32)
        b[i, 4] = (g.unit() - np.float32(0.5)) * np.float32(16)
        s[i] = g.unit()
    s[5] = s[3]  # a tie
    return b, s


def make_obb(out):
    lines = []
    n = 40
    b, s = obb_inputs(Gen(21), n)
    tb, ts = torch.from_numpy(b), torch.from_numpy(s)
    iou = batch_probiou(tb, tb)
    for i in range(n):
        for j in range(n):
            lines.append("probiou %d %d %s" % (i, j, g9(iou[i, j])))
    for thr in (0.05, 0.2, 0.45, 0.7, 0.9):
        keep = TorchNMS.fast_nms(tb, ts.clone(), thr, iou_func=batch_probiou).tolist()
        lines.append("nms %s %d %s" % (g9(np.float32(thr)), len(keep), " ".join(map(str, keep))))
    reg = ops.regularize_rboxes(tb.clone())
    corners = ops.xywhr2xyxyxyxy(tb.clone())
    scaled = tb.clone()
    scaled[:, :4] = ops.scale_boxes((64, 96), scaled[:, :4], (150, 111), xywh=True)
    for i in range(n):
        lines.append("reg %d %s" % (i, " ".join(g9(v) for v in reg[i])))
        lines.append("corners %d %s" % (i, " ".join(g9(v) for v in corners[i].reshape(-1))))
        lines.append("scaled %d %s" % (i, " ".join(g9(v) for v in scaled[i])))
    open(os.path.join(out, "obb.txt"), "w").write("\n".join(lines) + "\n")
    return b, s


def kpt_inputs(g, n, k):
    """x, y in [-16, 176) in eighths of a pixel, visibility unit()."""
    a = np.zeros((n, k, 3), np.float32)
    for i in range(n):
        for j in range(k):
            a[i, j, 0] = g.u24() % (192 * 8) / 8.0 - 16
            a[i, j, 1] = g.u24() % (192 * 8) / 8.0 - 16
            a[i, j, 2] = g.unit()
    return a


def make_kpts(out):
    lines = []
    a = kpt_inputs(Gen(31), 3, 17)
    # the pose predictor: scale_coords(img (160, 128) -> orig (333, 250)) of torch keypoints
    k = ops.scale_coords((160, 128), torch.from_numpy(a.copy()), (333, 250))
    for i in range(3):
        for j in range(17):
            lines.append("kpt %d %d %s" % (i, j, " ".join(g9(v) for v in k[i, j])))
    # masks.xyn: numpy points, normalize=True, orig (90, 211) from (96, 160)
    pts = a[0, :, :2].copy()
    xyn = ops.scale_coords((96, 160), pts, (90, 211), normalize=True)
    for j in range(17):
        lines.append("xyn %d %s" % (j, " ".join(g9(v) for v in xyn[j])))
    open(os.path.join(out, "kpts.txt"), "w").write("\n".join(lines) + "\n")
    return a, k


def make_probs(out):
    g = Gen(41)
    p = np.array([np.float32(g.u24() % 16) / np.float32(16) for _ in range(30)], np.float32)  # many ties
    r = Results(np.zeros((8, 8, 3), np.uint8), path="", names={i: f"c{i}" for i in range(30)}, probs=torch.from_numpy(p))
    q = np.array([g.unit() for _ in range(1000)], np.float32)  # ImageNet-sized, no ties at the top
    rq = Results(np.zeros((8, 8, 3), np.uint8), path="", names={i: f"c{i}" for i in range(1000)}, probs=torch.from_numpy(q))
    assert len(set(q[rq.probs.top5].tolist())) == 5
    lines = [
        "probs %d %s" % (len(p), " ".join(g9(v) for v in p)),
        "top5 5 %s" % " ".join(map(str, r.probs.top5)),
        "top1 %d" % r.probs.top1,
        "top5q 5 %s" % " ".join(map(str, rq.probs.top5)),
        "top1q %d" % rq.probs.top1,
    ]
    open(os.path.join(out, "probs.txt"), "w").write("\n".join(lines) + "\n")
    return rq


def make_summary(out, obb_b, obb_s, kpts_src, cls_result):
    orig = np.zeros((333, 250, 3), np.uint8)
    names = {i: f"c{i}" for i in range(1000)}
    # segment: case 0's default masks through Results
    cid, in_h, in_w, src_h, src_w, c, n, seed = MASK_CASES[0]
    g = Gen(seed)
    protos, coeffs, boxes = mask_inputs(g, c, in_h // 4, in_w // 4, n, in_h, in_w)
    dm = ops.process_mask(torch.from_numpy(protos), torch.from_numpy(coeffs), torch.from_numpy(boxes.copy()),
                          (in_h, in_w), upsample=True)
    keep = dm.amax((-2, -1)) > 0
    seg = Results(np.zeros((src_h, src_w, 3), np.uint8), path="", names=names,
                  boxes=torch.tensor([[0, 0, 1, 1, 0.5, 0]] * int(keep.sum())), masks=dm[keep])
    pose = Results(orig, path="", names=names, boxes=torch.tensor([[0, 0, 1, 1, 0.5, 0]] * 3),
                   keypoints=kpts_src)
    obb = Results(orig, path="", names=names,
                  obb=torch.cat([torch.from_numpy(obb_b[:4]), torch.from_numpy(obb_s[:4, None]),
                                 torch.zeros((4, 1))], 1))
    txt = {}
    for name, r in (("segment", seg), ("pose", pose), ("obb", obb), ("classify", cls_result)):
        path = os.path.join(out, "_save_txt.tmp")
        if os.path.exists(path):
            os.remove(path)
        r.save_txt(path)
        txt[name] = open(path).read().splitlines()
        os.remove(path)
    doc = {
        "save_txt": txt,
        "segment": [r["segments"] for r in seg.summary()],
        "segment_kept": [int(i) for i in torch.nonzero(keep).view(-1)],
        "pose": [r["keypoints"] for r in pose.summary()],
        "obb": [r["box"] for r in obb.summary()],
        "classify": cls_result.summary(),
    }
    open(os.path.join(out, "summary.json"), "w").write(json.dumps(doc) + "\n")


def make_drawing(out):
    """Annotator.masks on a random image: 3 masks, classes 0, 5, 7, alpha 0.5."""
    from ultralytics.utils.plotting import Annotator, colors

    g = Gen(51)
    h, w = 17, 23
    rgb = np.array([g.u24() % 256 for _ in range(h * w * 3)], np.uint8).reshape(h, w, 3)
    masks = np.array([1 if g.u24() % 100 < 40 else 0 for _ in range(3 * h * w)], np.uint8).reshape(3, h, w)
    cls = [0, 5, 7]
    a = Annotator(np.ascontiguousarray(rgb[..., ::-1]))  # the Annotator draws on BGR, with BGR colours
    a.masks(torch.from_numpy(masks), colors=[colors(c, True) for c in cls])
    res = np.asarray(a.result())[..., ::-1]
    open(os.path.join(out, "draw_masks.txt"), "w").write(
        "draw %d %d %s\n" % (h, w, " ".join(str(int(v)) for v in res.reshape(-1))))


# id, anchors, nc, extra channels, max_det, conf, agnostic, seed, classes (empty: all)
TOPK_CASES = [
    (0, 500, 7, 3, 300, 0.25, 0, 61, []),
    (1, 200, 80, 1, 20, 0.5, 0, 62, [1, 3, 5, 40]),
    (2, 900, 3, 51, 500, 0.1, 1, 63, []),
    (3, 50, 4, 32, 300, 0.0, 0, 64, [2]),
]


def distinct_scores(g, rows, a, nc):
    """rows[:, 4:4 + nc] = (p + 1) / (A nc + 1) for p a Fisher-Yates
    permutation of 0..A nc - 1: all distinct"""
    n = a * nc
    perm = list(range(n))
    for i in range(n - 1, 0, -1):
        j = g.u64() % (i + 1)
        perm[i], perm[j] = perm[j], perm[i]
    rows[:, 4:4 + nc] = (np.array(perm, np.float32).reshape(a, nc) + np.float32(1)) / np.float32(n + 1)


def topk_inputs(g, a, nc, extra):
    """Rows [A, 4 + nc + extra]: cx, cy, w, h in eighths of a pixel (their
    x1 y1 x2 y2 exact in float32), scores (p + 1) / (A nc + 1) for p a
    Fisher-Yates permutation of 0..A nc - 1 (distinct: torch.topk orders
    ties arbitrarily), then the anchor index and unit()s."""
    rows = np.zeros((a, 4 + nc + extra), np.float32)
    for i in range(a):
        rows[i, 0] = g.u24() % 2048 / 8.0
        rows[i, 1] = g.u24() % 2048 / 8.0
        rows[i, 2] = 1 + g.u24() % 512 / 8.0
        rows[i, 3] = 1 + g.u24() % 512 / 8.0
    distinct_scores(g, rows, a, nc)
    if extra:
        rows[:, 4 + nc] = np.arange(a, dtype=np.float32)
        for i in range(a):
            for k in range(1, extra):
                rows[i, 4 + nc + k] = g.unit()
    return rows


def make_topk(out):
    from ultralytics.nn.modules.head import Detect
    from ultralytics.utils.nms import non_max_suppression

    lines = []
    for cid, a, nc, extra, max_det, conf, agnostic, seed, classes in TOPK_CASES:
        rows = topk_inputs(Gen(seed), a, nc, extra)
        xyxy = rows.copy()  # the one-to-one head decodes x1 y1 x2 y2 (dist2bbox xywh=False)
        xyxy[:, 0] = rows[:, 0] - rows[:, 2] / 2
        xyxy[:, 1] = rows[:, 1] - rows[:, 3] / 2
        xyxy[:, 2] = rows[:, 0] + rows[:, 2] / 2
        xyxy[:, 3] = rows[:, 1] + rows[:, 3] / 2
        head = Detect(nc=nc, reg_max=1, end2end=True, ch=(16,))
        head.max_det, head.agnostic_nms = max(max_det, 300), bool(agnostic)  # as the predictor sets them
        sel = head.postprocess(torch.from_numpy(xyxy)[None])
        det = non_max_suppression(sel, conf, 0.7, classes or None, bool(agnostic), max_det=max_det, nc=nc,
                                  end2end=True)[0]
        lines.append("case %d %d %d %d %d %s %d %d %s" % (cid, a, nc, extra, max_det, g9(np.float32(conf)), agnostic,
                                                          seed, " ".join(map(str, classes))))
        for i, r in enumerate(det):
            lines.append("det %d %s" % (i, " ".join(g9(v) for v in r[:7])))
    open(os.path.join(out, "topk.txt"), "w").write("\n".join(lines) + "\n")


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "tests/golden/tasks"
    os.makedirs(out, exist_ok=True)
    torch.set_num_threads(1)
    make_masks(out)
    make_contours(out)
    b, s = make_obb(out)
    _, k = make_kpts(out)
    r = make_probs(out)
    make_summary(out, b, s, k, r)
    make_drawing(out)
    make_topk(out)


if __name__ == "__main__":
    main()
