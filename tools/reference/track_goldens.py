#!/usr/bin/env python3
"""track_goldens.py — dev-time only: the tracker goldens of tests/golden/track/.

Runs deterministic synthetic streams with known ground truth through
Ultralytics' own trackers (ultralytics/trackers 8.4.190: BYTETracker,
BOTSORT, OCSORT, FASTTracker, DeepOCSORT and TRACKTRACK, configured from
its bytetrack.yaml, botsort.yaml, ocsort.yaml, fasttrack.yaml,
deepocsort.yaml and tracktrack.yaml) and writes for each stream NAME:

  NAME.jsonl    the detections, in infer's video JSON Lines format (what
                `infer --detections` replays): frame (0-based), pts,
                detections sorted by decreasing score, boxes as float32
  NAME.gt.txt   the ground truth, MOTChallenge rows (frame from 1)
  NAME.ref.txt  per detection: "frame index bytetrack botsort botsort_nogmc",
                frame 0-based, index in the frame's JSON array, then the
                identity each Ultralytics tracker returned for it (the idx
                column of tracker.update's rows; -1: not returned)
  NAME.boxes.txt (the streams of BOXES only, to keep the goldens small)
                per detection that BYTETracker or BOTSORT returned: "frame
                index bx1 by1 bx2 by2 sx1 sy1 sx2 sy2", the box of its row
                of tracker.update (float32 as the rows are, shortest
                decimal; STrack.xyxy from the Kalman state after the update:
                what Ultralytics' tracked results carry, before
                Results.update clips them to the image), BYTETracker's then
                BOTSORT's; "- - - -" where that tracker returned none
  NAME.ocsort.txt per detection: "frame index ocsort ocsort_byte
                ocsort_alt x1 y1 x2 y2", the identity OCSORT (oc_sort.py,
                ocsort.yaml's defaults) returned for it, OCSORT's with
                use_byte: True and OCSORT's with delta_t: 1, inertia: 0.5,
                fuse_score: False (-1: not returned), then the default
                OCSORT's row box as in NAME.boxes.txt ("- - - -": none);
                every stream
  NAME.fasttrack.txt per detection: "frame index fasttrack fasttrack_alt
                x1 y1 x2 y2", the identity FASTTracker (fast_tracker.py,
                fasttrack.yaml's defaults) returned for it, FASTTracker's
                with the occlusion knobs of FASTTRACK_ALT, then the default
                FASTTracker's row box, as NAME.ocsort.txt; every stream
  NAME.deepocsort.txt per detection: "frame index deepocsort deepocsort_alt
                x1 y1 x2 y2 ax1 ay1 ax2 ay2", the same for DeepOCSORT
                (deep_oc_sort.py, deepocsort.yaml's defaults: no ReID,
                gmc_method none) and DeepOCSORT with DEEPOCSORT_ALT
                (sparseOptFlow GMC on the camera clips' frames, use_byte),
                then also the _ALT's row box; every stream
  NAME.tracktrack.txt per detection: "frame index tracktrack
                tracktrack_alt x1 y1 x2 y2", the identity TRACKTRACK
                (track_tracker.py, tracktrack.yaml's defaults; its
                sparseOptFlow GMC on the camera clips' frames) returned for it
                and TRACKTRACK's with lost_match_thr: 0.9, min_track_len: 1,
                reduce_step: 0.1, penalty_p: 0.3, tai_thr: 0.4 (-1: not
                returned), then the default TRACKTRACK's row box as in
                NAME.boxes.txt ("- - - -": none); every stream.  No
                loose-NMS detections (dets_del): what `infer --detections`
                replays (loose_goldens.py feeds them)

Two kinds of stream:
- detection streams (cross, occlusion, crowd, enter_exit, slow_fps, burst):
  objects that move, cross, get occluded, miss detections, jitter, enter and
  leave, plus false positives; no frames (BOTSORT gets img=None: no GMC);
- camera clips (pan, shake): frames drawn from NAME.scene.txt (below), a
  textured world seen by a panning / shaking camera with flat-coloured
  objects walking in it; detections from the ground truth with noise;
  BOTSORT runs its sparseOptFlow GMC on the frames.

NAME.scene.txt, one line per frame: "frame cam_x cam_y k" then k objects
"x1 y1 x2 y2 r g b" (integer image pixels, x2/y2 exclusive, drawn in order).
The frame (W x H from the header line) is pixel (x, y) = texture(cam_x + x,
cam_y + y) then the objects; texture(X, Y) is the hash below of the 8x8 cell
(X // 8, Y // 8), all in unsigned 32-bit arithmetic, so tests/test_track.c
draws the same bytes without Python.

Real footage (--real NAME VIDEO DETS.jsonl [OUTDIR], writes only NAME.*):
a clip of /work/shared/data/vtest.avi (768 x 576, 10 fps, a static camera
over a street) and the detections `infer` made on it with strix's
synthetic weights (`mkweights --model weights/yolov8.yaml --scale n --seed
7`; `infer --model weights/yolov8.yaml --scale n --weights W --device cpu
--conf 0.1`), kept from score 0.2 (most of those weights' boxes score about
0.5; the cut keeps the files small), those of the clip's frames.  The clips
(tests/cli_track.sh makes them the same way):
  vtest  `ffmpeg -i vtest.avi -frames:v 150 -c copy vtest.avi`
  hand   `ffmpeg -i vtest.avi -frames:v 28 -vf "crop=640:480:x='2*trunc((64+
         40*sin(n/7)+20*sin(n/3))/2)':y='2*trunc((48+30*sin(n/5+1)+12*sin(n/2))
         /2)'" -c:v ffv1 hand.mkv`: a window moving like a handheld camera,
         lossless (later frames of this window saturate the synthetic
         weights: 300 boxes scoring 1, whose ties decide identities)
  NAME.jsonl     those detections, as NAME.jsonl above, then the frame's
                recovered detections (strix_recovered: strix's
                strix_model_recovered, Ultralytics' compute_dets_del, at conf
                0.1, kept from 0.2), "recovered": true
  NAME.rec.txt   the rows of idx -1 (from recovered detections) the two
                TRACKTRACKs returned, "frame column id x1 y1 x2 y2"
  NAME.real.txt  per detection: "frame index bytetrack botsort ocsort
                tracktrack tracktrack_low fasttrack deepocsort deepocsort_gmc
                x1 y1 x2 y2", the identity each Ultralytics tracker (its
                YAML's defaults; BOTSORT and TRACKTRACK with their
                sparseOptFlow GMC on the frames) returned for it, DeepOCSORT's
                also with gmc_method: sparseOptFlow, TRACKTRACK's with
                REAL_TT_LOW (with its
                defaults it tracks few or none of these detections: few
                score above its 0.6 / 0.7 frames running), then the latter's
                row box clipped to the frame as Results.update clips it
                ("- - - -": none); TRACKTRACK given the recovered detections
                as dets_del (`yolo track` computes them each frame)
The frames the trackers see are decoded by the ffmpeg CLI with swscale's
bilinear conversion to RGB, as strix's reader decodes them (then BGR, as
OpenCV's), so GMC reads the same pixels on both sides.

Ultralytics is imported without PyTorch (its trackers do not use it; a stub
module stands in), so only numpy, opencv-python, lap and scipy are needed:
  python3 -m venv /tmp/ulref && /tmp/ulref/bin/pip install --no-deps ultralytics==8.4.190 &&
  /tmp/ulref/bin/pip install numpy opencv-python-headless lap scipy pyyaml pillow psutil requests \
      matplotlib polars typing_extensions
  /tmp/ulref/bin/python tools/reference/track_goldens.py tests/golden/track
"""
import importlib.abc
import importlib.machinery
import importlib.metadata
import json
import os
import sys
import types
from unittest import mock

