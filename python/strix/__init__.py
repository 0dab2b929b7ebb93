"""strix — YOLO detection, segmentation, pose, oriented boxes, classification
and tracking from numpy frames, in C.

A thin binding of libstrix (strix's C library, engine/strix.h in its
source tree) through ctypes: ctypes is in Python's standard
library and needs no compiler when the package is installed or imported, and
it releases the GIL for the whole of each C call, so models in several
threads run in parallel.  numpy is the only dependency.

    import strix
    model = strix.Model("yolov8n.pt")
    for r in model(strix.imread("dog.jpg")):
        print(r.boxes, r.scores, r.classes, r.names)

A segment, pose, obb or classify model's Results also carry, as
Ultralytics' do, masks (data, xy), keypoints (data, xy, conf), obb (xywhr,
xyxyxyxy) or probs (data, top1, top5, top1conf, top5conf).

Frames are numpy uint8 arrays of shape (height, width, 3), BGR as OpenCV
gives them (rgb=True for RGB).  Errors from the library raise StrixError,
carrying its message and status; a frame of the wrong type or shape raises
TypeError or ValueError before anything runs.
"""
import ctypes
import ctypes.util
import glob
import os
import threading

import numpy as np

from ._version import __version__  # written by the build (python/_backend), from strix.h

