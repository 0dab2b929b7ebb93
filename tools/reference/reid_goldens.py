#!/usr/bin/env python3
"""reid_goldens.py — dev-time only: the ReID (with_reid: True, model: auto)
tracker goldens of tests/golden/track/, and the check of strix's native
features against Ultralytics' own.

Tracker goldens (default mode): real footage, the first FRAMES frames of
../shared/data/vtest.avi (or $STRIX_DATA; a street, static camera; `ffmpeg -i vtest.avi
-frames:v 30 -c copy vtest30.avi`), decoded by the ffmpeg CLI with
swscale's bilinear conversion to RGB as strix's reader decodes them.  strix
itself (libstrix.so through ctypes and python/strix) detects on each frame
with its synthetic weights (`mkweights --model weights/yolov8.yaml --scale
n --seed 7`; conf 0.3, iou 0.7, imgsz 640, the CPU) and gives each
detection its native ReID feature (strix_model_keep_features,
strix_model_features: 64 floats, get_obj_feats' channel-group means of the
Detect head's inputs).  Those detections and features go to Ultralytics
8.4.190's BOTSORT, DeepOCSORT and TRACKTRACK as `yolo track` hands them
over (tracker.update(boxes, frame, feats=...)), each from its YAML with
with_reid: True, model: auto.  Writes:

  reid.jsonl     the detections, in infer's video JSON Lines format
  reid.feat.txt  per detection "frame index f0 .. f63": its feature (the
                 shortest decimal of each float32)
  reid.ids.txt   per detection "frame index botsort botsort_nogmc
                 deepocsort tracktrack tracktrack_nogmc plain x1 y1 x2 y2":
                 the identity each tracker returned for it (-1: none):
                 BOTSORT with its sparseOptFlow GMC on the frames and without
                 GMC, DeepOCSORT (deepocsort.yaml: no GMC), TRACKTRACK with
                 TT_LOW (with its defaults it tracks almost none of these
                 ~0.5-score boxes) with GMC and without, and BOTSORT without
                 GMC and without ReID (plain: what ReID changes); then
                 BOTSORT-without-GMC's row box ("- - - -": none)

A synthetic stream (same mode), reid_cross: track_goldens.py's detection
stream machinery on a scenario of its own (two pairs of look-alike boxes
that walk through each other, one object lost a while later; jitter, missed
detections, false positives), each object's class_id 100 + its number, and
each detection's feature (SYNTH_DIM floats) computed from its class_id, frame
and index by synth_feature below, which tests/test_reid.c computes the same
way (unsigned 32-bit hashes; float32 sums of exact terms):
  reid_cross.jsonl    the detections, in infer's video JSON Lines format
  reid_cross.ids.txt  per detection "frame index botsort deepocsort
                      tracktrack plain": BOTSORT, DeepOCSORT and TRACKTRACK
                      with with_reid: True (no frames: no GMC), BOTSORT
                      without ReID (plain)

Feature check (--features OUT): Ultralytics' predictor (needs PyTorch: run
with /tmp/coldref's venv) with the same weights on dog.jpg, its Detect
input captured by a forward pre-hook as `yolo track` captures it, and
DetectionPredictor.get_obj_feats on the NMS indices: per detection "k x1 y1
x2 y2 score f0 .. f63" of its first MAX_FEAT_DETS detections (conf
FEAT_CONF), into OUT (tests/golden/track/reid_dog.txt).

Usage, from the repo root after `make BUILD=build/dev CUDA=0 tests shared`:
  /tmp/ulref/bin/python tools/reference/reid_goldens.py [OUTDIR]
  /tmp/coldref/bin/python tools/reference/reid_goldens.py --features tests/golden/track/reid_dog.txt
"""
import ctypes
import ctypes.util
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.join(ROOT, "build", "dev")
DATA = os.environ.get("STRIX_DATA", os.path.join(ROOT, "..", "shared", "data"))
FRAMES = 30
CONF = 0.3
TT_LOW = dict(track_high_thresh=0.3, track_low_thresh=0.2, new_track_thresh=0.4)
FEAT_CONF = 0.1
MAX_FEAT_DETS = 30
SYNTH_DIM = 16


def hash32(x):
    """tests/test_reid.c's hash: unsigned 32-bit arithmetic"""
    x = (x * 0x9E3779B1) & 0xFFFFFFFF
    x ^= x >> 15
    x = (x * 0x85EBCA77) & 0xFFFFFFFF
    x ^= x >> 13
    return x


