#!/usr/bin/env python3
"""check_moteval.py — dev-only: strix's MOT evaluator against py-motmetrics.

Generates seeded synthetic ground truth and tracker output (objects moving
over a few dozen frames, spread out or crowded; the tracker output jitters the boxes so their IoU
straddles the threshold, drops boxes, adds false positives, swaps and splits
identities, relabels ids, shuffles rows), writes both as MOTChallenge text
files and computes py-motmetrics' metrics on them, the way the MOTChallenge
devkit calls it (mm.io.loadtxt + mm.utils.compare_to_groundtruth with
distth = 1 - iou, the scipy solver strix_assign mirrors).

Coordinates are multiples of 1/4 pixel so float32 (strix) and float64
(pandas) hold them exactly and every IoU is computed bit for bit alike.

  --moteval BUILD/moteval --n 300   run that many random cases through the
                                    CLI (--raw) and compare: counts exactly,
                                    ratios to 1e-9; exit 1 on a mismatch
  --write DIR                       write the goldens tests/test_moteval.c
                                    reads (DIR/caseK.{gt,hyp,expected}.txt)
  --gt G --hyp H [--iou X]          print py-motmetrics' numbers for two files

Run with the reference venv from the repository root, e.g.:
    /opt/strix-ref/bin/pip install motmetrics
    /opt/strix-ref/bin/python tools/reference/check_moteval.py --moteval build/moteval --n 300
    /opt/strix-ref/bin/python tools/reference/check_moteval.py --write tests/golden/moteval
"""
import argparse
import math
import os
import subprocess
import sys
import tempfile
import warnings

import numpy as np

if not hasattr(np, "asfarray"):  # motmetrics 1.4 predates NumPy 2
    np.asfarray = lambda a: np.asarray(a, dtype=float)

import motmetrics as mm  # noqa: E402

warnings.simplefilter("ignore")

# py-motmetrics metric -> how it is written in the expected files
METRICS = ["num_frames", "num_objects", "num_predictions", "num_matches", "num_switches",
           "num_false_positives", "num_misses", "num_fragmentations", "mota", "motp", "idtp", "idfp",
           "idfn", "idf1", "idp", "idr", "num_unique_objects", "mostly_tracked", "partially_tracked",
           "mostly_lost"]
RATIOS = {"mota", "motp", "idf1", "idp", "idr"}


def q(x):
    """Round to a multiple of 1/4."""
    return np.round(np.asarray(x) * 4) / 4


