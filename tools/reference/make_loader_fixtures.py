#!/usr/bin/env python3
"""make_loader_fixtures.py — dev-only: tiny Ultralytics checkpoints (.pt) and
ONNX exports for the C loader tests (tests/test_loaders.c), each with the
detections Ultralytics (for a .pt) or ONNX Runtime through Ultralytics'
AutoBackend (for a .onnx) finds on one synthetic picture.  Never needed to
build, run or test strix.

The models are nc = 3 at width 1/16 (tests/loaders/tiny-*.yaml, a few hundred
KB each).  Their weights are PyTorch's default initialisation (seeded) with
BatchNorm statistics calibrated by a few forward passes in training mode, so
activations stay O(1) as in a trained network; the head's last convolutions are
scaled by 0.2 and the class biases zeroed so
the synthetic picture gives a real number of candidate boxes (conf is the 97th
percentile of the best class scores of the family's first .pt, stored with the goldens).

The picture is computed, not stored: pixel (x, y) channel c (RGB) is
(x * 7 + y * 13 + c * 50 + (x * y) % 31) & 255, 200 wide and 150 high
(tests/test_loaders.c builds the same bytes).

Outputs (tests/loaders/):
  tiny-v8.yaml, tiny-11.yaml             the graphs
  v8_f16.pt       Model.save (half, unfused) then strip_optimizer: what a trained best.pt holds
  11_f32_fused.pt torch.save({"model": fused fp32 model}): a fused checkpoint
  v8_bf16.pt      torch.save({"model": bf16 model, ...})
  f-v8-p2.pt, f-v5.pt, f-v5-p6.pt, f-v3.pt: Ultralytics' own YAMLs of those
                  families at nc 3, width 1/16, max 256 channels (Model.save: fp16, unfused)
  tiny-26.yaml, f-26.pt, f-26.onnx, f-26-e2e.onnx  YOLO26 the same way, its ONNX exports
                  (default and nms=False) and goldens of both heads (see yolo26(); `--only 26`
                  makes these alone)
  t-seg.pt, t-pose.pt, t-obb.pt, t-cls.pt, t-seg.onnx, t-cls.onnx, tiny-seg.yaml, tiny-cls.yaml,
  t-cls.probs     the task models (segment, pose, obb, classify) the same way (see tasks();
                  `--only tasks` makes these alone)
  t26-seg.pt, t26-pose.pt, t26-obb.pt  YOLO26's task models, both heads (see tasks26();
                  `--only tasks26` makes these alone)
  v8_op12.onnx    opset 12, static 160x160, not simplified
  v8_op17_dyn.onnx opset 17, dynamic batch/size, simplified (onnxslim)
  11_op17.onnx    opset 17, static 160x160, simplified
  evil.pt         a torch.save zip whose pickle calls os.system (never run by strix: refused)
  bomb-modules.pt, bomb-yaml.pt  pickles sharing one value 2^40 times (refused; `--only hostile`
                  makes these and the two beside them)
  compressed.pt   a ZIP with a deflated data.pkl (torch never writes one: refused)
  NAME.dets       per fixture: a header (conf, iou, imgsz, rect) and one line per box:
                  x1 y1 x2 y2 score class, in source pixels

Usage (the venv of perf/setup.sh, with ultralytics==8.4.190):
  /opt/strix-ref/bin/python tools/reference/make_loader_fixtures.py
"""
import os
import shutil
import sys
import tempfile

import numpy as np
import torch
import ultralytics
from ultralytics import YOLO
from ultralytics.nn.tasks import DetectionModel
from ultralytics.utils.torch_utils import strip_optimizer