def synth_feature(cls, frame, k):
    """an object's look (from its class_id) plus per-detection noise, float32: each term exact"""
    f = np.zeros(SYNTH_DIM, np.float32)
    for j in range(SYNTH_DIM):
        base = np.float32(hash32(cls * 64 + j) >> 8) / np.float32(16777216) - np.float32(0.5)
        noise = np.float32(hash32((frame * 4096 + k * 64 + j + 0x5BD1E995) & 0xFFFFFFFF) >> 8) / np.float32(16777216) \
            - np.float32(0.5)
        f[j] = base + np.float32(0.25) * noise
    return f


def cross_scenario(tg, rng):
    """two pairs of look-alike boxes walking through each other, one object
    lost a while later (class_id 100 + number)"""
    n, objs, hidden = 70, [], {}
    for p, (y, t0) in enumerate(((150, 0), (400, 5))):
        objs.append(tg.Obj(2 * p + 1, 0, 100, y, 70, 160, 8.0, 0.1, t0, n))
        objs.append(tg.Obj(2 * p + 2, 0, 660, y + 4, 70, 160, -8.0, 0.0, t0, n))
    hidden[3] = set(range(50, 58))
    for o in objs:
        o.cls = 100 + o.oid
    return objs, n, 30.0, hidden, {}


def weights(tmp):
    path = os.path.join(tmp, "w.safetensors")
    subprocess.run([os.path.join(BUILD, "mkweights"), "--model", os.path.join(ROOT, "weights", "yolov8.yaml"),
                    "--scale", "n", "--seed", "7", "--out", path, "--overwrite"], check=True, capture_output=True)
    return path


def fmt(x):
    return np.format_float_positional(np.float32(x), unique=True, trim="-")


class TaskValues(ctypes.Structure):
    _fields_ = [("count", ctypes.c_int), ("stride", ctypes.c_int), ("values", ctypes.POINTER(ctypes.c_float))]


def load_strix():
    """python/strix on build/dev's libstrix.so"""
    lib = sorted(f for f in os.listdir(BUILD) if f.startswith("libstrix.so."))[-1]
    ctypes.util.find_library = lambda name: os.path.join(BUILD, lib)  # python/strix loads this build's library
    sys.path.insert(0, os.path.join(ROOT, "python"))
    version = type(sys)("strix._version")  # written by a wheel build, absent in a checkout
    version.__version__ = "dev"
    sys.modules["strix._version"] = version
    import strix

    return strix


def strix_detect(frames, wpath):
    """strix's detections (x1 y1 x2 y2, score, class) and native features of each RGB frame"""
    strix = load_strix()
    m = strix.Model(wpath, model=os.path.join(ROOT, "weights", "yolov8.yaml"), scale="n", conf=CONF, device="cpu")
    L = strix._lib
    L.strix_model_keep_features.restype = L.strix_model_features.restype = ctypes.c_int
    L.strix_model_keep_features.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
    L.strix_model_features.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(TaskValues), ctypes.c_void_p]
    err = strix._Error()
    assert L.strix_model_keep_features(m._m, 1, ctypes.byref(err)) == 0, err.message
    out = []
    for rgb in frames:
        r = m._detect(m._frames([rgb], True))[0]
        tv = TaskValues()
        assert L.strix_model_features(m._m, 0, ctypes.byref(tv), ctypes.byref(err)) == 0, err.message
        assert tv.count == len(r)
        feats = np.ctypeslib.as_array(tv.values, (tv.count * tv.stride,)).reshape(tv.count, tv.stride).copy() \
            if tv.count else np.zeros((0, 64), np.float32)
        out.append(([(list(d["box"]), np.float32(d["score"]), int(d["class_id"])) for d in r], feats))
    m.close()
    return out


def import_track_goldens():
    """track_goldens.py: torch stubbed, Ultralytics' trackers, its Boxes and cfg"""
    sys.argv = sys.argv[:1]
    sys.path.insert(0, os.path.dirname(__file__))
    import track_goldens

    return track_goldens


