"""test_strix.py — the strix Python package (python/) against the C build:
run by tests/cli_python.sh with the venv the package was installed into.

    python test_strix.py ROOT WEIGHTS REF.json TASKS IMAGE...

REF.json is `infer --json` on the IMAGEs with WEIGHTS; TASKS a folder of
`infer --json --imgsz 320` on the first IMAGE with the task models
tests/loaders/t-seg.pt (t-seg.json; t-seg-retina.json with
--retina-masks), t-pose.pt, t-obb.pt and t-cls.pt, each at the conf its
JSON records, and t-cls.onnx (t-cls-onnx.json: a static export, at its
own 160).  Prints one PASS/FAIL/SKIP line per check (cli_python_NAME)
and exits 1 on a failure.
"""
import json
import os
import random
import subprocess
import sys
import tempfile
import threading

import numpy as np

import strix

ROOT, WEIGHTS, REF, TASKS = sys.argv[1:5]
IMAGES = sys.argv[5:]
failed = False


def check(name, ok, why=""):
    global failed
    print("%s cli_python_%s%s" % ("PASS" if ok else "FAIL", name, "" if ok else ": " + why), flush=True)
    failed |= not ok


def same_dets(r, ref, tol=1e-3):
    """Results r against one image's detections of infer's JSON report: same
    count, boxes within tol pixels, same classes and names, scores within 1e-6."""
    if len(r) != len(ref):
        return "%d detections, infer found %d" % (len(r), len(ref))
    for i, d in enumerate(ref):
        if (np.abs(r.boxes[i] - np.array(d["box"], np.float32)).max() > tol or r.classes[i] != d["class_id"]
                or r.names[i] != d["class_name"] or abs(float(r.scores[i]) - d["score"]) > 1e-6):
            return "detection %d: %s %s %s %s, infer: %s" % (i, r.boxes[i], r.scores[i], r.classes[i],
                                                             r.names[i], d)
    return ""


def differences(cases):
    """same_dets over (label, results, ref) triples, once each: the messages of those that differ."""
    return [label + same for label, r, rf in cases for same in [same_dets(r, rf)] if same]


# --- the ctypes structures equal the header's, field by field ---------------
def abi():
    lines = ['#include <stddef.h>', '#include <stdio.h>', '#include "strix.h"', 'int main(void) {']
    for cname, cls in strix._STRUCTS.items():
        lines.append('printf("%s %%zu\\n", sizeof(%s));' % (cname, cname))
        for f, _ in cls._fields_:
            lines.append('printf("%s.%s %%zu\\n", offsetof(%s, %s));' % (cname, f, cname, f))
    for i, s in enumerate(strix._STATUS[1:], 1):
        lines.append('printf("status.%s %%d\\n", (int)STRIX_E_%s);' % (s, s.upper()))
    lines.append('printf("format.bgr %d\\nformat.rgb %d\\n", (int)STRIX_BGR, (int)STRIX_RGB);')
    lines.append('printf("tracker.botsort %d\\ntracker.bytetrack %d\\ntracker.ocsort %d\\n", '
                 '(int)STRIX_TRACKER_BOTSORT, (int)STRIX_TRACKER_BYTETRACK, (int)STRIX_TRACKER_OCSORT);')
    lines.append('printf("tracker.fasttrack %d\\ntracker.deepocsort %d\\ntracker.tracktrack %d\\n", '
                 '(int)STRIX_TRACKER_FASTTRACK, (int)STRIX_TRACKER_DEEPOCSORT, (int)STRIX_TRACKER_TRACKTRACK);')
    for t in strix._TASKS:
        lines.append('printf("task.%s %%d\\n", (int)STRIX_TASK_%s);' % (t, t.upper()))
    lines.append('printf("segment.all %d\\n", (int)STRIX_SEGMENT_ALL);')
    lines.append('return 0; }')
    want = {}
    for cname, cls in strix._STRUCTS.items():
        want[cname] = __import__("ctypes").sizeof(cls)
        for f, _ in cls._fields_:
            want["%s.%s" % (cname, f)] = getattr(cls, f).offset
    for i, s in enumerate(strix._STATUS[1:], 1):
        want["status." + s] = i
    want.update({"format.bgr": strix._STRIX_BGR, "format.rgb": strix._STRIX_RGB,
                 "tracker.botsort": strix._TRACKERS["botsort"], "tracker.bytetrack": strix._TRACKERS["bytetrack"],
                 "tracker.ocsort": strix._TRACKERS["ocsort"], "tracker.fasttrack": strix._TRACKERS["fasttrack"],
                 "tracker.deepocsort": strix._TRACKERS["deepocsort"], "tracker.tracktrack": strix._TRACKERS["tracktrack"],
                 "segment.all": 0})  # the strategy _masks passes
    want.update({"task." + t: i for i, t in enumerate(strix._TASKS)})
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "abi.c"), os.path.join(d, "abi")
        with open(src, "w") as f:
            f.write("\n".join(lines) + "\n")
        subprocess.run(["cc", "-std=c11", "-I", os.path.join(ROOT, "engine"), src, "-o", exe], check=True)
        got = dict(l.split() for l in subprocess.run([exe], check=True, capture_output=True, text=True).stdout.split("\n") if l)
    bad = ["%s: C %s, Python %s" % (k, got.get(k), v) for k, v in want.items() if int(got.get(k, -1)) != v]
    check("abi", not bad, "; ".join(bad[:5]))