OUT = "tests/loaders"
IMGSZ = 160
IOU = 0.7
V8 = """# tiny YOLOv8 for the loader tests: nc 3, width 1/16 (tools/reference/make_loader_fixtures.py)
nc: 3
scales:
  n: [0.33, 0.0625, 1024]
backbone:
  - [-1, 1, Conv, [64, 3, 2]]
  - [-1, 1, Conv, [128, 3, 2]]
  - [-1, 3, C2f, [128, True]]
  - [-1, 1, Conv, [256, 3, 2]]
  - [-1, 6, C2f, [256, True]]
  - [-1, 1, Conv, [512, 3, 2]]
  - [-1, 6, C2f, [512, True]]
  - [-1, 1, Conv, [1024, 3, 2]]
  - [-1, 3, C2f, [1024, True]]
  - [-1, 1, SPPF, [1024, 5]]
head:
  - [-1, 1, nn.Upsample, [None, 2, "nearest"]]
  - [[-1, 6], 1, Concat, [1]]
  - [-1, 3, C2f, [512]]
  - [-1, 1, nn.Upsample, [None, 2, "nearest"]]
  - [[-1, 4], 1, Concat, [1]]
  - [-1, 3, C2f, [256]]
  - [-1, 1, Conv, [256, 3, 2]]
  - [[-1, 12], 1, Concat, [1]]
  - [-1, 3, C2f, [512]]
  - [-1, 1, Conv, [512, 3, 2]]
  - [[-1, 9], 1, Concat, [1]]
  - [-1, 3, C2f, [1024]]
  - [[15, 18, 21], 1, Detect, [nc]]
"""
Y11 = """# tiny YOLO11 for the loader tests: nc 3, width 1/16 (tools/reference/make_loader_fixtures.py)
nc: 3
scales:
  n: [0.50, 0.0625, 1024]
backbone:
  - [-1, 1, Conv, [64, 3, 2]]
  - [-1, 1, Conv, [128, 3, 2]]
  - [-1, 2, C3k2, [256, False, 0.25]]
  - [-1, 1, Conv, [256, 3, 2]]
  - [-1, 2, C3k2, [512, False, 0.25]]
  - [-1, 1, Conv, [512, 3, 2]]
  - [-1, 2, C3k2, [512, True]]
  - [-1, 1, Conv, [1024, 3, 2]]
  - [-1, 2, C3k2, [1024, True]]
  - [-1, 1, SPPF, [1024, 5]]
  - [-1, 2, C2PSA, [1024]]
head:
  - [-1, 1, nn.Upsample, [None, 2, "nearest"]]
  - [[-1, 6], 1, Concat, [1]]
  - [-1, 2, C3k2, [512, False]]
  - [-1, 1, nn.Upsample, [None, 2, "nearest"]]
  - [[-1, 4], 1, Concat, [1]]
  - [-1, 2, C3k2, [256, False]]
  - [-1, 1, Conv, [256, 3, 2]]
  - [[-1, 13], 1, Concat, [1]]
  - [-1, 2, C3k2, [512, False]]
  - [-1, 1, Conv, [512, 3, 2]]
  - [[-1, 10], 1, Concat, [1]]
  - [-1, 2, C3k2, [1024, True]]
  - [[16, 19, 22], 1, Detect, [nc]]
"""


def picture():
    """RGB uint8 [150, 200, 3], the formula in the docstring."""
    y, x = np.mgrid[0:150, 0:200]
    c = np.arange(3)[None, None, :]
    return ((x[..., None] * 7 + y[..., None] * 13 + c * 50 + (x[..., None] * y[..., None]) % 31) & 255).astype(np.uint8)


def make_model(cfg, seed, cls=DetectionModel, o2o_noise=0.0):
    """o2o_noise: each convolution weight of YOLO26's one-to-one head (a copy
    of the one-to-many head at initialisation) times 1 + o2o_noise N(0, 1),
    so the two heads' outputs differ, as after training."""
    torch.manual_seed(seed)
    m = cls(cfg, verbose=False)
    m.names = {0: "red", 1: "green", 2: "blue car"}
    if o2o_noise:
        g = torch.Generator().manual_seed(seed + 1)
        with torch.no_grad():
            for name, p in m.named_parameters():
                if ".one2one_" in name and p.dim() == 4:
                    p.mul_(1 + o2o_noise * torch.randn(p.shape, generator=g))
    for mod in m.modules():  # BatchNorm statistics from data: O(1) activations
        if isinstance(mod, torch.nn.BatchNorm2d):
            mod.momentum = None
    m.train()
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for _ in range(4):
            m(torch.rand(2, 3, 128, 128, generator=g))  # a multiple of every stride (P6: 64)
        det = m.model[-1]
        for branch in ("cv2", "cv3", "one2one_cv2", "one2one_cv3"):  # logits of a few units, not saturated
            for seq in getattr(det, branch, None) or []:
                seq[-1].weight.mul_(0.2)
                if branch.endswith("cv3"):
                    seq[-1].bias.zero_()
    m.eval()
    return m