def run(tg, tracker, frames, feats, images=None):
    """identity (-1: none) and row box (None: none) per detection, as `yolo track` feeds the tracker"""
    ids, boxes = [], []
    for f, (fd, ff) in enumerate(zip(frames, feats)):
        b = tg.Boxes([bx for bx, _, _ in fd], [s for _, s, _ in fd], [c for _, _, c in fd])
        i, bx = [-1] * len(fd), [None] * len(fd)
        for r in tracker.update(b, images(f) if images else None, feats=ff):
            i[int(r[-1])] = int(r[4])
            bx[int(r[-1])] = [np.float32(v) for v in r[:4]]
        ids.append(i)
        boxes.append(bx)
    return ids, boxes


def write_jsonl(path, frames, fps):
    """the detections as infer writes its video JSON Lines"""
    with open(path, "w") as f:
        for i, fd in enumerate(frames):
            items = ['{"class_id": %d, "score": %s, "box": [%s]}' % (c, fmt(s), ", ".join(fmt(v) for v in b))
                     for b, s, c in fd]
            f.write('{"frame": %d, "pts": %s, "inferred": true, "detections": [%s]}\n'
                    % (i, json.dumps(round(i / fps, 6)), ", ".join(items)))


def summary(prefix, names, cols, plain):
    for n, (c, _) in zip(names, cols):
        print("%s%-16s %4d tracked of %4d, %3d identities, %4d differ from plain" % (
            prefix, n, sum(i >= 0 for fr in c for i in fr), sum(len(fr) for fr in c),
            len({i for fr in c for i in fr if i >= 0}), sum(a != b for fa, fb in zip(c, plain) for a, b in zip(fa, fb))))


def tracker_goldens(outdir):
    tg = import_track_goldens()

    video = os.path.join(DATA, "vtest.avi")
    with tempfile.TemporaryDirectory() as tmp:
        clip = os.path.join(tmp, "clip.avi")
        subprocess.run(["ffmpeg", "-v", "error", "-i", video, "-frames:v", str(FRAMES), "-c", "copy", clip], check=True)
        raw = subprocess.run(["ffmpeg", "-v", "error", "-i", clip, "-f", "rawvideo", "-pix_fmt", "rgb24",
                              "-sws_flags", "bilinear", "-"], check=True, capture_output=True).stdout
        rgb = np.frombuffer(raw, np.uint8).reshape(FRAMES, 576, 768, 3)
        dets = strix_detect(rgb, weights(tmp))
    frames = [d for d, _ in dets]
    feats = [f for _, f in dets]
    images = lambda f: np.ascontiguousarray(rgb[f][:, :, ::-1])  # noqa: E731

    reid = dict(with_reid=True, model="auto")
    cols = [run(tg, tg.BOTSORT(tg.cfg("botsort", **reid)), frames, feats, images),
            run(tg, tg.BOTSORT(tg.cfg("botsort", gmc_method="none", **reid)), frames, feats),
            run(tg, tg.DeepOCSORT(tg.cfg("deepocsort", **reid)), frames, feats),
            run(tg, tg.TRACKTRACK(tg.cfg("tracktrack", **TT_LOW, **reid)), frames, feats, images),
            run(tg, tg.TRACKTRACK(tg.cfg("tracktrack", gmc_method="none", **TT_LOW, **reid)), frames, feats),
            run(tg, tg.BOTSORT(tg.cfg("botsort", gmc_method="none")), frames, feats)]
    write_jsonl(os.path.join(outdir, "reid.jsonl"), frames, 10.0)
    with open(os.path.join(outdir, "reid.feat.txt"), "w") as f:
        f.write("# frame index f0 .. f%d  (strix's native features, yolov8n synthetic seed 7, vtest.avi's first %d "
                "frames, conf %s)\n" % (feats[0].shape[1] - 1, FRAMES, CONF))
        for i, ff in enumerate(feats):
            for k, v in enumerate(ff):
                f.write("%d %d %s\n" % (i, k, " ".join(fmt(x) for x in v)))
    import cv2
    import lap
    import ultralytics

    with open(os.path.join(outdir, "reid.ids.txt"), "w") as f:
        f.write("# frame index botsort botsort_nogmc deepocsort tracktrack tracktrack_nogmc plain x1 y1 x2 y2  "
                "(ultralytics %s, numpy %s, opencv %s, lap %s; with_reid: True, model: auto; tracktrack with %s; "
                "plain: botsort, gmc_method none, no ReID; the box: botsort_nogmc's row)\n"
                % (ultralytics.__version__, np.__version__, cv2.__version__, lap.__version__,
                   ", ".join("%s: %s" % kv for kv in TT_LOW.items())))
        for i in range(len(frames)):
            for k in range(len(frames[i])):
                b = cols[1][1][i][k]
                f.write("%d %d %s %s\n" % (i, k, " ".join("%d" % c[0][i][k] for c in cols),
                                          " ".join(fmt(v) for v in b) if b is not None else "- - - -"))
    summary("", ("botsort", "botsort_nogmc", "deepocsort", "tracktrack", "tracktrack_nogmc", "plain"), cols,
            cols[5][0])