abi()

ref = {im["image"]: im["detections"] for im in json.load(open(REF))["images"]}
model = strix.Model(WEIGHTS)

# --- the same detections as infer, one by one, as a batch, BGR and RGB ------
frames = [strix.imread(p) for p in IMAGES]
bad = differences((p + ": ", model(f)[0], ref[p]) for p, f in zip(IMAGES, frames))
check("same_as_infer", not bad, "; ".join(bad))
# a batch of one size: the same minimal letterbox as one frame (frames of
# different sizes share a square one, as in Ultralytics' batches)
res = model([frames[0]] * 3)
bad = differences(("", r, ref[IMAGES[0]]) for r in res)
check("batch_same_as_infer", len(res) == 3 and not bad, "; ".join(bad))
rgb = [np.ascontiguousarray(f[:, :, ::-1]) for f in frames]
bad = differences((p + ": ", model(f, rgb=True)[0], ref[p]) for p, f in zip(IMAGES, rgb))
check("rgb_same_as_infer", not bad, "; ".join(bad))
# a view into a larger array (rows padded, a crop's offset) reads the same pixels as a copy
seed = random.randrange(1 << 30)
rng = np.random.default_rng(seed)
big = rng.integers(0, 256, (300, 420, 3), np.uint8)
view = big[17:257, 31:351]
a, b = model(view)[0], model(np.ascontiguousarray(view))[0]
check("strided_view", len(a) == len(b) and np.array_equal(a.boxes, b.boxes) and np.array_equal(a.scores, b.scores),
      "seed %d: a strided view and its copy differ" % seed)

# --- a frame with nothing in it: every array empty, with its dtype ----------
# (these synthetic weights score every box of a black frame below 0.75 and
# the sample images' above it)
high = strix.Model(WEIGHTS, conf=0.8)
r0, r1 = high([np.zeros((240, 320, 3), np.uint8), frames[0]])
check("zero_detections", len(r0) == 0 and r0.boxes.shape == (0, 4) and r0.boxes.dtype == np.float32
      and r0.scores.shape == (0,) and r0.classes.shape == (0,) and len(r0.names) == 0 and len(r1) > 0,
      "black frame: %d detections, boxes %s; sample image: %d" % (len(r0), r0.boxes.shape, len(r1)))