def detections(model_path, conf, rect, nms=None):
    y = YOLO(model_path, task="detect", verbose=False)
    bgr = np.ascontiguousarray(picture()[..., ::-1])
    r = y.predict(bgr, imgsz=IMGSZ, conf=conf, iou=IOU, max_det=300, verbose=False, device="cpu", rect=rect,
                  nms=nms)[0]
    b = r.boxes
    return np.concatenate([b.xyxy.numpy(), b.conf.numpy()[:, None], b.cls.numpy()[:, None]], axis=1)


def pick_conf(model_path):
    """The 97th percentile of the best class scores over the anchors."""
    y = YOLO(model_path, task="detect", verbose=False)
    bgr = np.ascontiguousarray(picture()[..., ::-1])
    heads = []
    y.predict(bgr, imgsz=IMGSZ, conf=0.5, verbose=False, device="cpu")
    h = y.predictor.model.model.model[-1].register_forward_hook(
        lambda m, a, o: heads.append((o[0] if isinstance(o, tuple) else o).detach()))
    y.predict(bgr, imgsz=IMGSZ, conf=0.5, verbose=False, device="cpu")
    h.remove()
    best = heads[-1][0, 4:].amax(0).numpy()
    return round(float(np.quantile(best, 0.97)), 4)


def write_dets(name, dets, conf, rect, source, model=None):
    with open(os.path.join(OUT, name + ".dets"), "w") as f:
        f.write(f"# {source}; ultralytics {ultralytics.__version__}, torch {torch.__version__}\n")
        f.write(f"conf {conf} iou {IOU} imgsz {IMGSZ} rect {int(rect)}\n")
        for d in dets:
            f.write("%.6f %.6f %.6f %.6f %.7f %d\n" % (d[0], d[1], d[2], d[3], d[4], int(d[5])))
    print(f"{name}: {len(dets)} boxes at conf {conf}, {os.path.getsize(os.path.join(OUT, model or name)) / 1e3:.0f} KB")


class Evil:
    """What a hostile checkpoint holds: unpickling it would run a command."""

    def __reduce__(self):
        return (os.system, ("echo strix must never run this",))


def hostile():
    """evil.pt, compressed.pt, and two small pickles that share one value many
    times: bomb-modules.pt (a chain of 40 modules each holding the next twice:
    2^40 paths) and bomb-yaml.pt (a YAML list holding the next twice, 40 deep)."""
    import zipfile
    torch.save({"model": Evil()}, os.path.join(OUT, "evil.pt"))
    for name, deep_modules in (("bomb-modules.pt", True), ("bomb-yaml.pt", False)):
        m = DetectionModel.__new__(DetectionModel)
        torch.nn.Module.__init__(m)
        leaf, lst = torch.nn.Identity(), [1]
        for _ in range(40):
            parent = torch.nn.Module()
            parent.a, parent.b = leaf, leaf
            leaf, lst = parent, [lst, lst]
        m.model = leaf if deep_modules else torch.nn.Identity()
        m.yaml = {"nc": 1, "backbone": [], "head": lst if not deep_modules else []}
        torch.save({"model": m}, os.path.join(OUT, name))
    with zipfile.ZipFile(os.path.join(OUT, "compressed.pt"), "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("compressed/data.pkl", b"\x80\x02}q\x00." * 8)