__all__ = ["Model", "Results", "Masks", "Keypoints", "OBB", "Probs", "StrixError", "imread", "__version__"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def _find_library():
    # the copy this package was built with (pip install ./python), else an
    # installed one (make install)
    bundled = sorted(glob.glob(os.path.join(_HERE, "_lib", "libstrix.so.*")))
    if bundled:
        return bundled[-1]
    found = ctypes.util.find_library("strix")
    if found:
        return found
    raise ImportError("strix: libstrix.so was found neither in this package nor on the system: "
                      "reinstall with `pip install ./python` from a strix checkout, or run `make install`")


_lib = ctypes.CDLL(_find_library())

# --- the C structures (engine/strix.h); tests/python/test_strix.py checks
# every offset and size against the header with the C compiler.


class _Error(ctypes.Structure):
    _fields_ = [("status", ctypes.c_int), ("message", ctypes.c_char * 1024)]


class _ModelOptions(ctypes.Structure):
    _fields_ = [("yaml_path", ctypes.c_char_p), ("weights_path", ctypes.c_char_p),
                ("yaml_dir", ctypes.c_char_p), ("scale", ctypes.c_char), ("nc", ctypes.c_int),
                ("threads", ctypes.c_int), ("device", ctypes.c_char_p), ("half", ctypes.c_int),
                ("nvtx", ctypes.c_int), ("cuda_graphs", ctypes.c_int), ("cuda_sync", ctypes.c_int),
                ("cuda_async", ctypes.c_int), ("nms_free", ctypes.c_int), ("cuda_kernels", ctypes.c_int),
                ("cpu_isa", ctypes.c_int), ("cpu_spin_us", ctypes.c_int), ("cpu_exact_conv", ctypes.c_int),
                ("precision", ctypes.c_int)]


class _Image(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("width", ctypes.c_int), ("height", ctypes.c_int),
                ("stride", ctypes.c_int), ("format", ctypes.c_int), ("uv", ctypes.c_void_p),
                ("uv_stride", ctypes.c_int), ("colorspace", ctypes.c_int), ("full_range", ctypes.c_int),
                ("memory", ctypes.c_int)]


class _OwnedImage(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("width", ctypes.c_int), ("height", ctypes.c_int)]


class _DetectOptions(ctypes.Structure):
    _fields_ = [("conf", ctypes.c_float), ("iou", ctypes.c_float), ("max_det", ctypes.c_int),
                ("imgsz", ctypes.c_int), ("rect", ctypes.c_int), ("agnostic", ctypes.c_int),
                ("classes", ctypes.c_void_p), ("recovered", ctypes.c_int)]


class _Detection(ctypes.Structure):
    _fields_ = [("x1", ctypes.c_float), ("y1", ctypes.c_float), ("x2", ctypes.c_float),
                ("y2", ctypes.c_float), ("score", ctypes.c_float), ("class_id", ctypes.c_int)]


class _Detections(ctypes.Structure):
    _fields_ = [("count", ctypes.c_int), ("items", ctypes.POINTER(_Detection))]


class _TaskValues(ctypes.Structure):
    _fields_ = [("count", ctypes.c_int), ("stride", ctypes.c_int), ("values", ctypes.POINTER(ctypes.c_float))]


class _Polygon(ctypes.Structure):
    _fields_ = [("xy", ctypes.POINTER(ctypes.c_float)), ("n", ctypes.c_int), ("cap", ctypes.c_int)]


class _TrackOptions(ctypes.Structure):
    _fields_ = [("tracker_type", ctypes.c_int), ("track_high_thresh", ctypes.c_float),
                ("track_low_thresh", ctypes.c_float), ("new_track_thresh", ctypes.c_float),
                ("track_buffer", ctypes.c_int), ("match_thresh", ctypes.c_float),
                ("fuse_score", ctypes.c_int), ("gmc_method", ctypes.c_int), ("gmc_grey", ctypes.c_int),
                ("proximity_thresh", ctypes.c_float), ("appearance_thresh", ctypes.c_float),
                ("with_reid", ctypes.c_int), ("delta_t", ctypes.c_int), ("inertia", ctypes.c_float), ("use_byte", ctypes.c_int),
                ("reset_velocity_offset_occ", ctypes.c_int), ("reset_pos_offset_occ", ctypes.c_int),
                ("enlarge_bbox_occ", ctypes.c_double), ("dampen_motion_occ", ctypes.c_double),
                ("active_occ_to_lost_thresh", ctypes.c_int), ("occ_cover_thresh", ctypes.c_float),
                ("occ_reappear_window", ctypes.c_int), ("init_iou_suppress", ctypes.c_float),
                ("alpha_fixed_emb", ctypes.c_float),
                ("lost_match_thr", ctypes.c_float), ("iou_weight", ctypes.c_float), ("reid_weight", ctypes.c_float),
                ("conf_weight", ctypes.c_float), ("angle_weight", ctypes.c_float), ("penalty_p", ctypes.c_float),
                ("penalty_q", ctypes.c_float), ("reduce_step", ctypes.c_float), ("tai_thr", ctypes.c_float),
                ("min_track_len", ctypes.c_int)]


_STRUCTS = {"strix_error": _Error, "strix_model_options": _ModelOptions, "strix_image": _Image,
            "strix_owned_image": _OwnedImage, "strix_detect_options": _DetectOptions,
            "strix_detection": _Detection, "strix_detections": _Detections,
            "strix_track_options": _TrackOptions, "strix_task_values": _TaskValues, "strix_polygon": _Polygon}

_STRIX_BGR, _STRIX_RGB = 1, 0
_TASKS = ["detect", "segment", "pose", "obb", "classify"]  # strix_task, in the header's order
_TRACKERS = {"tracktrack": 5, "botsort": 0, "bytetrack": 1, "ocsort": 2, "fasttrack": 3, "deepocsort": 4}
_DET_DTYPE = np.dtype([("box", "<f4", 4), ("score", "<f4"), ("class_id", "<i4")])


def _fn(name, restype, *argtypes):
    f = getattr(_lib, name)
    f.restype, f.argtypes = restype, list(argtypes)
    return f


_P = ctypes.POINTER
_status_name = _fn("strix_status_name", ctypes.c_char_p, ctypes.c_int)
_model_options_init = _fn("strix_model_options_init", None, _P(_ModelOptions))
_model_load = _fn("strix_model_load", ctypes.c_int, _P(ctypes.c_void_p), _P(_ModelOptions), _P(_Error))
_model_free = _fn("strix_model_free", None, ctypes.c_void_p)
_class_count = _fn("strix_model_class_count", ctypes.c_int, ctypes.c_void_p)
_class_name = _fn("strix_model_class_name", ctypes.c_char_p, ctypes.c_void_p, ctypes.c_int)
_detect_options_init = _fn("strix_detect_options_init", None, _P(_DetectOptions))
_model_detect = _fn("strix_model_detect", ctypes.c_int, ctypes.c_void_p, _P(_Image), ctypes.c_int,
                    _P(_DetectOptions), _P(_Detections), _P(_Error))
_track_options_init = _fn("strix_track_options_init", None, _P(_TrackOptions), ctypes.c_int)
_tracker_create = _fn("strix_tracker_create", ctypes.c_int, _P(ctypes.c_void_p), _P(_TrackOptions), _P(_Error))
_tracker_update = _fn("strix_tracker_update", ctypes.c_int, ctypes.c_void_p, _P(_Image), _P(_Detection),
                      ctypes.c_int, _P(ctypes.c_int), _P(_Error))
_tracker_free = _fn("strix_tracker_free", None, ctypes.c_void_p)
_tracker_recovered = _fn("strix_tracker_recovered", ctypes.c_int, ctypes.c_void_p, _P(_Detection), ctypes.c_void_p,
                         ctypes.c_int, _P(_Error))
_tracker_recovered_id = _fn("strix_tracker_recovered_id", ctypes.c_int, ctypes.c_void_p, ctypes.c_int)
_tracker_box = _fn("strix_tracker_box", ctypes.c_int, ctypes.c_void_p, ctypes.c_int, _P(ctypes.c_float))
_model_task = _fn("strix_model_task", ctypes.c_int, ctypes.c_void_p)
_task_channels = _fn("strix_model_task_channels", ctypes.c_int, ctypes.c_void_p)
_kpt_shape = _fn("strix_model_kpt_shape", None, ctypes.c_void_p, _P(ctypes.c_int), _P(ctypes.c_int))
_task_values = _fn("strix_model_task_values", ctypes.c_int, ctypes.c_void_p, ctypes.c_int, _P(_TaskValues),
                   _P(_Error))
_model_recovered = _fn("strix_model_recovered", ctypes.c_int, ctypes.c_void_p, ctypes.c_int, _P(_Detections),
                       _P(_TaskValues), _P(_Error))
_model_protos = _fn("strix_model_protos", ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t,
                    _P(ctypes.c_int), _P(ctypes.c_int), _P(_Error))
_model_classify = _fn("strix_model_classify", ctypes.c_int, ctypes.c_void_p, _P(_Image), ctypes.c_int, ctypes.c_int,
                      ctypes.c_void_p, _P(_Error))
_process_mask = _fn("strix_process_mask", ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                    ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_void_p,
                    ctypes.c_void_p, _P(_Error))
_process_mask_native = _fn("strix_process_mask_native", ctypes.c_int, *_process_mask.argtypes)  # the same arguments
_mask_segment = _fn("strix_mask_segment", ctypes.c_int, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                    _P(_Polygon), _P(_Error))
_polygon_free = _fn("strix_polygon_free", None, _P(_Polygon))
_scale_coords = _fn("strix_scale_coords", None, ctypes.c_void_p, ctypes.c_int, ctypes.c_int, ctypes.c_int,
                    ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_int)
_xywhr_corners = _fn("strix_xywhr_corners", None, ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p)
_tracker_update_obb = _fn("strix_tracker_update_obb", ctypes.c_int, ctypes.c_void_p, _P(_Image), ctypes.c_void_p,
                          ctypes.c_int, ctypes.c_int, _P(_Detection), ctypes.c_void_p, ctypes.c_int, _P(ctypes.c_int),
                          _P(_Error))
_tracker_box_xywhr = _fn("strix_tracker_box_xywhr", ctypes.c_int, ctypes.c_void_p, ctypes.c_int, _P(ctypes.c_float))
_image_load = _fn("strix_image_load", ctypes.c_int, ctypes.c_char_p, ctypes.c_size_t, _P(_OwnedImage), _P(_Error))
_image_free = _fn("strix_image_free", None, _P(_OwnedImage))


# strix_status, in the header's order
_STATUS = ["ok", "arg", "io", "model", "weights", "image", "nomem", "unsupported", "device", "internal"]


class StrixError(Exception):
    """A failure reported by libstrix: `status` names its strix_status
    ("arg", "io", "model", "weights", "image", "nomem", "unsupported",
    "device", "internal"), `code` is its number, `reason` the library's
    words for it ("i/o error", ...), and the message its one line naming
    the file and what to do."""

    def __init__(self, err):
        self.code = err.status
        self.status = _STATUS[err.status] if 0 <= err.status < len(_STATUS) else "unknown"
        self.reason = _status_name(err.status).decode()
        self.message = err.message.decode(errors="replace")
        super().__init__(self.message)


def _check(status, err):
    if status != 0:
        raise StrixError(err)


def _path(p):
    return os.fsencode(os.fspath(p))


def imread(path, rgb=False):
    """Read an image file as strix's tools read it (JPEG as OpenCV decodes
    it, EXIF orientation applied; PNG, BMP, ... through stb_image): a
    (height, width, 3) uint8 array, BGR like cv2.imread, or RGB with rgb=True."""
    err, img = _Error(), _OwnedImage()
    _check(_image_load(_path(path), 0, ctypes.byref(img), ctypes.byref(err)), err)
    try:
        n = img.width * img.height * 3
        a = np.frombuffer((ctypes.c_uint8 * n).from_address(img.data), np.uint8).reshape(img.height, img.width, 3)
        return a.copy() if rgb else a[:, :, ::-1].copy()
    finally:
        _image_free(ctypes.byref(img))


class Masks:
    """A segment model's masks, as Ultralytics' Results.masks: `data` (n, h,
    w) uint8, 1 inside, at the letterboxed input (h, w: the model's input,
    its padding included) or, with Model(retina_masks=True), at the frame;
    `xy` n (k, 2) float32 arrays, each mask's polygon in the frame's pixels
    (its outer contours, merged as Ultralytics merges them)."""

    __slots__ = ("data", "xy")

    def __init__(self, data, xy):
        self.data, self.xy = data, xy

    def __len__(self):
        return len(self.data)


class Keypoints:
    """A pose model's keypoints, as Ultralytics' Results.keypoints: `data`
    (n, k, 2 or 3) float32, `xy` (n, k, 2) in the frame's pixels (clipped to
    it) and `conf` (n, k) their visibility, or None for a kpt_shape of [k, 2]."""

    __slots__ = ("data", "xy", "conf")

    def __init__(self, data):
        self.data, self.xy = data, data[..., :2]
        self.conf = data[..., 2] if data.shape[2] == 3 else None

    def __len__(self):
        return len(self.data)


class OBB:
    """An obb model's oriented boxes, as Ultralytics' Results.obb: `xywhr`
    (n, 5) float32, centre, sides in the frame's pixels and the angle in
    radians (not clipped), and `xyxyxyxy` (n, 4, 2) their corners.  From
    Model.track a tracked box is the tracker's and `detection_xywhr` holds
    the detector's own (None from a plain call)."""

    __slots__ = ("xywhr", "xyxyxyxy", "detection_xywhr")

    def __init__(self, xywhr, detection_xywhr=None):
        self.xywhr, self.detection_xywhr = xywhr, detection_xywhr
        self.xyxyxyxy = np.empty((len(xywhr), 4, 2), np.float32)
        _xywhr_corners(np.ascontiguousarray(xywhr).ctypes.data, len(xywhr), self.xyxyxyxy.ctypes.data)

    def __len__(self):
        return len(self.xywhr)


class Probs:
    """A classify model's probabilities, as Ultralytics' Results.probs:
    `data` (nc,) float32, `top1` the best class, `top5` the five best (ties
    by lower id), `top1conf` and `top5conf` their probabilities."""

    __slots__ = ("data", "top1", "top5", "top1conf", "top5conf")

    def __init__(self, data):
        self.data = data
        order = np.argsort(-data, kind="stable")[:5]
        self.top5, self.top1 = order.tolist(), int(order[0])
        self.top1conf, self.top5conf = data[self.top1], data[order]


class Results:
    """One frame's results, best first: `boxes` (n, 4) float32 xyxy in the
    frame's pixels, `scores` (n,) float32, `classes` (n,) int32, `names` (n,)
    the class names, and `track_ids` (n,) int32 from Model.track (-1: no
    confirmed track) or None.  From Model.track a tracked detection's box is
    the tracker's, as Ultralytics' tracked results carry it (the Kalman
    state after the update, clipped to the frame; an obb model's: the
    bounds of its rotated box, not clipped), and `detection_boxes` (n, 4)
    holds the detector's own boxes (None from Model.__call__); with
    TrackTrack, the rows after the frame's detections are recovered ones a
    track took (Ultralytics' rows of idx -1: the boxes a looser NMS kept),
    `recovered` (n,) bool marking them (None from Model.__call__).  `task` is the
    model's ("detect", "segment", "pose", "obb", "classify"); `masks`,
    `keypoints`, `obb` and `probs` are its Masks, Keypoints, OBB or Probs,
    None for the other tasks.  A classify model's results have no boxes."""

    __slots__ = ("boxes", "scores", "classes", "names", "track_ids", "detection_boxes", "recovered", "task", "masks",
                 "keypoints", "obb", "probs")

    def __init__(self, dets, names, task="detect", extra=None, track_ids=None, tracked_boxes=None, recovered=None):
        self.boxes = dets["box"].copy() if tracked_boxes is None else tracked_boxes
        self.scores = dets["score"].copy()
        self.classes = dets["class_id"].copy()
        self.names = np.array([names[c] for c in self.classes.tolist()], dtype=str)
        self.track_ids = track_ids
        self.detection_boxes = None if tracked_boxes is None else dets["box"].copy()
        self.recovered = recovered
        self.task = task
        self.masks = self.keypoints = self.obb = self.probs = None
        if extra is not None:
            setattr(self, {"segment": "masks", "pose": "keypoints", "obb": "obb", "classify": "probs"}[task], extra)

    def __len__(self):
        return len(self.scores)

    def __repr__(self):
        if self.probs is not None:
            return "<strix.Results: classify, top1 %d (%.3f)>" % (self.probs.top1, self.probs.top1conf)
        return "<strix.Results: %d detections>" % len(self)


def _as_image(frame, rgb):
    if not isinstance(frame, np.ndarray):
        raise TypeError("strix: a frame must be a numpy array of shape (height, width, 3), not %s"
                        % type(frame).__name__)
    if frame.dtype != np.uint8:
        raise TypeError("strix: a frame must be uint8 (dtype %s given): convert with frame.astype(np.uint8) "
                        "after scaling to 0..255" % frame.dtype)
    if frame.ndim != 3 or frame.shape[2] != 3 or frame.shape[0] < 1 or frame.shape[1] < 1:
        raise ValueError("strix: a frame must have shape (height, width, 3), BGR or RGB; shape %s given"
                         % (frame.shape,))
    if frame.strides[2] != 1 or frame.strides[1] != 3 or frame.strides[0] < 3 * frame.shape[1]:
        frame = np.ascontiguousarray(frame)  # pixels must be packed within a row; rows may be padded
    img = _Image(data=frame.ctypes.data, width=frame.shape[1], height=frame.shape[0], stride=frame.strides[0],
                 format=_STRIX_RGB if rgb else _STRIX_BGR)
    return img, frame


def _copy_dets(d):
    """A strix_detections' items as a structured array (the model owns them until its next call: copied now)."""
    raw = ctypes.string_at(d.items, d.count * _DET_DTYPE.itemsize) if d.count else b""
    return np.frombuffer(raw, _DET_DTYPE).copy()


class Model:
    """A YOLO model of any task: detect, segment, pose, obb or classify (the
    task comes from the model: `task`).

    weights: an Ultralytics .pt checkpoint or ONNX export (the model comes
    from it), or .safetensors with model= its Ultralytics YAML.  model: a
    model YAML (yolov8.yaml; the scale from its name, or scale=).  device:
    "cpu", "cuda" or "cuda:N".  conf, iou, imgsz, max_det, retina_masks:
    Ultralytics' predict arguments, with its defaults.  exact_conv: no
    Winograd on the CPU (strix_model_options.cpu_exact_conv: less memory).  One model runs one
    call at a time (calls from several threads take turns); use a model per
    thread to run in parallel."""

    def __init__(self, weights, model=None, device="cpu", imgsz=640, conf=0.25, iou=0.7, max_det=300,
                 scale=None, threads=0, half=False, batch=16, retina_masks=False, exact_conv=False):
        self._m = ctypes.c_void_p()
        self._tracker, self._tracker_name = ctypes.c_void_p(), None
        self._lock = threading.Lock()
        opts = _ModelOptions()
        _model_options_init(ctypes.byref(opts))
        keep = [_path(weights), _path(model) if model is not None else None, str(device).encode(),
                _path(os.path.join(_HERE, "yaml"))]
        opts.weights_path, opts.yaml_path, opts.device = keep[0], keep[1], keep[2]
        if os.path.isdir(keep[3]):
            opts.yaml_dir = keep[3]  # the family YAMLs bundled in the package, for ONNX exports
        if scale:
            opts.scale = str(scale).encode()[:1]
        opts.threads, opts.half, opts.cpu_exact_conv = int(threads), int(bool(half)), int(bool(exact_conv))
        err = _Error()
        _check(_model_load(ctypes.byref(self._m), ctypes.byref(opts), ctypes.byref(err)), err)
        self.names = {i: _class_name(self._m, i).decode() for i in range(_class_count(self._m))}
        self._dopts = _DetectOptions()
        _detect_options_init(ctypes.byref(self._dopts))
        self._dopts.conf, self._dopts.iou = float(conf), float(iou)
        self._dopts.imgsz, self._dopts.max_det = int(imgsz), int(max_det)
        self.batch = max(1, int(batch))
        self.task, self.retina_masks = _TASKS[_model_task(self._m)], bool(retina_masks)
        kpts, dims = ctypes.c_int(), ctypes.c_int()
        _kpt_shape(self._m, kpts, dims)
        self._kpt_shape, self._nm = (kpts.value, dims.value), _task_channels(self._m)
        if self.retina_masks and self.task != "segment":
            raise ValueError("strix: retina_masks applies to segment models only; %s is a %s model"
                             % (weights, self.task))

    def close(self):
        """Free the model now (also done when it is garbage-collected)."""
        with self._lock:
            if self._tracker:
                _tracker_free(self._tracker)
                self._tracker = ctypes.c_void_p()
            if self._m:
                _model_free(self._m)
                self._m = ctypes.c_void_p()

    def __del__(self):
        if getattr(self, "_m", None) is not None:
            self.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _frames(self, frames, rgb):
        many = isinstance(frames, (list, tuple))
        items = list(frames) if many else [frames]
        if not items:
            return []
        return [_as_image(f, rgb) for f in items]

    def _run(self, imgs, recovered=False):
        """Each prepared image's raw detections (a structured array), its
        task's Masks, Keypoints, OBB or Probs (None for detect), and with
        recovered (TrackTrack; detect and obb models) its recovered
        detections and their xywhr (obb; else None), batch by batch."""
        if not self._m:
            raise ValueError("strix: the model is closed")
        out = []
        for i in range(0, len(imgs), self.batch):
            chunk = imgs[i:i + self.batch]
            if self.task == "classify":
                out += [(np.zeros(0, _DET_DTYPE), Probs(p), None) for p in self._classify(chunk)]
                continue
            arr = (_Image * len(chunk))(*[c[0] for c in chunk])
            dets, err = (_Detections * len(chunk))(), _Error()
            self._dopts.recovered = int(recovered)
            try:
                _check(_model_detect(self._m, arr, len(chunk), ctypes.byref(self._dopts), dets, ctypes.byref(err)),
                       err)
            finally:
                self._dopts.recovered = 0
            protos = self._protos(len(chunk)) if self.task == "segment" else None
            for k, d in enumerate(dets):  # the model owns the items until its next call: copy them now
                fields = self._task_fields(k, _copy_dets(d), chunk[k][0], protos)
                out.append(fields + (self._recovered(k) if recovered else None,))
        return out

    def _recovered(self, k):
        """Image k of the last detect call's recovered detections and, obb,
        their xywhr (n, 5)."""
        rd, tv, err = _Detections(), _TaskValues(), _Error()
        _check(_model_recovered(self._m, k, ctypes.byref(rd), ctypes.byref(tv), ctypes.byref(err)), err)
        xywhr = None
        if self.task == "obb":
            raw = ctypes.string_at(tv.values, rd.count * 5 * 4) if rd.count else b""
            xywhr = np.frombuffer(raw, np.float32).reshape(rd.count, 5).copy()
        return _copy_dets(rd), xywhr

    def _protos(self, n):
        """The last detect call's prototype masks, (n, ph, pw, nm) float32."""
        ph, pw, err = ctypes.c_int(), ctypes.c_int(), _Error()
        _model_protos(self._m, None, 0, ph, pw, ctypes.byref(err))  # ph, pw (the empty buffer: STRIX_E_ARG)
        if not ph.value:
            raise StrixError(err)
        protos = np.empty((n, ph.value, pw.value, self._nm), np.float32)
        _check(_model_protos(self._m, protos.ctypes.data, protos.size, ph, pw, ctypes.byref(err)), err)
        return protos

    def _task_fields(self, k, dets, img, protos):
        """Image k of the last detect call: its detections and its task's fields."""
        if self.task == "detect":
            return dets, None
        tv, err = _TaskValues(), _Error()
        _check(_task_values(self._m, k, ctypes.byref(tv), ctypes.byref(err)), err)
        n = min(len(dets), tv.count)
        raw = ctypes.string_at(tv.values, n * tv.stride * 4) if n else b""
        values, dets = np.frombuffer(raw, np.float32).reshape(n, tv.stride).copy(), dets[:n]
        if self.task == "pose":
            return dets, Keypoints(values.reshape(n, *self._kpt_shape))
        if self.task == "obb":
            return dets, OBB(values[:, :5].copy())
        return self._masks(dets, values[:, :4], values[:, 4:], img, protos[k])

    def _masks(self, dets, unclipped, coeffs, img, protos):
        """Segment, as infer does: the masks of one image's detections
        (process_mask, or process_mask_native with retina_masks), the
        detections whose mask is empty dropped as Ultralytics drops them, and
        each kept mask's polygon in the frame's pixels (Results.masks.xy).
        unclipped, coeffs: (n, 4) and (n, nm), the segment task values (the
        box in the input's pixels, not clipped, then the mask coefficients);
        protos: (ph, pw, nm)."""
        n, (ph, pw, nm), h, w = len(dets), protos.shape, img.height, img.width
        in_h, in_w = 4 * ph, 4 * pw
        mh, mw = (h, w) if self.retina_masks else (in_h, in_w)
        # process_mask crops with NMS's box in the input's pixels, before scale_boxes clips it; with retina_masks
        # the predictor scales (and clips) first: the detection's own box
        boxes = dets["box"].copy() if self.retina_masks else np.ascontiguousarray(unclipped)
        masks, keep, err = np.zeros((n, mh, mw), np.uint8), np.zeros(n, np.uint8), _Error()
        if n:
            chw, coeffs = np.ascontiguousarray(protos.transpose(2, 0, 1)), np.ascontiguousarray(coeffs)
            process = _process_mask_native if self.retina_masks else _process_mask
            _check(process(chw.ctypes.data, nm, ph, pw, coeffs.ctypes.data, boxes.ctypes.data, n, mh, mw,
                           masks.ctypes.data, keep.ctypes.data, ctypes.byref(err)), err)
        kept = keep.astype(bool)
        dets, masks, xy, poly = dets[kept], masks[kept], [], _Polygon()
        try:
            for m in masks:
                _check(_mask_segment(m.ctypes.data, mh, mw, 0, ctypes.byref(poly), ctypes.byref(err)), err)
                pts = np.ctypeslib.as_array(poly.xy, (poly.n, 2)).copy() if poly.n else np.zeros((0, 2), np.float32)
                _scale_coords(pts.ctypes.data, poly.n, 2, mw, mh, w, h, 0)
                xy.append(pts)
        finally:
            _polygon_free(ctypes.byref(poly))
        return dets, Masks(masks, xy)

    def _classify(self, chunk):
        """Ultralytics' ClassificationPredictor on prepared images
        (strix_model_classify: the shortest side resized to imgsz as Pillow
        does, a centre crop, the network): (n, nc) probabilities."""
        arr, err = (_Image * len(chunk))(*[c[0] for c in chunk]), _Error()
        probs = np.empty((len(chunk), len(self.names)), np.float32)
        _check(_model_classify(self._m, arr, len(chunk), self._dopts.imgsz, probs.ctypes.data, ctypes.byref(err)), err)
        return probs

    def __call__(self, frames, rgb=False):
        """Run the model on one frame or a list of frames: a list of Results,
        one per frame.  A list runs in batches of `batch` frames; frames of
        one size get the minimal letterbox a single frame gets, frames of
        different sizes in one batch a square imgsz one, as in Ultralytics."""
        imgs = self._frames(frames, rgb)
        with self._lock:
            return [Results(d, self.names, self.task, extra) for d, extra, _ in self._run(imgs)]

    def track(self, frames, rgb=False, tracker="tracktrack", **options):
        """Detect and track, frame after frame of one stream, as `yolo track`
        does (tracker: "tracktrack", Ultralytics' default, "botsort",
        "bytetrack", "ocsort", "fasttrack" or "deepocsort", with Ultralytics'
        YAML defaults; options: that YAML's keys to change, e.g.
        track_high_thresh=0.3; TrackTrack and BoT-SORT compensate camera
        motion from the frames, Deep OC-SORT's YAML leaves it off).  Masks
        and keypoints stay with their detections; an obb model tracks the
        rotated boxes; TrackTrack also takes a detect or obb model's
        recovered detections (the boxes a looser NMS kept), as Ultralytics
        does, and those a track took are rows after the frame's detections
        (Results.recovered).  The tracker persists across calls with the
        same tracker and options; reset_tracker() starts a new stream.  A
        classify model has nothing to track (ValueError)."""
        if tracker not in _TRACKERS:
            raise ValueError("strix: tracker must be one of %s, not %r" % (", ".join(_TRACKERS), tracker))
        if self.task == "classify":
            raise ValueError("strix: a classify model finds no boxes to track: call the model instead")
        keys = {f for f, _ in _TrackOptions._fields_} - {"tracker_type"}
        bad = sorted(set(options) - keys)
        if bad:
            raise ValueError("strix: unknown tracker option %s (the tracker YAML's keys: %s)"
                             % (", ".join(bad), ", ".join(sorted(keys))))
        imgs = self._frames(frames, rgb)
        results = []
        with self._lock:
            config = (tracker, tuple(sorted(options.items())))
            if self._tracker and self._tracker_name != config:
                _tracker_free(self._tracker)
                self._tracker = ctypes.c_void_p()
            if not self._tracker:
                topts, err = _TrackOptions(), _Error()
                _track_options_init(ctypes.byref(topts), _TRACKERS[tracker])
                for k, v in options.items():
                    setattr(topts, k, v)
                _check(_tracker_create(ctypes.byref(self._tracker), ctypes.byref(topts), ctypes.byref(err)), err)
                self._tracker_name = config
            recovered = tracker == "tracktrack" and self.task in ("detect", "obb")
            for (img, keep), (dets, extra, rec) in zip(imgs, self._run(imgs, recovered)):
                results.append(self._track_frame(img, dets, extra, rec))
        return results

    def _track_frame(self, img, dets, extra, rec):
        """One frame through the tracker (rec: TrackTrack's recovered
        detections and their xywhr, or None): its Results with identities and
        the tracker's boxes, the recovered detections a track took after the
        frame's own."""
        ids, err = np.full(len(dets), -1, np.int32), _Error()
        cdets, cids = dets.ctypes.data_as(_P(_Detection)), ids.ctypes.data_as(_P(ctypes.c_int))
        obb = self.task == "obb"
        if rec is not None:
            rd, rx = rec
            _check(_tracker_recovered(self._tracker, rd.ctypes.data_as(_P(_Detection)), rx.ctypes.data if obb else None,
                                      len(rd), ctypes.byref(err)), err)
        if obb:  # tracked on the rotated boxes; no grey image: the tracker makes it from the frame
            _check(_tracker_update_obb(self._tracker, ctypes.byref(img), None, img.width, img.height, cdets,
                                       extra.xywhr.ctypes.data, len(dets), cids, ctypes.byref(err)), err)
        else:
            _check(_tracker_update(self._tracker, ctypes.byref(img), cdets, len(dets), cids, ctypes.byref(err)), err)
        n, taken = len(dets), []
        if rec is not None:  # Ultralytics' rows of idx -1
            taken = [j for j in range(len(rd)) if _tracker_recovered_id(self._tracker, j) >= 0]
            ids = np.concatenate([ids, np.array([_tracker_recovered_id(self._tracker, j) for j in taken], np.int32)])
            dets = np.concatenate([dets, rd[taken]])
        xywhr = (np.concatenate([extra.xywhr, rx[taken]]) if taken else extra.xywhr.copy()) if obb else None
        boxes, box, r = dets["box"].copy(), (ctypes.c_float * 4)(), (ctypes.c_float * 5)()
        own_xywhr = xywhr.copy() if obb else None
        for i in np.nonzero(ids >= 0)[0].tolist():
            j = i if i < n else n + taken[i - n]  # the tracker's index of a recovered one: after the update's
            if not _tracker_box(self._tracker, j, box):
                continue
            if obb and _tracker_box_xywhr(self._tracker, j, r):  # OBB.xyxy: its corners' bounds, not clipped
                boxes[i], xywhr[i] = np.array(box, np.float32), np.array(r, np.float32)
            else:  # Ultralytics' Results.update clips them
                boxes[i] = np.clip(np.array(box, np.float32), 0, np.array([img.width, img.height] * 2, np.float32))
        if obb:
            extra = OBB(xywhr, own_xywhr)
        return Results(dets, self.names, self.task, extra, ids, boxes, np.arange(len(dets)) >= n)

    def reset_tracker(self):
        """Forget the tracks: the next track() call starts a new stream."""
        with self._lock:
            if self._tracker:
                _tracker_free(self._tracker)
                self._tracker, self._tracker_name = ctypes.c_void_p(), None