def gen_case(rng, frames=30, objects=6, area=300):
    """Returns (gt rows, hyp rows): lists of (frame, id, x, y, w, h, conf);
    objects start in an area x area square (small: crowded, many crossings)."""
    gt = []
    for o in range(objects):
        start = int(rng.integers(1, frames // 2))
        end = int(rng.integers(start + 3, frames + 1))
        gap = (int(rng.integers(start, end)), int(rng.integers(1, 4))) if rng.random() < 0.3 else (0, 0)
        x, y = rng.uniform(0, area, 2)
        vx, vy = rng.uniform(-6, 6, 2)
        w, h = rng.uniform(12, 60, 2)
        for f in range(start, end + 1):
            if gap[0] <= f < gap[0] + gap[1]:
                continue
            t = f - start
            gt.append([f, o + 1, *q([x + vx * t, y + vy * t, w, h]), 1.0])

    # tracker identities: per object a current hyp id that can split or swap
    next_id = [100]

    def new_id():
        next_id[0] += 1
        return next_id[0]

    cur = {o + 1: new_id() for o in range(objects)}
    swap_at = {int(rng.integers(2, frames)) for _ in range(int(rng.integers(0, 3)))}
    split_at = {int(rng.integers(2, frames)): int(rng.integers(1, objects + 1)) for _ in range(int(rng.integers(0, 3)))}
    by_frame = {}
    for r in gt:
        by_frame.setdefault(r[0], []).append(r)
    hyp = []
    p_drop = rng.uniform(0, 0.25)
    jitter = rng.uniform(0.5, 0.25 * np.mean([r[4] for r in gt]) if gt else 4)
    for f in range(1, frames + 1):
        rows = by_frame.get(f, [])
        if f in swap_at and len(rows) >= 2:
            a, b = (rows[i][1] for i in rng.choice(len(rows), 2, replace=False))
            cur[a], cur[b] = cur[b], cur[a]
        if f in split_at:
            cur[split_at[f]] = new_id()
        for r in rows:
            if rng.random() < p_drop:
                continue
            box = q(np.array(r[2:6]) + rng.normal(0, jitter, 4) * np.array([1, 1, 0.5, 0.5]))
            box[2:] = np.maximum(box[2:], 1)
            hyp.append([f, cur[r[1]], *box, float(q(rng.uniform(0.3, 1)))])
            if rng.random() < 0.05:  # a duplicate box on the same object
                box2 = q(box + rng.normal(0, jitter / 2, 4))
                box2[2:] = np.maximum(box2[2:], 1)
                hyp.append([f, new_id(), *box2, 0.5])
        for _ in range(int(rng.poisson(0.4))):  # false positives, some persistent
            fid = new_id() if rng.random() < 0.5 else 99
            if any(h[0] == f and h[1] == fid for h in hyp):
                continue
            hyp.append([f, fid, *q(rng.uniform(0, area, 2)), *q(rng.uniform(12, 60, 2)), 0.4])

    # relabel hyp ids to arbitrary numbers
    ids = sorted({h[1] for h in hyp})
    relabel = dict(zip(ids, rng.choice(100000, len(ids), replace=False) + 1))
    for h in hyp:
        h[1] = int(relabel[h[1]])
    return gt, hyp


def write_mot(path, rows, order, rng):
    rows = list(rows)
    if order == "id":  # MOTChallenge gt files: by track, then frame
        rows.sort(key=lambda r: (r[1], r[0]))
    elif order == "shuffled":
        rows = [rows[i] for i in rng.permutation(len(rows))]
    else:
        rows.sort(key=lambda r: r[0])
    with open(path, "w") as f:
        for r in rows:
            f.write("%d,%d,%s,%s,%s,%s,%s,-1,-1,-1\n" % (r[0], r[1], *(repr(float(v)) for v in r[2:7])))


def motmetrics(gt_path, hyp_path, iou):
    gt = mm.io.loadtxt(gt_path, fmt="mot15-2D")
    hyp = mm.io.loadtxt(hyp_path, fmt="mot15-2D")
    with mm.lap.set_default_solver("scipy"):
        acc = mm.utils.compare_to_groundtruth(gt, hyp, "iou", distth=1 - iou)
        s = mm.metrics.create().compute(acc, metrics=METRICS, name="x")
    return {k: float(v) for k, v in s.to_dict("records")[0].items()}


def strix(moteval, gt_path, hyp_path, iou):
    out = subprocess.run([moteval, "--raw", "--iou", repr(iou), gt_path, hyp_path], capture_output=True,
                         text=True, check=True).stdout
    return {k: float(v) for k, v in (line.split() for line in out.splitlines())}


def compare(ref, got):
    """List of mismatches between py-motmetrics' numbers and moteval --raw's."""
    want = {
        "frames": ref["num_frames"], "gt": ref["num_objects"], "hyp": ref["num_predictions"],
        "tp": ref["num_matches"] + ref["num_switches"], "fp": ref["num_false_positives"],
        "fn": ref["num_misses"], "idsw": ref["num_switches"], "frag": ref["num_fragmentations"],
        "mota": ref["mota"], "motp": 1 - ref["motp"], "idtp": ref["idtp"], "idfp": ref["idfp"],
        "idfn": ref["idfn"], "idf1": ref["idf1"], "idp": ref["idp"], "idr": ref["idr"],
        "gt_ids": ref["num_unique_objects"], "mostly_tracked": ref["mostly_tracked"],
        "partly_tracked": ref["partially_tracked"], "mostly_lost": ref["mostly_lost"],
    }
    bad = []
    for k, v in want.items():
        g = got[k]
        same = (math.isnan(v) and math.isnan(g)) or v == g or (k in RATIOS and abs(v - g) <= 1e-9)
        if not same:
            bad.append("%s: motmetrics %r, strix %r" % (k, v, g))
    return bad


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, default=2024)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--moteval")
    ap.add_argument("--write")
    ap.add_argument("--gt")
    ap.add_argument("--hyp")
    ap.add_argument("--iou", type=float, default=0.5)
    a = ap.parse_args()

    if a.gt and a.hyp:
        for k, v in motmetrics(a.gt, a.hyp, a.iou).items():
            print(k, repr(v))
        return 0

    if a.write:
        # (seed, frames, objects, iou, gt order, hyp order)
        cases = [(a.seed, 30, 6, 0.5, "frame", "frame"),
                 (a.seed + 1, 40, 8, 0.5, "id", "shuffled"),
                 (a.seed + 2, 25, 5, 0.3, "frame", "shuffled"),
                 (a.seed + 3, 30, 10, 0.7, "id", "frame")]
        os.makedirs(a.write, exist_ok=True)
        for k, (seed, frames, objects, iou, go, ho) in enumerate(cases, 1):
            rng = np.random.default_rng(seed)
            gt, hyp = gen_case(rng, frames, objects)
            base = os.path.join(a.write, "case%d" % k)
            write_mot(base + ".gt.txt", gt, go, rng)
            write_mot(base + ".hyp.txt", hyp, ho, rng)
            ref = motmetrics(base + ".gt.txt", base + ".hyp.txt", iou)
            with open(base + ".expected.txt", "w") as f:
                f.write("# py-motmetrics %s (scipy solver), tools/reference/check_moteval.py --write, "
                        "seed %d, %d frames, %d objects, gt rows by %s, hyp rows by %s\n"
                        % (mm.__version__, seed, frames, objects, go, ho))
                f.write("iou %r\n" % iou)
                for m in METRICS:
                    f.write("%s %r\n" % (m, ref[m]))
            print("%s: %d gt, %d hyp rows, mota %.4f idf1 %.4f switches %d" %
                  (base, len(gt), len(hyp), ref["mota"], ref["idf1"], ref["num_switches"]))
        return 0

    if not a.moteval:
        ap.error("give --moteval BUILD/moteval, --write DIR, or --gt G --hyp H")
    rng = np.random.default_rng(a.seed)
    fails = 0
    seen = {k: 0 for k in ["num_switches", "num_fragmentations", "num_misses", "num_false_positives"]}
    with tempfile.TemporaryDirectory() as d:
        g, h = os.path.join(d, "gt.txt"), os.path.join(d, "hyp.txt")
        for i in range(a.n):
            iou = float(rng.choice([0.5, 0.5, 0.3, 0.7, 0.9]))
            gt, hyp = gen_case(rng, int(rng.integers(5, 60)), int(rng.integers(1, 30)),
                               float(rng.choice([300, 100, 40])))
            if i % 10 == 0:
                hyp = []  # now and then an empty tracker output
            write_mot(g, gt, str(rng.choice(["frame", "id", "shuffled"])), rng)
            write_mot(h, hyp, str(rng.choice(["frame", "id", "shuffled"])), rng)
            ref = motmetrics(g, h, iou)
            for k in seen:
                seen[k] += ref[k] > 0
            bad = compare(ref, strix(a.moteval, g, h, iou))
            if bad:
                fails += 1
                print("case %d (seed %d, iou %g): %s" % (i, a.seed, iou, "; ".join(bad)))
    print("%d/%d cases match py-motmetrics %s (cases with some: %s)" % (
        a.n - fails, a.n, mm.__version__, ", ".join("%s %d" % kv for kv in seen.items())))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