import numpy as np


def stub_torch():
    """Ultralytics' package imports torch at load time; the trackers never call it."""

    class Fake(types.ModuleType):
        def __getattr__(self, name):
            if name.startswith("__"):
                raise AttributeError(name)
            if name[:1].isupper():
                m = type(name, (), {"__init__": lambda s, *a, **k: None, "__getattr__": lambda s, n: mock.MagicMock()})
            else:
                m = mock.MagicMock(name=self.__name__ + "." + name)
            setattr(self, name, m)
            return m

    class Finder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
        def find_spec(self, name, path, target=None):
            if name.split(".")[0] in ("torch", "torchvision"):
                return importlib.machinery.ModuleSpec(name, self, is_package=True)
            return None

        def create_module(self, spec):
            m = Fake(spec.name)
            m.__path__ = []
            return m

        def exec_module(self, m):
            if m.__name__ == "torch":
                m.__version__ = "2.5.0"
                m.jit = types.SimpleNamespace(TracerWarning=type("TracerWarning", (Warning,), {}))
            if m.__name__ == "torchvision":
                m.__version__ = "0.20.0"

    sys.meta_path.insert(0, Finder())
    version = importlib.metadata.version
    importlib.metadata.version = lambda n: {"torch": "2.5.0", "torchvision": "0.20.0"}.get(n) or version(n)