def synthetic_golden(outdir):
    tg = import_track_goldens()

    scenario = tg.scenario
    tg.scenario = lambda name, rng: cross_scenario(tg, rng) if name == "reid_cross" else scenario(name, rng)
    frames, _, _ = tg.simulate("reid_cross", 3000)
    feats = [np.array([synth_feature(c, f, k) for k, (_, _, c) in enumerate(fd)], np.float32).reshape(-1, SYNTH_DIM)
             for f, fd in enumerate(frames)]

    reid = dict(with_reid=True, model="auto", gmc_method="none")
    cols = [run(tg, tg.BOTSORT(tg.cfg("botsort", **reid)), frames, feats),
            run(tg, tg.DeepOCSORT(tg.cfg("deepocsort", **reid)), frames, feats),
            run(tg, tg.TRACKTRACK(tg.cfg("tracktrack", **reid)), frames, feats),
            run(tg, tg.BOTSORT(tg.cfg("botsort", gmc_method="none")), frames, feats)]
    write_jsonl(os.path.join(outdir, "reid_cross.jsonl"), frames, 30.0)
    with open(os.path.join(outdir, "reid_cross.ids.txt"), "w") as f:
        f.write("# frame index botsort deepocsort tracktrack plain  (with_reid: True, model: auto, the features of "
                "synth_feature, %d floats; no frames: no GMC; plain: botsort without ReID)\n" % SYNTH_DIM)
        for i in range(len(frames)):
            for k in range(len(frames[i])):
                f.write("%d %d %s\n" % (i, k, " ".join("%d" % c[0][i][k] for c in cols)))
    summary("reid_cross ", ("botsort", "deepocsort", "tracktrack", "plain"), cols, cols[3][0])


def feature_golden(out):
    import cv2
    import torch
    import ultralytics
    from ultralytics.models.yolo.detect.predict import DetectionPredictor

    sys.path.insert(0, os.path.dirname(__file__))
    from make_goldens import build_model

    with tempfile.TemporaryDirectory() as tmp:
        yolo = build_model(os.path.join(ROOT, "weights", "yolov8.yaml"), "n", weights(tmp))
    img = cv2.imread(os.path.join(DATA, "dog.jpg"))
    opts = dict(imgsz=640, conf=FEAT_CONF, iou=0.7, max_det=300, verbose=False, device="cpu")
    yolo.predict(img, **opts)  # makes the predictor
    p = yolo.predictor

    def pre_hook(module, inputs):  # trackers/track.py's, for model: auto
        p._feats = list(inputs[0])

    h = p.model.model.model[-1].register_forward_pre_hook(pre_hook)
    r = yolo.predict(img, **opts)[0]
    h.remove()
    assert DetectionPredictor.get_obj_feats is not None and hasattr(r, "feats")
    feats = r.feats.numpy() if len(r) else np.zeros((0, 64), np.float32)
    boxes = r.boxes
    with open(out, "w") as f:
        f.write("# k x1 y1 x2 y2 score f0 .. f%d  (Ultralytics %s, torch %s: get_obj_feats on yolov8n synthetic seed "
                "7, dog.jpg, imgsz 640, conf %s, iou 0.7; the first %d of %d detections)\n"
                % (feats.shape[1] - 1, ultralytics.__version__, torch.__version__, FEAT_CONF, MAX_FEAT_DETS, len(r)))
        for k in range(min(len(r), MAX_FEAT_DETS)):
            f.write("%d %s %s %s\n" % (k, " ".join(fmt(v) for v in boxes.xyxy[k].numpy()), fmt(boxes.conf[k]),
                                       " ".join(fmt(v) for v in feats[k])))
    print("%d detections, %d written, feature length %d" % (len(r), min(len(r), MAX_FEAT_DETS), feats.shape[1]))


def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--features":
        feature_golden(sys.argv[2])
        return
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "tests", "golden", "track")
    synthetic_golden(outdir)
    tracker_goldens(outdir)


if __name__ == "__main__":
    main()