# --- wrong frames: a clear exception before anything runs -------------------
def raises(fn, exc, words):
    try:
        fn()
    except exc as e:
        return all(w in str(e) for w in words), "%s: %s" % (type(e).__name__, e)
    except Exception as e:  # noqa: BLE001 — the wrong kind is the failure being reported
        return False, "%s: %s" % (type(e).__name__, e)
    return False, "no exception"


for name, fn, exc, words in [
        ("dtype_float", lambda: model(frames[0].astype(np.float32)), TypeError, ["uint8", "float32"]),
        ("shape_grey", lambda: model(frames[0][:, :, 0]), ValueError, ["(height, width, 3)", str(frames[0].shape[:2])]),
        ("shape_rgba", lambda: model(np.zeros((8, 8, 4), np.uint8)), ValueError, ["(8, 8, 4)"]),
        ("not_array", lambda: model([[1, 2, 3]]), TypeError, ["numpy array", "list"]),
        ("bad_tracker", lambda: model.track(frames[0], tracker="sort"), ValueError, ["botsort", "'sort'"])]:
    ok, why = raises(fn, exc, words)
    check(name, ok, why)

# --- bad weights: StrixError with the library's status and message ----------
missing = os.path.join(tempfile.gettempdir(), "strix-no-such-file-%d.pt" % seed)
ok, why = raises(lambda: strix.Model(missing), strix.StrixError, [missing])
try:
    strix.Model(missing)
except strix.StrixError as e:
    ok = ok and e.status == "io" and e.code == 2
    why += " (status %s, code %s)" % (e.status, e.code)
check("bad_weights_path", ok, why)
with tempfile.NamedTemporaryFile(suffix=".pt") as junk:
    junk.write(b"this is not a checkpoint")
    junk.flush()
    try:
        strix.Model(junk.name)
        check("bad_weights_file", False, "a junk .pt loaded")
    except strix.StrixError as e:
        check("bad_weights_file", e.status in ("weights", "model") and junk.name in str(e), "%s: %s" % (e.status, e))

# --- two models in two threads: each equals the single-threaded results -----
second = strix.Model(WEIGHTS)
outs, errs = [None, None], []


def work(i, m):
    try:
        outs[i] = [m(f)[0] for f in frames for _ in range(2)]
    except Exception as e:  # noqa: BLE001 — reported below
        errs.append(repr(e))


ts = [threading.Thread(target=work, args=(i, m)) for i, m in enumerate([model, second])]
for t in ts:
    t.start()
for t in ts:
    t.join()