# More families, from Ultralytics' own YAMLs at nc 3, width 1/16, at most 256
# channels: FAMILY.pt (fp16, unfused, as Model.save writes) + FAMILY.pt.dets.
FAMILIES = ["v8/yolov8-p2.yaml", "v5/yolov5.yaml", "v5/yolov5-p6.yaml", "v3/yolov3.yaml"]


def family_model(rel, seed, cls=DetectionModel, o2o_noise=0.0):
    import yaml as pyyaml
    from ultralytics.cfg import ROOT
    d = pyyaml.safe_load(open(os.path.join(ROOT, "cfg/models", rel)))
    d["nc"] = 3
    if d.get("scales"):
        d["scales"] = {"n": [d["scales"]["n"][0], 0.0625, 256]}
    else:
        d["depth_multiple"], d["width_multiple"] = 0.33, 0.0625
    d["yaml_file"] = os.path.basename(rel)
    return make_model(d, seed, cls, o2o_noise)


def yolo26(yo):
    """YOLO26 (two heads, reg_max 1, C3k2 with attention).  Ultralytics' predict
    runs the one-to-many head with NMS by default and the one-to-one head with
    top-k selection when nms=False; its ONNX export likewise (nms=False: the
    NMS-free graph).  f-26.pt (fp16, unfused: both heads) with f-26.pt.dets
    (default) and f-26.pt.e2e.dets (nms=False); f-26.onnx (default export) and
    f-26-e2e.onnx (nms=False), opset 17, static, simplified, each with its
    .dets; tiny-26.yaml is the graph the ONNX files need (--model).  conf keeps
    the best 20 or so boxes of the default predict."""
    import copy
    import yaml as pyyaml
    m = family_model("26/yolo26.yaml", 26)
    with open(os.path.join(OUT, "tiny-26.yaml"), "w") as f:  # the graph the ONNX file needs (--model)
        f.write("# tiny YOLO26 for the loader tests: nc 3, width 1/16 (tools/reference/make_loader_fixtures.py)\n")
        pyyaml.safe_dump({k: v for k, v in m.yaml.items() if k != "yaml_file"}, f, sort_keys=False,
                         default_flow_style=None)
    yo.model = m
    pt = os.path.join(OUT, "f-26.pt")
    yo.save(pt)
    tmp = tempfile.mkdtemp()
    try:
        for name, nms in (("f-26.onnx", None), ("f-26-e2e.onnx", False)):
            src = os.path.join(tmp, "f26.pt")
            yo.model = copy.deepcopy(m)
            yo.save(src)
            f = YOLO(src, verbose=False).export(format="onnx", imgsz=IMGSZ, batch=1, device="cpu", opset=17,
                                                 simplify=True, dynamic=False, nms=nms)
            shutil.move(f, os.path.join(OUT, name))
    finally:
        shutil.rmtree(tmp)
    scores = detections(pt, 0.001, True)[:, 4]
    conf = round(float(scores[min(19, len(scores) - 1)]), 4)
    write_dets("f-26.pt", detections(pt, conf, True), conf, True, "Ultralytics YOLO.predict (one-to-many head, NMS)")
    write_dets("f-26.pt.e2e", detections(pt, conf, True, nms=False), conf, True,
               "Ultralytics YOLO.predict(nms=False) (one-to-one head, top-k)", model="f-26.pt")
    for name in ("f-26.onnx", "f-26-e2e.onnx"):
        write_dets(name, detections(os.path.join(OUT, name), conf, False), conf, False,
                   "ONNX Runtime (Ultralytics AutoBackend)")