stub_torch()
import cv2  # noqa: E402
import ultralytics  # noqa: E402
from ultralytics.trackers.bot_sort import BOTSORT  # noqa: E402
from ultralytics.trackers.byte_tracker import BYTETracker  # noqa: E402
from ultralytics.trackers.deep_oc_sort import DeepOCSORT  # noqa: E402
from ultralytics.trackers.fast_tracker import FASTTracker  # noqa: E402
from ultralytics.trackers.oc_sort import OCSORT  # noqa: E402
from ultralytics.trackers.track_tracker import TRACKTRACK  # noqa: E402
from ultralytics.utils import YAML, IterableSimpleNamespace  # noqa: E402

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


class Boxes:
    """What the trackers read of ultralytics.engine.results.Boxes after .cpu().numpy():
    float32 xyxy, conf, cls, and xywh as ops.xyxy2xywh computes it in float32."""

    def __init__(self, xyxy, conf, cls):
        self.xyxy = np.asarray(xyxy, dtype=np.float32).reshape(-1, 4)
        self.conf = np.asarray(conf, dtype=np.float32)
        self.cls = np.asarray(cls, dtype=np.float32)
        x = self.xyxy
        self.xywh = np.stack([(x[:, 0] + x[:, 2]) / np.float32(2), (x[:, 1] + x[:, 3]) / np.float32(2),
                              x[:, 2] - x[:, 0], x[:, 3] - x[:, 1]], axis=1).astype(np.float32)

    def __len__(self):
        return len(self.conf)

    def __getitem__(self, m):
        return Boxes(self.xyxy[m], self.conf[m], self.cls[m])


def cfg(name, **over):
    path = os.path.join(os.path.dirname(ultralytics.__file__), "cfg", "trackers", name + ".yaml")
    d = YAML.load(path)
    d.update(over)
    return IterableSimpleNamespace(**d)


def run_tracker(tracker, frames, images=None, recovered=None, extra=None):
    """identity per detection (-1: not returned) for each frame, and the
    row's box (float32 x1 y1 x2 y2, None: not returned); recovered
    (TRACKTRACK): per frame the recovered detections, its dets_del, and the
    rows of idx -1 they make go to extra, per frame [(identity, box)]"""
    out, boxes = [], []
    for f, dets in enumerate(frames):
        n = len(dets)
        b = Boxes([[float(v) for v in bx] for bx, _, _ in dets], [float(s) for _, s, _ in dets],
                  [c for _, _, c in dets])
        img = images(f) if images else None
        kw = {}
        if recovered is not None and recovered[f]:
            r = Boxes([bx for bx, _, _ in recovered[f]], [s for _, s, _ in recovered[f]], [c for _, _, c in recovered[f]])
            kw["dets_del"] = (r.xywh, r.conf, r.cls)
        rows = tracker.update(b, img, **kw)
        ids, bx, ex = [-1] * n, [None] * n, []
        for r in rows:
            if int(r[-1]) < 0:
                ex.append((int(r[4]), [np.float32(v) for v in r[:4]]))
                continue
            ids[int(r[-1])] = int(r[4])
            bx[int(r[-1])] = [np.float32(v) for v in r[:4]]
        out.append(ids)
        boxes.append(bx)
        if extra is not None:
            extra.append(ex)
    return out, boxes


