"""strix — YOLO object detection and tracking from numpy frames, in C.

A thin binding of libstrix (strix's C library, engine/strix.h in its
source tree) through ctypes: ctypes is in Python's standard
library and needs no compiler when the package is installed or imported, and
it releases the GIL for the whole of each C call, so models in several
threads run in parallel.  numpy is the only dependency.

    import strix
    model = strix.Model("yolov8n.pt")
    for r in model(strix.imread("dog.jpg")):
        print(r.boxes, r.scores, r.classes, r.names)

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

__all__ = ["Model", "Results", "StrixError", "imread", "__version__"]

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
                ("cpu_isa", ctypes.c_int), ("cpu_spin_us", ctypes.c_int)]


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
            "strix_track_options": _TrackOptions}

_STRIX_BGR, _STRIX_RGB = 1, 0
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
_tracker_box = _fn("strix_tracker_box", ctypes.c_int, ctypes.c_void_p, ctypes.c_int, _P(ctypes.c_float))
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


class Results:
    """One frame's detections, best first: `boxes` (n, 4) float32 xyxy in the
    frame's pixels, `scores` (n,) float32, `classes` (n,) int32, `names` (n,)
    the class names, and `track_ids` (n,) int32 from Model.track (-1: no
    confirmed track) or None.  From Model.track a tracked detection's box is
    the tracker's, as Ultralytics' tracked results carry it (the Kalman
    state after the update, clipped to the frame), and `detection_boxes`
    (n, 4) holds the detector's own boxes (None from Model.detect)."""

    __slots__ = ("boxes", "scores", "classes", "names", "track_ids", "detection_boxes")

    def __init__(self, dets, names, track_ids=None, tracked_boxes=None):
        self.boxes = dets["box"].copy() if tracked_boxes is None else tracked_boxes
        self.scores = dets["score"].copy()
        self.classes = dets["class_id"].copy()
        self.names = np.array([names[c] for c in self.classes.tolist()], dtype=str)
        self.track_ids = track_ids
        self.detection_boxes = None if tracked_boxes is None else dets["box"].copy()

    def __len__(self):
        return len(self.scores)

    def __repr__(self):
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


class Model:
    """A YOLO detector.

    weights: an Ultralytics .pt checkpoint or ONNX export (the model comes
    from it), or .safetensors with model= its Ultralytics YAML.  model: a
    model YAML (yolov8.yaml; the scale from its name, or scale=).  device:
    "cpu", "cuda" or "cuda:N".  conf, iou, imgsz, max_det: Ultralytics'
    predict arguments, with its defaults.  One model runs one call at a time
    (calls from several threads take turns); use a model per thread to run
    in parallel."""

    def __init__(self, weights, model=None, device="cpu", imgsz=640, conf=0.25, iou=0.7, max_det=300,
                 scale=None, threads=0, half=False, batch=16):
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
        opts.threads, opts.half = int(threads), int(bool(half))
        err = _Error()
        _check(_model_load(ctypes.byref(self._m), ctypes.byref(opts), ctypes.byref(err)), err)
        self.names = {i: _class_name(self._m, i).decode() for i in range(_class_count(self._m))}
        self._dopts = _DetectOptions()
        _detect_options_init(ctypes.byref(self._dopts))
        self._dopts.conf, self._dopts.iou = float(conf), float(iou)
        self._dopts.imgsz, self._dopts.max_det = int(imgsz), int(max_det)
        self.batch = max(1, int(batch))

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

    def _detect(self, imgs):
        """Raw detections of prepared images, batch by batch: a list of structured arrays."""
        if not self._m:
            raise ValueError("strix: the model is closed")
        out = []
        for i in range(0, len(imgs), self.batch):
            chunk = imgs[i:i + self.batch]
            arr = (_Image * len(chunk))(*[c[0] for c in chunk])
            dets, err = (_Detections * len(chunk))(), _Error()
            _check(_model_detect(self._m, arr, len(chunk), ctypes.byref(self._dopts), dets, ctypes.byref(err)), err)
            for d in dets:  # the model owns the items until its next call: copy them now
                raw = ctypes.string_at(d.items, d.count * _DET_DTYPE.itemsize) if d.count else b""
                out.append(np.frombuffer(raw, _DET_DTYPE).copy())
        return out

    def __call__(self, frames, rgb=False):
        """Detect objects in one frame or a list of frames: a list of Results,
        one per frame.  A list runs in batches of `batch` frames; frames of
        one size get the minimal letterbox a single frame gets, frames of
        different sizes in one batch a square imgsz one, as in Ultralytics."""
        imgs = self._frames(frames, rgb)
        with self._lock:
            return [Results(d, self.names) for d in self._detect(imgs)]

    def track(self, frames, rgb=False, tracker="tracktrack"):
        """Detect and track, frame after frame of one stream, as `yolo track`
        does (tracker: "tracktrack", Ultralytics' default, "botsort",
        "bytetrack", "ocsort", "fasttrack" or "deepocsort", with Ultralytics'
        YAML defaults; TrackTrack and BoT-SORT compensate camera motion from
        the frames, Deep OC-SORT's YAML leaves it off).  The
        tracker persists across calls; reset_tracker() starts a new stream."""
        if tracker not in _TRACKERS:
            raise ValueError("strix: tracker must be one of %s, not %r" % (", ".join(_TRACKERS), tracker))
        imgs = self._frames(frames, rgb)
        results = []
        with self._lock:
            if self._tracker and self._tracker_name != tracker:
                _tracker_free(self._tracker)
                self._tracker = ctypes.c_void_p()
            if not self._tracker:
                topts, err = _TrackOptions(), _Error()
                _track_options_init(ctypes.byref(topts), _TRACKERS[tracker])
                _check(_tracker_create(ctypes.byref(self._tracker), ctypes.byref(topts), ctypes.byref(err)), err)
                self._tracker_name = tracker
            for (img, keep), dets in zip(imgs, self._detect(imgs)):
                ids, err = np.full(len(dets), -1, np.int32), _Error()
                cdets = dets.ctypes.data_as(_P(_Detection))
                _check(_tracker_update(self._tracker, ctypes.byref(img), cdets, len(dets),
                                       ids.ctypes.data_as(_P(ctypes.c_int)), ctypes.byref(err)), err)
                boxes, box = dets["box"].copy(), (ctypes.c_float * 4)()
                for i in np.nonzero(ids >= 0)[0].tolist():  # Ultralytics' Results.update clips them
                    if _tracker_box(self._tracker, i, box):
                        boxes[i] = np.clip(np.array(box, np.float32), 0,
                                           np.array([img.width, img.height] * 2, np.float32))
                results.append(Results(dets, self.names, ids, boxes))
        return results

    def reset_tracker(self):
        """Forget the tracks: the next track() call starts a new stream."""
        with self._lock:
            if self._tracker:
                _tracker_free(self._tracker)
                self._tracker, self._tracker_name = ctypes.c_void_p(), None