def tasks():
    """The task models, from Ultralytics' YAMLs the same way (nc 3, width 1/16):
    t-seg.pt (yolov8-seg), t-pose.pt (yolo11-pose), t-obb.pt (yolov8-obb), each
    with the boxes of YOLO.predict (.dets; obb: OBB.xyxy clipped to the image,
    as strix clips every box); t-seg.onnx, t-pose.onnx, t-obb.onnx and
    t-cls.onnx (opset 17, static, not simplified: ConvTranspose and Gemm
    nodes) with tiny-seg.yaml, tiny-pose.yaml, tiny-obb.yaml and tiny-cls.yaml,
    their graphs, and each ONNX's boxes from ONNX Runtime (.onnx.dets); t-cls.pt (yolo11-cls) and t-cls.probs: the
    probabilities of the eval-mode model on the picture at 160 x 160 (the
    docstring's formula, / 255: classification does not letterbox)."""
    import copy
    import yaml as pyyaml
    from ultralytics.nn.tasks import ClassificationModel, OBBModel, PoseModel, SegmentationModel
    tmp = tempfile.mkdtemp()
    try:
        for name, rel, cls, task, onnx in (("t-seg", "v8/yolov8-seg.yaml", SegmentationModel, "segment", True),
                                           ("t-pose", "11/yolo11-pose.yaml", PoseModel, "pose", True),
                                           ("t-obb", "v8/yolov8-obb.yaml", OBBModel, "obb", True),
                                           ("t-cls", "11/yolo11-cls.yaml", ClassificationModel, "classify", True)):
            m = family_model(rel, 31, cls)
            yo = YOLO(os.path.basename(rel).replace("-", "n-", 1), verbose=False)  # yolov8n-seg.yaml: the task
            m.args, m.task = yo.model.args, task  # what the checkpoint records, as a YAML-built model has them
            yo.model = m
            pt = os.path.join(OUT, name + ".pt")
            yo.save(pt)
            if onnx:
                with open(os.path.join(OUT, "tiny-" + name[2:] + ".yaml"), "w") as f:
                    f.write(f"# tiny {os.path.basename(rel)} for the loader tests: nc 3, width 1/16 "
                            "(tools/reference/make_loader_fixtures.py)\n")
                    pyyaml.safe_dump({k: v for k, v in m.yaml.items() if k != "yaml_file"}, f, sort_keys=False,
                                     default_flow_style=None)
                src = os.path.join(tmp, name + ".pt")
                yo.model = copy.deepcopy(m)
                yo.save(src)
                f = YOLO(src, verbose=False).export(format="onnx", imgsz=IMGSZ, batch=1, device="cpu", opset=17,
                                                     simplify=False, dynamic=False)
                shutil.move(f, os.path.join(OUT, name + ".onnx"))
            if task == "classify":
                y, x = np.mgrid[0:IMGSZ, 0:IMGSZ]
                pic = np.stack([((x * 7 + y * 13 + c * 50 + (x * y) % 31) & 255) for c in range(3)])
                with torch.no_grad():
                    probs = YOLO(pt, verbose=False).model.float().eval()(
                        torch.from_numpy(pic[None].astype(np.float32) / 255.0))[0][0].numpy()
                with open(os.path.join(OUT, name + ".probs"), "w") as f:
                    f.write(f"# eval-mode probabilities of {name}.pt (fp16 weights) on the picture at {IMGSZ} x "
                            f"{IMGSZ}; ultralytics {ultralytics.__version__}, torch {torch.__version__}\n")
                    f.write(f"size {IMGSZ}\n" + "".join("%.7f\n" % v for v in probs))
                continue
            bgr = np.ascontiguousarray(picture()[..., ::-1])
            yp = YOLO(pt, task=task, verbose=False)
            opts = dict(imgsz=IMGSZ, iou=IOU, max_det=300, verbose=False, device="cpu")
            b0 = yp.predict(bgr, conf=0.001, **opts)[0]
            scores = np.sort((b0.obb if task == "obb" else b0.boxes).conf.numpy())[::-1]
            conf = round(float(scores[min(19, len(scores) - 1)]), 4)
            r = yp.predict(bgr, conf=conf, **opts)[0]
            b = r.obb if task == "obb" else r.boxes
            xyxy = b.xyxy.numpy().copy()
            xyxy[:, 0::2] = xyxy[:, 0::2].clip(0, 200)
            xyxy[:, 1::2] = xyxy[:, 1::2].clip(0, 150)
            dets = np.concatenate([xyxy, b.conf.numpy()[:, None], b.cls.numpy()[:, None]], axis=1)
            write_dets(name + ".pt", dets, conf, True, f"Ultralytics YOLO.predict ({task})")
            if onnx:
                r = YOLO(os.path.join(OUT, name + ".onnx"), task=task, verbose=False).predict(bgr, conf=conf,
                                                                                               **opts)[0]
                b = r.obb if task == "obb" else r.boxes
                xyxy = b.xyxy.numpy().copy()
                if task == "obb":  # as for the .pt: the bounds clipped to the image
                    xyxy[:, 0::2] = xyxy[:, 0::2].clip(0, 200)
                    xyxy[:, 1::2] = xyxy[:, 1::2].clip(0, 150)
                dets = np.concatenate([xyxy, b.conf.numpy()[:, None], b.cls.numpy()[:, None]], axis=1)
                write_dets(name + ".onnx", dets, conf, False, f"ONNX Runtime (Ultralytics AutoBackend, {task})")
    finally:
        shutil.rmtree(tmp)