def strix_recovered(rgb, frames, conf, min_score):
    """TrackTrack's recovered detections of each RGB frame as strix finds them (strix_model_recovered, through
    python/strix on build/dev's libstrix.so: Ultralytics' compute_dets_del), from its synthetic weights (mkweights
    --model weights/yolov8.yaml --scale n --seed 7) at conf; those scoring >= min_score, as the detections were
    kept.  The detections it finds must be the file's (frames)."""
    import ctypes
    import tempfile

    import reid_goldens as rg

    class Detections(ctypes.Structure):
        _fields_ = [("count", ctypes.c_int), ("items", ctypes.c_void_p)]

    strix = rg.load_strix()
    with tempfile.TemporaryDirectory() as tmp:
        m = strix.Model(rg.weights(tmp), model=os.path.join(rg.ROOT, "weights", "yolov8.yaml"), scale="n", conf=conf,
                        device="cpu")
    m._dopts.recovered = 1
    L = strix._lib
    L.strix_model_recovered.restype = ctypes.c_int
    L.strix_model_recovered.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(Detections), ctypes.c_void_p,
                                        ctypes.c_void_p]
    err, out = strix._Error(), []
    for f, img in enumerate(rgb):
        d = m._detect(m._frames([img], True))[0]
        got = [(list(x["box"]), np.float32(x["score"]), int(x["class_id"])) for x in d if x["score"] >= min_score]
        assert [(list(map(np.float32, b)), s, c) for b, s, c in got] == \
            [(list(map(np.float32, b)), s, c) for b, s, c in frames[f]], "frame %d: not the file's detections" % f
        rd = Detections()
        assert L.strix_model_recovered(m._m, 0, ctypes.byref(rd), None, ctypes.byref(err)) == 0, err.message
        raw = ctypes.string_at(rd.items, rd.count * strix._DET_DTYPE.itemsize) if rd.count else b""
        out.append([(list(x["box"]), np.float32(x["score"]), int(x["class_id"]))
                    for x in np.frombuffer(raw, strix._DET_DTYPE) if x["score"] >= min_score])
    m.close()
    return out


def references(frames, images=None):
    """(bytetrack, botsort, botsort without GMC) identities; (bytetrack, botsort) boxes"""
    b, bb = run_tracker(BYTETracker(cfg("bytetrack")), frames, images)
    s, sb = run_tracker(BOTSORT(cfg("botsort")), frames, images)
    n, _ = run_tracker(BOTSORT(cfg("botsort", gmc_method="none")), frames, images)
    return (b, s, n), (bb, sb)


def ocsort_references(frames):
    """OCSORT's identities and boxes (ocsort.yaml); its identities with use_byte, and with other weights"""
    o, ob = run_tracker(OCSORT(cfg("ocsort")), frames)
    u, _ = run_tracker(OCSORT(cfg("ocsort", use_byte=True)), frames)
    a, _ = run_tracker(OCSORT(cfg("ocsort", delta_t=1, inertia=0.5, fuse_score=False)), frames)
    return o, u, a, ob


# the non-default FASTTracker (tests/test_track.c sets the same): occlusion
# declared sooner, rolled back and enlarged more, lost and forgotten sooner,
# new tracks suppressed at a lower IoU; a short track_buffer, so that the
# occlusion grace outlives it
FASTTRACK_ALT = dict(occ_cover_thresh=0.5, init_iou_suppress=0.5, reset_velocity_offset_occ=2,
                     reset_pos_offset_occ=1, enlarge_bbox_occ=1.3, dampen_motion_occ=0.8,
                     active_occ_to_lost_thresh=4, occ_reappear_window=10, track_buffer=5)
# the non-default DeepOCSORT: camera-motion compensation (acts where frames
# are given: the camera clips) and the low-score association
DEEPOCSORT_ALT = dict(gmc_method="sparseOptFlow", use_byte=True)


def new_references(frames, images=None):
    """FASTTracker's and DeepOCSORT's identities (defaults, then the _ALT
    variant), their default rows' boxes, and DeepOCSORT's _ALT rows' boxes"""
    f, fb = run_tracker(FASTTracker(cfg("fasttrack")), frames, images)
    fa, _ = run_tracker(FASTTracker(cfg("fasttrack", **FASTTRACK_ALT)), frames, images)
    d, db = run_tracker(DeepOCSORT(cfg("deepocsort")), frames, images)
    da, dab = run_tracker(DeepOCSORT(cfg("deepocsort", **DEEPOCSORT_ALT)), frames, images)
    return (f, fa, fb, None), (d, da, db, dab)