bad = errs + differences(("thread %d: " % i, r, ref[IMAGES[j // 2]]) for i in range(2) for j, r in enumerate(outs[i] or []))
check("two_threads", not bad and all(outs), "; ".join(bad[:3]))

# --- tracking: a still frame keeps every identity; reset starts over --------
tr = model.track([frames[0]] * 4, tracker="botsort")
ids = [r.track_ids for r in tr]
stable = all(np.array_equal(ids[1], i) for i in ids[2:])
check("track_still", len(tr) == 4 and (ids[1] > 0).all() and stable and len(set(ids[1].tolist())) == len(ids[1]),
      "ids per frame: %s" % [i[:6].tolist() for i in ids])
# a tracked detection's box is the tracker's (clipped to the frame), its own box in detection_boxes
d0, h0, w0 = model(frames[0])[0], frames[0].shape[0], frames[0].shape[1]
t3 = tr[3]
on = t3.track_ids >= 0
check("track_boxes", t3.detection_boxes is not None and np.array_equal(t3.detection_boxes, d0.boxes) and
      (t3.boxes[on] >= 0).all() and (t3.boxes[on][:, [0, 2]] <= w0).all() and (t3.boxes[on][:, [1, 3]] <= h0).all() and
      np.abs(t3.boxes[on] - d0.boxes[on]).max() < 2 and not np.array_equal(t3.boxes[on], d0.boxes[on]) and
      np.array_equal(t3.boxes[~on], d0.boxes[~on]) and d0.detection_boxes is None,
      "tracked boxes %s, detections %s" % (t3.boxes[:2].tolist(), d0.boxes[:2].tolist()))
model.reset_tracker()
again = model.track(frames[0], tracker="botsort")[0].track_ids
check("track_reset", np.array_equal(again, ids[0]), "after reset_tracker: %s, first run: %s" % (again[:6], ids[0][:6]))
bt = model.track([frames[0]] * 3, tracker="bytetrack")
check("track_bytetrack", (bt[2].track_ids > 0).all() and bt[2].track_ids.min() == 1,
      "bytetrack ids: %s" % bt[2].track_ids[:6])
oc = model.track([frames[0]] * 3, tracker="ocsort")
check("track_ocsort", (oc[2].track_ids > 0).all() and oc[2].track_ids.min() == 1,
      "ocsort ids: %s" % oc[2].track_ids[:6])
for name in ("fasttrack", "deepocsort"):  # some boxes may stay untracked: suppressed, or below deepocsort's 0.3
    t = model.track([frames[0]] * 3, tracker=name)[2].track_ids
    check("track_" + name, (t > 0).any() and t[t > 0].min() == 1 and ((t == -1) | (t > 0)).all(),
          "%s ids: %s" % (name, t[:6]))
# the default, TrackTrack: tracks start only from boxes scoring above 0.7 (the best of them always), on the first
# frame shown at once; a still frame keeps them
tt = model.track([frames[0]] * 3)
ti, hi = [r.track_ids for r in tt], tt[0].scores > np.float32(0.7)
k = int((ti[0] >= 0).sum())
check("track_tracktrack", all(np.array_equal(ti[0], i) for i in ti[1:]) and not (ti[0][~hi] >= 0).any() and
      sorted(ti[0][ti[0] >= 0].tolist()) == list(range(1, k + 1)) and (k > 0) == bool(hi.any()),
      "tracktrack ids %s, scores %s" % ([i[:6].tolist() for i in ti], tt[0].scores[:6]))

# --- every task: the same results as infer ----------------------------------
def same_task(r, ref, task, retina=False):
    """Results r of a task model against one image of infer's JSON report:
    the boxes as same_dets, then the task's fields (polygons and keypoints
    within 1e-3 px, visibility and probabilities within 1e-6, the obb
    corners within 1e-3 px): "" when they agree."""
    if r.task != task:
        return "task %s, want %s" % (r.task, task)
    if task == "classify":
        want = [(p["class"], p["name"], p["confidence"]) for p in ref["probs"]]
        got = [(c, names_cls[c], float(r.probs.data[c])) for c in r.probs.top5]
        if (len(r) or len(got) != len(want) or [g[:2] for g in got] != [w[:2] for w in want] or r.probs.top1 != want[0][0]
                or max(abs(g[2] - w[2]) for g, w in zip(got, want)) > 1e-6 or r.probs.top1conf != r.probs.top5conf[0]):
            return "top5 %s (top1 %s), infer: %s" % (got, r.probs.top1, want)
        return ""
    dets = ref["detections"]
    bad = same_dets(r, dets)
    if bad:
        return bad
    for i, d in enumerate(dets):
        if task == "segment":
            want = np.array([d["segments"]["x"], d["segments"]["y"]], np.float32).T
            got = r.masks.xy[i]
            if got.shape != want.shape or (len(want) and np.abs(got - want).max() > 1e-3) or not r.masks.data[i].any():
                return "mask %d: polygon of %d points, infer's %d" % (i, len(got), len(want))
        elif task == "pose":
            k = d["keypoints"]
            if (np.abs(r.keypoints.xy[i] - np.array([k["x"], k["y"]], np.float32).T).max() > 1e-3 or
                    np.abs(r.keypoints.conf[i] - np.array(k["visible"], np.float32)).max() > 1e-6):
                return "keypoints %d: %s, infer: %s" % (i, r.keypoints.data[i][:2].tolist(), k)
        else:
            o = d["obb"]
            want = np.array([[o["x%d" % j], o["y%d" % j]] for j in range(1, 5)], np.float32)
            if np.abs(r.obb.xyxyxyxy[i] - want).max() > 1e-3:
                return "obb %d: %s, infer: %s" % (i, r.obb.xyxyxyxy[i].tolist(), o)
    n = len(r)
    if task == "segment":
        h, w = frames[0].shape[:2]
        g = 320 / max(h, w)  # the minimal letterbox at imgsz 320: each side rounded up to the stride, 32
        want = (n, h, w) if retina else (n, -(-round(h * g) // 32) * 32, -(-round(w * g) // 32) * 32)
        if len(r.masks.xy) != n or r.masks.data.dtype != np.uint8 or r.masks.data.shape != want:
            return "masks %s %s, %d polygons, want %s" % (r.masks.data.shape, r.masks.data.dtype, len(r.masks.xy), want)
    if task == "pose" and (r.keypoints.data.shape != (n, 17, 3) or r.keypoints.xy.shape != (n, 17, 2)):
        return "keypoints %s" % (r.keypoints.data.shape,)
    if task == "obb" and (r.obb.xywhr.shape != (n, 5) or r.obb.xyxyxyxy.shape != (n, 4, 2)):
        return "obb %s %s" % (r.obb.xywhr.shape, r.obb.xyxyxyxy.shape)
    return ""


names_cls = None
task_models = {}
for name, task in [("seg", "segment"), ("seg-retina", "segment"), ("pose", "pose"), ("obb", "obb"),
                   ("cls", "classify"), ("cls-onnx", "classify")]:
    tref = json.load(open(os.path.join(TASKS, "t-%s.json" % name)))
    retina, loaders = name.endswith("retina"), os.path.join(ROOT, "tests/loaders")
    if name.endswith("onnx"):
        m = strix.Model(os.path.join(loaders, "t-cls.onnx"), model=os.path.join(loaders, "tiny-cls.yaml"), scale="n")
    else:
        m = strix.Model(os.path.join(loaders, "t-%s.pt" % name.split("-")[0]), imgsz=320, conf=tref["conf"],
                        retina_masks=retina)
        task_models[task] = m
    if task == "classify":
        names_cls = m.names
    img = tref["images"][0]
    # one frame, then the second of a batch of two (its own task values and protos: the first is mirrored), RGB
    bad = [same_task(r, img, task, retina) for r in m(frames[0]) + m([rgb[0][:, ::-1], rgb[0]], rgb=True)[1:]]
    bad = [b for b in bad if b]
    check("task_" + name, not bad and (task == "classify" or len(img["detections"]) > 0 or IMAGES[0][-4:] != ".jpg"),
          "%s: %s" % (img["image"], "; ".join(bad[:2]) or "no detections"))

# a frame with nothing in it: each task's arrays empty, with their shapes (these synthetic weights score
# every box of a black frame below 0.95)
black, shapes = np.zeros((240, 320, 3), np.uint8), []
for task, weights in [("segment", "t-seg.pt"), ("pose", "t-pose.pt"), ("obb", "t-obb.pt")]:
    r = strix.Model(os.path.join(ROOT, "tests/loaders", weights), conf=0.95)(black)[0]
    shapes.append((len(r), r.masks.data.shape if r.masks is not None else r.keypoints.data.shape
                   if r.keypoints is not None else r.obb.xyxyxyxy.shape, len(r.masks.xy) if r.masks is not None else 0))
check("task_zero_detections", shapes == [(0, (0, 480, 640), 0), (0, (0, 17, 3), 0), (0, (0, 4, 2), 0)],
      "(detections, shape, polygons) per task: %s" % shapes)

# tracking keeps each detection's masks and keypoints; an obb model tracks its rotated boxes: a tracked
# detection's xywhr is the tracker's, its box those corners' bounds (not clipped), its own in detection_xywhr
for task in ("segment", "pose", "obb"):
    m = task_models[task]
    plain = m(frames[0])[0]
    tr = m.track([frames[0]] * 3, tracker="botsort")[2]
    on = tr.track_ids > 0
    ok = len(tr) == len(plain) > 0 and on.all() and np.array_equal(tr.detection_boxes, plain.boxes)
    if task == "segment":
        ok = ok and all(np.array_equal(a, b) for a, b in zip(tr.masks.xy, plain.masks.xy)) and \
            np.array_equal(tr.masks.data, plain.masks.data)
    elif task == "pose":
        ok = ok and np.array_equal(tr.keypoints.data, plain.keypoints.data)
    else:
        c = tr.obb.xyxyxyxy
        bounds = np.concatenate([c.min(1), c.max(1)], 1)
        a, b = tr.obb.xywhr, plain.obb.xywhr  # the tracker holds a box with its long edge as w
        ok = (ok and np.array_equal(tr.obb.detection_xywhr, b) and plain.obb.detection_xywhr is None
              and np.abs(tr.boxes - bounds).max() < 1e-3 and np.abs(a[:, :2] - b[:, :2]).max() < 2
              and np.abs(np.sort(a[:, 2:4], 1) - np.sort(b[:, 2:4], 1)).max() < 2 and not np.array_equal(a, b))
    check("track_" + task, ok, "%d tracked of %d (untracked %d): ids %s" % (on.sum(), len(tr), len(plain),
                                                                            tr.track_ids[:6].tolist()))
ok, why = raises(lambda: task_models["classify"].track(frames[0]), ValueError, ["classify"])
check("track_classify", ok, why)

# TrackTrack takes an obb (or detect) model's recovered detections: on 12 frames of a real clip (TASKS/clip.rgb,
# decoded as infer decodes it) Model.track gives infer --track's rows (TASKS/obbtrack/clip.jsonl, the same YAML
# keys): identities, boxes, and the rows of recovered detections a track took, after each frame's own
clip = os.path.join(TASKS, "clip.rgb")
if os.path.exists(clip):
    rgbs = np.fromfile(clip, np.uint8).reshape(-1, 576, 768, 3)
    want = [json.loads(x)["detections"] for x in open(os.path.join(TASKS, "obbtrack", "clip.jsonl")) if '"frame"' in x]
    m = strix.Model(os.path.join(ROOT, "tests/loaders/t-obb.pt"), imgsz=160, conf=0.3)
    got = m.track(list(rgbs), rgb=True, track_high_thresh=0.3, track_low_thresh=0.2, new_track_thresh=0.35,
                  min_track_len=1)
    bad, rows = [], 0
    for f, (r, w) in enumerate(zip(got, want)):
        wi = [d.get("track_id", -1) for d in w]
        wr = [d.get("recovered", False) for d in w]
        wb = np.array([d["box"] for d in w], np.float32).reshape(-1, 4)
        if r.track_ids.tolist() != wi or r.recovered.tolist() != wr or not np.array_equal(r.boxes, wb):
            bad.append("frame %d: ids %s recovered %d, infer's %s recovered %d" % (
                f, r.track_ids[:8].tolist(), r.recovered.sum(), wi[:8], sum(wr)))
        rows += int(r.recovered.sum())
    ok, why = raises(lambda: m.track(rgbs[0], rgb=True, track_hi=0.3), ValueError, ["track_hi", "track_high_thresh"])
    check("track_recovered", len(got) == len(want) == 12 and not bad and rows > 0 and ok,
          "%d frames, infer %d, %d recovered rows; %s %s" % (len(got), len(want), rows, "; ".join(bad[:2]), why))
    m.close()
else:
    print("SKIP cli_python_track_recovered: %s is absent (../shared/data/vtest.avi, or ffmpeg failed)" % clip)

# --- closed model -----------------------------------------------------------
second.close()
ok, why = raises(lambda: second(frames[0]), ValueError, ["closed"])
check("closed", ok, why)

sys.exit(1 if failed else 0)