def tasks26():
    """YOLO26's task models the same way (nc 3, width 1/16, both heads, fp16,
    unfused; the one-to-one head perturbed, make_model's o2o_noise):
    t26-seg.pt (yolo26-seg: Segment26, Proto26), t26-pose.pt (yolo26-pose:
    Pose26, without its training-only RealNVP flow model, a megabyte at this
    size, as Pose26.fuse drops it), t26-obb.pt (yolo26-obb: OBB26).  Their
    goldens are tools/reference/task_e2e_goldens.py's (the default
    one-to-many head with NMS, and nms=False: the one-to-one head)."""
    from ultralytics.nn.tasks import OBBModel, PoseModel, SegmentationModel
    for name, rel, cls, task in (("t26-seg", "26/yolo26-seg.yaml", SegmentationModel, "segment"),
                                 ("t26-pose", "26/yolo26-pose.yaml", PoseModel, "pose"),
                                 ("t26-obb", "26/yolo26-obb.yaml", OBBModel, "obb")):
        m = family_model(rel, 32, cls, o2o_noise=0.5)
        if task == "pose":
            m.model[-1].flow_model = None
        yo = YOLO(os.path.basename(rel).replace("-", "n-", 1), verbose=False)  # yolo26n-seg.yaml: the task
        m.args, m.task = yo.model.args, task
        yo.model = m
        pt = os.path.join(OUT, name + ".pt")
        yo.save(pt)
        print(f"{name}.pt: {os.path.getsize(pt) / 1e3:.0f} KB")


def seeds():
    """Small valid inputs for fuzz_pt (tests/fuzz/corpus/pt): a DetectionModel
    record holding one Conv (fp16 unfused, fp32 fused).  fuzz_onnx's seeds are
    written at test time by tests/fuzz/seeds_onnx.c."""
    import copy
    from ultralytics.nn.modules.conv import Conv
    os.makedirs("tests/fuzz/corpus/pt", exist_ok=True)
    torch.manual_seed(3)
    m = DetectionModel.__new__(DetectionModel)  # a record like the real one, without a Detect head's 40k weights
    torch.nn.Module.__init__(m)
    m.model = torch.nn.Sequential(Conv(3, 4, 3, 2))
    m.yaml = {"nc": 2, "scales": {"n": [0.5, 0.25, 1024]}, "backbone": [[-1, 1, "Conv", [16, 3, 2]]],
              "head": [[-1, 1, "nn.Upsample", [None, 2, "nearest"]]], "scale": "n", "yaml_file": "seed.yaml"}
    m.names = {0: "a", 1: "b c"}
    torch.save({"model": copy.deepcopy(m).half(), "ema": None, "epoch": -1, "train_args": {"imgsz": 64}},
               "tests/fuzz/corpus/pt/conv_f16.pt")
    fused = copy.deepcopy(m)
    fused.model[0] = Conv(3, 4, 3, 2)
    fused.model[0].conv = torch.nn.Conv2d(3, 4, 3, 2, 1, bias=True)
    delattr(fused.model[0], "bn")
    fused.model[0].forward = fused.model[0].forward_fuse
    torch.save({"ema": fused, "model": None}, "tests/fuzz/corpus/pt/conv_fused_ema.pt")
    torch.save(m.state_dict(), "tests/fuzz/corpus/pt/state_dict.pt")