TT_ALT = dict(lost_match_thr=0.9, min_track_len=1, reduce_step=0.1, penalty_p=0.3, tai_thr=0.4)


def tracktrack_references(frames, images=None):
    """TRACKTRACK's identities and boxes (tracktrack.yaml); its identities with TT_ALT"""
    t, tb = run_tracker(TRACKTRACK(cfg("tracktrack")), frames, images)
    a, _ = run_tracker(TRACKTRACK(cfg("tracktrack", **TT_ALT)), frames, images)
    return t, a, tb


# the streams whose tracked boxes are written (NAME.boxes.txt)
BOXES = ("cross", "occlusion", "slow_fps", "enter_exit", "pan", "shake")


# ----------------------------------------------------------------- camera clips

CW, CH = 640, 360


def texture_rows(cam_x, cam_y):
    """BGR texture seen by a camera at (cam_x, cam_y): 8x8 cells of hashed colour"""
    X = (np.arange(CW, dtype=np.int64) + cam_x) // 8
    Y = (np.arange(CH, dtype=np.int64) + cam_y) // 8
    h = ((X[None, :] * 73856093) ^ (Y[:, None] * 19349663)) & 0xFFFFFFFF
    h ^= h >> 13
    h = (h * 0x5BD1E995) & 0xFFFFFFFF
    h ^= h >> 15
    img = np.empty((CH, CW, 3), np.uint8)
    img[..., 2] = h & 255  # R
    img[..., 1] = (h >> 8) & 255  # G
    img[..., 0] = (h >> 16) & 255  # B
    return img


def draw(scene_line):
    f, cx, cy, objs = scene_line
    img = texture_rows(cx, cy)
    for x1, y1, x2, y2, r, g, b in objs:
        img[y1:y2, x1:x2] = (b, g, r)
    return img


def camera_clip(name, rng):
    """scene lines, detections per frame, ground truth"""
    n = 150
    if name == "pan":
        # steady pan right with a slow vertical sway; people walking both ways
        cam = [(1000 + 9 * f, 1000 + int(round(12 * np.sin(f / 15.0)))) for f in range(n)]
        objs = [(i + 1, 1000 + 60 + 110 * i + rng.uniform(0, 30), 1000 + rng.uniform(60, 220), rng.uniform(30, 50),
                 rng.uniform(70, 110), rng.uniform(2, 10) * (1 if i % 2 else -1) + 9, rng.uniform(-0.5, 0.5))
                for i in range(10)]
    else:
        # handheld: slow pan plus jumps of up to 20 px every frame; small objects
        cam, x, y = [], 1000, 1000
        for f in range(n):
            cam.append((x + int(rng.integers(-20, 21)), y + int(rng.integers(-14, 15))))
            x += 2
        objs = [(i + 1, 1000 + 40 + 75 * i + rng.uniform(0, 20), 1000 + rng.uniform(40, 260), rng.uniform(22, 32),
                 rng.uniform(45, 70), rng.uniform(-1.5, 1.5) + 2, rng.uniform(-0.5, 0.5)) for i in range(8)]
    colours = {o[0]: (int(rng.integers(0, 256)), int(rng.integers(0, 256)), int(rng.integers(0, 256))) for o in objs}
    scene, frames, gt = [], [], []
    for f in range(n):
        cx, cy = cam[f]
        drawn, dets = [], []
        for oid, wx, wy, w, h, vx, vy in objs:
            x1 = int(round(wx + vx * f)) - cx
            y1 = int(round(wy + vy * f)) - cy
            x2, y2 = x1 + int(round(w)), y1 + int(round(h))
            x1c, y1c, x2c, y2c = max(x1, 0), max(y1, 0), min(x2, CW), min(y2, CH)
            if x2c - x1c < 6 or y2c - y1c < 6:
                continue
            drawn.append((x1c, y1c, x2c, y2c) + colours[oid])
            gt.append((f + 1, oid, x1c, y1c, x2c - x1c, y2c - y1c))
            if rng.random() < 0.05:
                continue  # missed
            j = rng.normal(0, 1.0, 4)
            bx = [x1c + j[0], y1c + j[1], x2c + j[2], y2c + j[3]]
            bx = [min(max(bx[0], 0), CW - 2), min(max(bx[1], 0), CH - 2), min(max(bx[2], 1), CW),
                  min(max(bx[3], 1), CH)]
            low = rng.random() < 0.05
            score = rng.uniform(0.15, 0.45) if low else rng.uniform(0.55, 0.95)
            dets.append((bx, score, 0))
        if rng.random() < 0.2:  # a false positive
            w, h = rng.uniform(20, 60), rng.uniform(30, 90)
            x, y = rng.uniform(0, CW - w), rng.uniform(0, CH - h)
            dets.append(([x, y, x + w, y + h], rng.uniform(0.12, 0.5), 0))
        dets = [([f32(v) for v in b], f32(s), c) for b, s, c in dets]
        dets.sort(key=lambda d: -float(d[1]))
        frames.append(dets)
        scene.append((f, cx, cy, drawn))
    return scene, frames, gt


