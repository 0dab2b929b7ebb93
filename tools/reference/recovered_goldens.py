#!/usr/bin/env python3
"""recovered_goldens.py — dev-time only: TrackTrack with the recovered
detections on real footage, end to end (tests/golden/track/recovered_real.txt).

The first FRAMES frames of ../shared/data/vtest.avi (or $STRIX_DATA; a
street, static camera; `ffmpeg -i vtest.avi -frames:v 30 -c copy
vtest30.avi`), decoded by the ffmpeg CLI with swscale's bilinear conversion
to RGB as strix's reader decodes them.  strix itself (libstrix.so through
ctypes and python/strix) detects on each frame with its synthetic weights
(`mkweights --model weights/yolov8.yaml --scale n --seed 7`; conf CONF, iou
0.7, imgsz 640, the CPU) with recovered = 1 and takes each frame's recovered
detections (strix_model_recovered: the boxes a looser NMS, IoU 0.95, kept
that the NMS at 0.7 dropped, as Ultralytics' compute_dets_del).  Those
detections go to Ultralytics 8.4.190's TRACKTRACK as `yolo track` hands them
over: tracker.update(boxes, frame, dets_del=(xywh, conf, cls)), xywh of the
recovered boxes as ops.xyxy2xywh makes it in float32; tracktrack.yaml with
TT_LOW (with its defaults it tracks almost none of these ~0.5-score boxes),
its sparseOptFlow GMC on the frames.  Writes, per row tracker.update
returned (Ultralytics' tracked results: rows of recovered detections carry
idx -1):

  frame idx id x1 y1 x2 y2 score class

frame 0-based, idx the detection's index in the frame's detections (by
decreasing score, as infer writes them) or -1, then the row's box (float32,
shortest decimal: the Kalman state after the update, not yet clipped), its
score and class; and one line per frame "# frame F: D detections, R
recovered" first.

Usage, from the repo root after `make BUILD=build/dev CUDA=0 tests shared`:
  /tmp/ulref/bin/python tools/reference/recovered_goldens.py [OUTDIR]
"""
import ctypes
import ctypes.util
import os
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(__file__))
import reid_goldens as rg  # noqa: E402  (its strix loader, weights and float format)

FRAMES = 30
CONF = 0.3


class Detections(ctypes.Structure):
    _fields_ = [("count", ctypes.c_int), ("items", ctypes.c_void_p)]


def strix_detect(frames, wpath):
    """per RGB frame: strix's detections and recovered detections, each [(x1 y1 x2 y2, score, class)]"""
    lib = sorted(f for f in os.listdir(rg.BUILD) if f.startswith("libstrix.so."))[-1]
    ctypes.util.find_library = lambda name: os.path.join(rg.BUILD, lib)
    sys.path.insert(0, os.path.join(rg.ROOT, "python"))
    version = type(sys)("strix._version")
    version.__version__ = "dev"
    sys.modules["strix._version"] = version
    import strix

    m = strix.Model(wpath, model=os.path.join(rg.ROOT, "weights", "yolov8.yaml"), scale="n", conf=CONF, device="cpu")
    m._dopts.recovered = 1
    L = strix._lib
    L.strix_model_recovered.restype = ctypes.c_int
    L.strix_model_recovered.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(Detections), ctypes.c_void_p,
                                        ctypes.c_void_p]
    err = strix._Error()
    out = []
    for rgb in frames:
        r = m._detect(m._frames([rgb], True))[0]
        rd = Detections()
        assert L.strix_model_recovered(m._m, 0, ctypes.byref(rd), None, ctypes.byref(err)) == 0, err.message
        raw = ctypes.string_at(rd.items, rd.count * strix._DET_DTYPE.itemsize) if rd.count else b""
        rec = np.frombuffer(raw, strix._DET_DTYPE)
        as_list = lambda a: [(list(d["box"]), np.float32(d["score"]), int(d["class_id"])) for d in a]  # noqa: E731
        out.append((as_list(r), as_list(rec)))
    m.close()
    return out


def main(outdir):
    tg = rg.import_track_goldens()
    video = os.path.join(rg.DATA, "vtest.avi")
    with tempfile.TemporaryDirectory() as tmp:
        clip = os.path.join(tmp, "clip.avi")
        subprocess.run(["ffmpeg", "-v", "error", "-i", video, "-frames:v", str(FRAMES), "-c", "copy", clip], check=True)
        raw = subprocess.run(["ffmpeg", "-v", "error", "-i", clip, "-f", "rawvideo", "-pix_fmt", "rgb24",
                              "-sws_flags", "bilinear", "-"], check=True, capture_output=True).stdout
        rgb = np.frombuffer(raw, np.uint8).reshape(FRAMES, 576, 768, 3)
        dets = strix_detect(rgb, rg.weights(tmp))

    import cv2
    import lap
    import ultralytics

    tracker = tg.TRACKTRACK(tg.cfg("tracktrack", **rg.TT_LOW))
    lines, n_rec_rows, n_rec = [], 0, 0
    for f, (fd, fr) in enumerate(dets):
        b = tg.Boxes([bx for bx, _, _ in fd], [s for _, s, _ in fd], [c for _, _, c in fd])
        dd = None
        if fr:
            r = tg.Boxes([bx for bx, _, _ in fr], [s for _, s, _ in fr], [c for _, _, c in fr])
            dd = (r.xywh, r.conf, r.cls)
        rows = tracker.update(b, np.ascontiguousarray(rgb[f][:, :, ::-1]), dets_del=dd)
        lines.append("# frame %d: %d detections, %d recovered\n" % (f, len(fd), len(fr)))
        n_rec += len(fr)
        for row in rows:
            idx = int(row[-1])
            n_rec_rows += idx < 0
            lines.append("%d %d %d %s %s %d\n" % (f, idx, int(row[4]), " ".join(rg.fmt(v) for v in row[:4]),
                                                  rg.fmt(row[5]), int(row[6])))
    with open(os.path.join(outdir, "recovered_real.txt"), "w") as out:
        out.write("# frame idx id x1 y1 x2 y2 score class  (ultralytics %s, numpy %s, opencv %s, lap %s; "
                  "TRACKTRACK with %s, sparseOptFlow GMC on the frames, dets_del: strix's recovered detections; "
                  "vtest.avi's first %d frames, yolov8n synthetic seed 7, conf %s)\n"
                  % (ultralytics.__version__, np.__version__, cv2.__version__, lap.__version__,
                     ", ".join("%s: %s" % kv for kv in rg.TT_LOW.items()), FRAMES, CONF))
        out.writelines(lines)
    print("%d frames, %d recovered detections, %d rows, %d of them from recovered detections"
          % (len(dets), n_rec, sum(1 for x in lines if not x.startswith("#")), n_rec_rows))


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(rg.ROOT, "tests", "golden", "track"))