def main():
    os.makedirs(OUT, exist_ok=True)
    if sys.argv[1:] == ["--only", "26"]:  # one family, without rewriting the other fixtures
        return yolo26(YOLO("yolov8n.yaml", verbose=False))
    if sys.argv[1:] == ["--only", "hostile"]:
        return hostile()
    if sys.argv[1:] == ["--only", "tasks"]:
        return tasks()
    if sys.argv[1:] == ["--only", "tasks26"]:
        return tasks26()
    hostile()
    seeds()
    torch.set_num_threads(2)
    for fname, text in (("tiny-v8.yaml", V8), ("tiny-11.yaml", Y11)):
        with open(os.path.join(OUT, fname), "w") as f:
            f.write(text)
    tmp = tempfile.mkdtemp()
    try:
        v8 = make_model(os.path.join(OUT, "tiny-v8.yaml"), 1)
        y11 = make_model(os.path.join(OUT, "tiny-11.yaml"), 2)
        yo = YOLO("yolov8n.yaml", verbose=False)  # a packaged YAML: no download; the model is replaced

        # a trained best.pt: Model.save (half, unfused), then Ultralytics' own strip_optimizer
        yo.model = v8
        p = os.path.join(OUT, "v8_f16.pt")
        yo.save(p)
        strip_optimizer(p)
        ckpt = {"date": "2026-01-01", "version": ultralytics.__version__, "epoch": -1}
        import copy
        m = copy.deepcopy(y11).float().fuse()
        torch.save({**ckpt, "model": m, "ema": None}, os.path.join(OUT, "11_f32_fused.pt"))
        torch.save({**ckpt, "model": copy.deepcopy(v8).bfloat16(), "ema": None}, os.path.join(OUT, "v8_bf16.pt"))

        for name, model, kw in (("v8_op12.onnx", v8, dict(opset=12, simplify=False, dynamic=False)),
                                ("v8_op17_dyn.onnx", v8, dict(opset=17, simplify=True, dynamic=True)),
                                ("11_op17.onnx", y11, dict(opset=17, simplify=True, dynamic=False))):
            src = os.path.join(tmp, name.replace(".onnx", ".pt"))
            yo.model = copy.deepcopy(model)
            yo.save(src)
            f = YOLO(src, verbose=False).export(format="onnx", imgsz=IMGSZ, batch=1, device="cpu", **kw)
            shutil.move(f, os.path.join(OUT, name))

        fams = []
        for i, rel in enumerate(FAMILIES):
            name = os.path.basename(rel).replace(".yaml", ".pt").replace("yolo", "f-")  # no official name Ultralytics would download
            yo.model = family_model(rel, 10 + i)
            yo.save(os.path.join(OUT, name))
            fams.append(name)
        confs = {}
        for name in ["v8_f16.pt", "11_f32_fused.pt", "v8_bf16.pt", "v8_op12.onnx", "v8_op17_dyn.onnx", "11_op17.onnx"] + fams:
            path = os.path.join(OUT, name)
            family = name.split("_")[0].replace(".pt", "")
            if family not in confs:  # an ONNX file takes the conf of its family's first .pt (same weights)
                confs[family] = pick_conf(path)
            conf = confs[family]
            rect = name.endswith(".pt") or "dyn" in name  # a static ONNX takes only imgsz x imgsz
            src = "Ultralytics YOLO.predict" if name.endswith(".pt") else "ONNX Runtime (Ultralytics AutoBackend)"
            write_dets(name, detections(path, conf, rect), conf, rect, src)
        yolo26(yo)
    finally:
        shutil.rmtree(tmp)


if __name__ == "__main__":
    sys.exit(main())