# ------------------------------------------------------------------------ files

def write_boxes(outdir, name, boxes):
    with open(os.path.join(outdir, name + ".boxes.txt"), "w") as f:
        for i, (fb, fs) in enumerate(zip(*boxes)):
            for k, (b, s) in enumerate(zip(fb, fs)):
                if b is None and s is None:
                    continue
                f.write("%d %d %s %s\n" % (i, k, " ".join(fmt(v) for v in b) if b else "- - - -",
                                           " ".join(fmt(v) for v in s) if s else "- - - -"))


def write_ocsort(outdir, name, refs):
    o, u, a, ob = refs
    with open(os.path.join(outdir, name + ".ocsort.txt"), "w") as f:
        f.write("# frame index ocsort ocsort_byte ocsort_alt x1 y1 x2 y2  (ultralytics %s, numpy %s, lap %s; "
                "ocsort.yaml defaults, with use_byte: True, with delta_t: 1, inertia: 0.5, fuse_score: False)\n"
                % (ultralytics.__version__, np.__version__, __import__("lap").__version__))
        for i in range(len(o)):
            for k in range(len(o[i])):
                b = ob[i][k]
                f.write("%d %d %d %d %d %s\n" % (i, k, o[i][k], u[i][k], a[i][k],
                                                 " ".join(fmt(v) for v in b) if b else "- - - -"))


def write_new(outdir, name, refs):
    """NAME.fasttrack.txt and NAME.deepocsort.txt"""
    def box(b):
        return " ".join(fmt(v) for v in b) if b else "- - - -"

    for kind, (ids, alt, bx, abx), note in zip(("fasttrack", "deepocsort"), refs, (FASTTRACK_ALT, DEEPOCSORT_ALT)):
        with open(os.path.join(outdir, "%s.%s.txt" % (name, kind)), "w") as f:
            f.write("# frame index %s %s_alt x1 y1 x2 y2%s  (ultralytics %s, numpy %s, opencv %s, lap %s; "
                    "%s.yaml defaults, with %s)\n"
                    % (kind, kind, " ax1 ay1 ax2 ay2" if abx else "", ultralytics.__version__, np.__version__,
                       cv2.__version__, __import__("lap").__version__, kind,
                       ", ".join("%s: %s" % kv for kv in note.items())))
            for i in range(len(ids)):
                for k in range(len(ids[i])):
                    f.write("%d %d %d %d %s%s\n" % (i, k, ids[i][k], alt[i][k], box(bx[i][k]),
                                                     " " + box(abx[i][k]) if abx else ""))
def write_tracktrack(outdir, name, refs, note):
    t, a, tb = refs
    with open(os.path.join(outdir, name + ".tracktrack.txt"), "w") as f:
        f.write("# frame index tracktrack tracktrack_alt x1 y1 x2 y2  (ultralytics %s, numpy %s, opencv %s; "
                "tracktrack.yaml defaults, with %s%s)\n"
                % (ultralytics.__version__, np.__version__, cv2.__version__,
                   ", ".join("%s: %s" % kv for kv in TT_ALT.items()), note))
        for i in range(len(t)):
            for k in range(len(t[i])):
                b = tb[i][k]
                f.write("%d %d %d %d %s\n" % (i, k, t[i][k], a[i][k], " ".join(fmt(v) for v in b) if b else "- - - -"))


def write(outdir, name, frames, gt, fps, refs, note):
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
        f.write("# frame index bytetrack botsort botsort_nogmc  (ultralytics %s, numpy %s, opencv %s, lap %s; "
                "bytetrack.yaml and botsort.yaml defaults%s)\n"
                % (ultralytics.__version__, np.__version__, cv2.__version__, __import__("lap").__version__, note))
        for i in range(len(frames)):
            for k in range(len(frames[i])):
                f.write("%d %d %d %d %d\n" % (i, k, refs[0][i][k], refs[1][i][k], refs[2][i][k]))


REAL_TT_LOW = dict(track_high_thresh=0.3, track_low_thresh=0.2, new_track_thresh=0.4)


def real_footage(outdir, name, video, dets_path, min_score=0.2):
    import subprocess
    frames = []
    for line in open(dets_path):
        r = json.loads(line)
        if "detections" not in r:
            continue
        frames.append([([float(v) for v in d["box"]], np.float32(d["score"]), d["class_id"])
                       for d in r["detections"]
                       if np.float32(d["score"]) >= np.float32(min_score) and not d.get("recovered")])
    for dets in frames:
        dets.sort(key=lambda d: -float(d[1]))
    w, h = (int(v) for v in subprocess.run(
        ["ffprobe", "-v", "error", "-select_streams", "v:0", "-show_entries", "stream=width,height", "-of", "csv=p=0",
         video], check=True, capture_output=True, text=True).stdout.split(","))
    raw = subprocess.run(["ffmpeg", "-v", "error", "-i", video, "-f", "rawvideo", "-pix_fmt", "rgb24", "-sws_flags",
                          "bilinear", "-"], check=True, capture_output=True).stdout
    rgb = np.frombuffer(raw, np.uint8).reshape(-1, h, w, 3)
    n_frames = len(rgb)  # the video's frames: the detections of the first n_frames
    frames = frames[:n_frames]
    assert len(frames) == n_frames, (len(rgb), len(frames))
    images = lambda f: np.ascontiguousarray(rgb[f][:, :, ::-1])  # noqa: E731
    ids = [run_tracker(BYTETracker(cfg("bytetrack")), frames, images)[0],
           run_tracker(BOTSORT(cfg("botsort")), frames, images)[0],
           run_tracker(OCSORT(cfg("ocsort")), frames, images)[0]]
    rec = strix_recovered(rgb, frames, 0.1, min_score)
    extra = [[], []]  # the rows of idx -1 of the two TRACKTRACKs
    ids.append(run_tracker(TRACKTRACK(cfg("tracktrack")), frames, images, rec, extra[0])[0])
    t, tb = run_tracker(TRACKTRACK(cfg("tracktrack", **REAL_TT_LOW)), frames, images, rec, extra[1])
    ids.append(t)
    ids.append(run_tracker(FASTTracker(cfg("fasttrack")), frames, images)[0])
    ids.append(run_tracker(DeepOCSORT(cfg("deepocsort")), frames, images)[0])
    ids.append(run_tracker(DeepOCSORT(cfg("deepocsort", gmc_method="sparseOptFlow")), frames, images)[0])
    with open(os.path.join(outdir, name + ".jsonl"), "w") as f:
        for i, dets in enumerate(frames):
            items = ['{"class_id": %d, "score": %s, "box": [%s]%s}' % (c, fmt(s), ", ".join(fmt(v) for v in b), more)
                     for dd, more in ((dets, ""), (rec[i], ', "recovered": true')) for b, s, c in dd]
            f.write('{"frame": %d, "pts": %s, "inferred": true, "detections": [%s]}\n'
                    % (i, json.dumps(round(i / 10.0, 6)), ", ".join(items)))
    lim = np.array([w, h, w, h], np.float32)
    with open(os.path.join(outdir, name + ".rec.txt"), "w") as f:
        f.write("# frame column id x1 y1 x2 y2  (the rows of idx -1, from recovered detections, of the tracktrack and "
                "tracktrack_low columns of %s.real.txt, boxes clipped as there)\n" % name)
        for col, ex in zip((6, 7), extra):
            for i, rows in enumerate(ex):
                for tid, b in rows:
                    f.write("%d %d %d %s\n" % (i, col, tid, " ".join(fmt(v) for v in np.clip(np.array(b, np.float32),
                                                                                              np.float32(0), lim))))
    with open(os.path.join(outdir, name + ".real.txt"), "w") as f:
        f.write("# frame index bytetrack botsort ocsort tracktrack tracktrack_low fasttrack deepocsort deepocsort_gmc "
                "x1 y1 x2 y2  (ultralytics %s, numpy %s, opencv %s, lap %s; the YAMLs' defaults, tracktrack_low with "
                "%s, deepocsort_gmc with gmc_method: sparseOptFlow; GMC sparseOptFlow on the frames; "
                "%s, %d frames)\n"
                % (ultralytics.__version__, np.__version__, cv2.__version__, __import__("lap").__version__,
                   ", ".join("%s: %s" % kv for kv in REAL_TT_LOW.items()), os.path.basename(video), n_frames))
        for i in range(len(frames)):
            for k in range(len(frames[i])):
                b = tb[i][k]
                if b is not None:
                    b = np.clip(np.array(b, np.float32), np.float32(0), lim)
                f.write("%d %d %s %s\n" % (i, k, " ".join("%d" % c[i][k] for c in ids),
                                          " ".join(fmt(v) for v in b) if b is not None else "- - - -"))
    print("%s: %d recovered detections, %d and %d rows from them (tracktrack, tracktrack_low)" % (
        name, sum(map(len, rec)), sum(map(len, extra[0])), sum(map(len, extra[1]))))
    for name_, col in zip(("bytetrack", "botsort", "ocsort", "tracktrack", "tracktrack_low", "fasttrack", "deepocsort",
                           "deepocsort_gmc"), ids):
        print("%s %-10s %5d tracked of %5d detections, %3d identities" % (
            name, name_, sum(i >= 0 for fr in col for i in fr), sum(len(fr) for fr in col),
            len({i for fr in col for i in fr if i >= 0})))


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--real":
        _, _, name, video, dets, *rest = sys.argv
        real_footage(rest[0] if rest else "tests/golden/track", name, video, dets)
        return
    outdir = sys.argv[1] if len(sys.argv) > 1 else "tests/golden/track"
    os.makedirs(outdir, exist_ok=True)
    assert ultralytics.__version__ == "8.4.190", "made with ultralytics 8.4.190 (see the header)"
    for seed, name in enumerate(["cross", "occlusion", "crowd", "enter_exit", "slow_fps", "burst"]):
        frames, gt, fps = simulate(name, 1000 + seed)
        refs, boxes = references(frames)
        write(outdir, name, frames, gt, fps, refs, "; no frames: no GMC")
        if name in BOXES:
            write_boxes(outdir, name, boxes)
        write_ocsort(outdir, name, ocsort_references(frames))
        write_new(outdir, name, new_references(frames))
        write_tracktrack(outdir, name, tracktrack_references(frames), "; no frames: no GMC")
        ids = {i for fr in refs[0] for i in fr if i >= 0}
        print("%-10s %4d frames %5d detections %3d bytetrack identities" % (name, len(frames),
                                                                            sum(len(d) for d in frames), len(ids)))
    for seed, name in enumerate(["pan", "shake"]):
        scene, frames, gt = camera_clip(name, np.random.default_rng(2000 + seed))
        refs, boxes = references(frames, lambda f: draw(scene[f]))
        write(outdir, name, frames, gt, 30.0, refs, "; botsort with gmc_method sparseOptFlow on the drawn frames")
        write_boxes(outdir, name, boxes)
        write_ocsort(outdir, name, ocsort_references(frames))  # OC-SORT has no GMC: the frames are not needed
        write_new(outdir, name, new_references(frames, lambda f: draw(scene[f])))
        write_tracktrack(outdir, name, tracktrack_references(frames, lambda f: draw(scene[f])),
                         "; gmc_method sparseOptFlow on the drawn frames")
        with open(os.path.join(outdir, name + ".scene.txt"), "w") as f:
            f.write("# %d x %d\n" % (CW, CH))
            for fr, cx, cy, objs in scene:
                f.write("%d %d %d %d%s\n" % (fr, cx, cy, len(objs), "".join(" %d %d %d %d %d %d %d" % o for o in objs)))
        print("%-10s %4d frames %5d detections" % (name, len(frames), sum(len(d) for d in frames)))


if __name__ == "__main__":
    main()
