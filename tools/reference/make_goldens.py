#!/usr/bin/env python3
"""make_goldens.py — dev-only: dump Ultralytics' own results on strix's synthetic
weights, for the C golden tests (tests/test_golden.c).  Never needed to build,
run or test strix.

For each case it builds the model from strix's YAML with Ultralytics, loads the
very safetensors file `build/mkweights` writes (same seed), runs
`YOLO.predict` on ../shared/data images and records, through hooks:
  (a) the letterboxed input tensor (exactly k/255: stored as uint8 NHWC RGB),
  (b) the Detect output y = [B, 4 + nc, A] (decoded boxes + sigmoid scores),
      stored for every anchor that is a detection candidate (best score >
      conf) plus every 32nd anchor (keeps tests/golden/ small; the C test
      computes the relative L2 error over exactly these rows),
  (c) the final detections per image (x1 y1 x2 y2 score class, source pixels).

With --tasks it writes instead the task-head goldens (TASK_CASES:
segment, pose, obb, classify): the raw head outputs on a computed picture
(YOLO26's `_e2e` cases: its one-to-one head, weights from mkweights --nms-free).

Usage (from the repo root, after `make`):
  python3 -m venv /opt/strix-ref && /opt/strix-ref/bin/pip install ultralytics safetensors
  /opt/strix-ref/bin/python tools/reference/make_goldens.py --build build --data ../shared/data
"""
import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile

import cv2
import numpy as np
import torch
import ultralytics
from safetensors.numpy import save_file
from safetensors.torch import load_file
from ultralytics import YOLO

# name, yaml, scale, seed, images, imgsz, batch, iou.  Random weights score
# every anchor alike, so conf is chosen per case: the 95th percentile of the
# first batch's first image's best class scores (about 5% of anchors become candidates).
CASES = [
    ("yolov8n_rect", "weights/yolov8.yaml", "n", 7, ["dog", "horses", "person", "eagle"], 640, 1, 0.7),
    ("yolov8s_batch2", "weights/yolov8.yaml", "s", 8, ["horses", "eagle"], 640, 2, 0.7),
    ("yolo11n_rect", "weights/yolo11.yaml", "n", 9, ["dog", "horses", "person", "eagle"], 640, 1, 0.7),
    ("yolo11n_batch3_320", "weights/yolo11.yaml", "n", 9, ["horses", "eagle", "dog"], 320, 3, 0.5),
]
SAMPLE_EVERY = 32

# Task heads (--tasks): name, yaml, scale, seed.  The raw head outputs of the
# model in eval mode (one-to-many head for YOLO26; its one-to-one head for the
# `_e2e` cases) on a computed 256 x 256
# picture: pixel (x, y) channel c (RGB) = ((x * 7 + y * 13 + c * 50 + (x * y) % 31) & 255) / 255,
# which tests/test_golden.c builds the same way.
TASK_CASES = [
    ("task_yolov8n_seg", "weights/yolov8-seg.yaml", "n", 21),
    ("task_yolo26n_seg", "weights/yolo26-seg.yaml", "n", 22),
    ("task_yolo11n_pose", "weights/yolo11-pose.yaml", "n", 23),
    ("task_yolo26n_pose", "weights/yolo26-pose.yaml", "n", 24),
    ("task_yolov8n_obb", "weights/yolov8-obb.yaml", "n", 25),
    ("task_yolo26n_obb", "weights/yolo26-obb.yaml", "n", 26),
    ("task_yolo11n_cls", "weights/yolo11-cls.yaml", "n", 27),
    ("task_yolo26n_seg_e2e", "weights/yolo26-seg.yaml", "n", 28),
    ("task_yolo26n_pose_e2e", "weights/yolo26-pose.yaml", "n", 29),
    ("task_yolo26n_obb_e2e", "weights/yolo26-obb.yaml", "n", 30),
]
TASK_SIZE = 256
TASK_ROW_EVERY = 8     # head rows kept: every 8th anchor and the 16 best-scoring ones
TASK_PROTO_EVERY = 9   # proto pixels kept: every 9th (row-major)
# tensors a checkpoint of these models holds that strix's synthetic weights
# leave out: the other head (YOLO26's one-to-one), training-only modules
TASK_UNSYNTHESISED = ("one2one_", "flow_model", "cv4_sigma", "proto.semseg", "num_batches_tracked")


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def build_model(yaml_path, scale, weights):
    import yaml as pyyaml

    with open(yaml_path) as f:
        d = pyyaml.safe_load(f)
    d["scale"] = scale
    d["yaml_file"] = yaml_path
    from ultralytics.nn.tasks import DetectionModel

    model = DetectionModel(d, verbose=False)
    sd = load_file(weights)
    full = model.state_dict()
    for k, v in full.items():  # buffers the checkpoint does not carry
        if k.endswith("num_batches_tracked") and k not in sd:
            sd[k] = v
    model.load_state_dict(sd, strict=True)
    model.names = {i: f"class{i}" for i in range(model.yaml["nc"])}
    y = YOLO("yolov8n.yaml", verbose=False)  # a packaged YAML: no download; the model is replaced
    y.model = model
    return y


def task_picture():
    y, x = np.mgrid[0:TASK_SIZE, 0:TASK_SIZE]
    chans = [((x * 7 + y * 13 + c * 50 + (x * y) % 31) & 255) for c in range(3)]
    return torch.from_numpy(np.stack(chans)[None].astype(np.float32) / 255.0)  # [1, 3, H, W] RGB


def run_task_case(args, case, tmp):
    from ultralytics.nn.tasks import ClassificationModel, OBBModel, PoseModel, SegmentationModel
    import yaml as pyyaml

    name, yaml_path, scale, seed = case
    e2e = name.endswith("_e2e")  # YOLO26's one-to-one head: its weights alone (mkweights --nms-free)
    wpath = os.path.join(tmp, f"{name}.safetensors")
    subprocess.run([os.path.join(args.build, "mkweights"), "--model", yaml_path, "--scale", scale,
                    "--seed", str(seed), "--out", wpath, "--overwrite"] + (["--nms-free"] if e2e else []), check=True)
    with open(yaml_path) as f:
        d = pyyaml.safe_load(f)
    d["scale"] = scale
    task = {"Segment": "segment", "Segment26": "segment", "Pose": "pose", "Pose26": "pose", "OBB": "obb",
            "OBB26": "obb", "Classify": "classify"}[d["head"][-1][2]]
    cls = {"segment": SegmentationModel, "pose": PoseModel, "obb": OBBModel, "classify": ClassificationModel}[task]
    model = cls(d, verbose=False)
    sd = load_file(wpath)
    missing, unexpected = model.load_state_dict(sd, strict=False)
    assert not unexpected, unexpected
    idx = len(model.model) - 1
    other = tuple(f"model.{idx}.{h}." for h in ("cv2", "cv3", "cv4", "cv4_kpts")) if e2e else ("one2one_",)
    assert all(any(t in k for t in TASK_UNSYNTHESISED[1:] + other) for k in missing), missing
    model.eval()
    head = model.model[-1]
    if getattr(head, "one2one_cv2", None) is not None:
        head.end2end = e2e  # the one-to-many head, as strix runs it by default; the one-to-one with nms_free
    with torch.no_grad():
        out = model(task_picture())
        if e2e:  # the one-to-one head's rows before its top-k: x1 y1 x2 y2 (obb: xywh), scores, the task's
            y1 = head._inference(out[1]["one2one"])
    tensors = {}
    if task == "classify":
        tensors["probs"] = out[0][0].numpy().astype(np.float32)
    else:
        y = y1 if e2e else out[0][0] if task == "segment" else out[0]
        rows = y[0].transpose(0, 1).contiguous().numpy()  # [A, 4 + nc + extra]
        nc = head.nc
        best = np.argsort(-rows[:, 4:4 + nc].max(axis=1), kind="stable")[:16]
        keep = np.union1d(np.arange(0, rows.shape[0], TASK_ROW_EVERY), best)
        tensors["head_rows"] = keep.astype(np.int32)
        tensors["head"] = rows[keep].astype(np.float32)
        if task == "segment":
            proto = out[0][1][0].permute(1, 2, 0).reshape(-1, head.nm).numpy()  # [H/4 * W/4, nm] NHWC
            pix = np.arange(0, proto.shape[0], TASK_PROTO_EVERY)
            tensors["proto_pixels"] = pix.astype(np.int32)
            tensors["proto"] = proto[pix].astype(np.float32)
    pred_meta = {}
    if task != "classify" and ("26" not in name or e2e):
        # YOLO.predict on the computed picture at 200 x 150 (letterboxed to 256 x 192): boxes after NMS (rotated
        # for obb; e2e: the one-to-one head's top-k, nms=False) in source pixels, and the keypoints or xywhr of each
        pic = task_picture()[0, :, :150, :200]  # [3, 150, 200] RGB
        bgr = np.ascontiguousarray((pic.permute(1, 2, 0).numpy()[:, :, ::-1] * 255).round().astype(np.uint8))
        yolo = YOLO({"segment": "yolov8n-seg.yaml", "pose": "yolov8n-pose.yaml", "obb": "yolov8n-obb.yaml"}[task],
                    verbose=False)
        yolo.model = model
        opts = dict(imgsz=TASK_SIZE, iou=0.7, max_det=300, verbose=False, device="cpu", **({"nms": False} if e2e else {}))
        r = yolo.predict(bgr, conf=0.001, **opts)[0]  # conf: about 30 boxes after NMS
        confs = np.sort((r.obb if task == "obb" else r.boxes).conf.numpy())[::-1]
        conf = round(float(confs[min(30, len(confs) - 1)]), 4)
        r = yolo.predict(bgr, conf=conf, **opts)[0]
        if task == "obb":
            o = r.obb
            dets = np.concatenate([o.xyxy.numpy(), o.conf.numpy()[:, None], o.cls.numpy()[:, None]], axis=1)
            tensors["xywhr"] = o.xywhr.numpy().astype(np.float32).reshape(-1, 5)
        else:
            b = r.boxes
            dets = np.concatenate([b.xyxy.numpy(), b.conf.numpy()[:, None], b.cls.numpy()[:, None]], axis=1)
        if task == "pose":
            tensors["keypoints"] = r.keypoints.data.numpy().astype(np.float32).reshape(len(dets), -1)
        tensors["dets"] = dets.astype(np.float32).reshape(-1, 6)
        pred_meta = {"conf": str(conf), "iou": "0.7", "picture": "200x150", **({"nms_free": "1"} if e2e else {})}
    meta = {"case": name, "yaml": yaml_path, "scale": scale, "seed": str(seed), "task": task, **pred_meta,
            "size": str(TASK_SIZE), "nc": str(d["nc"]), "weights_sha256": sha256(wpath),
            "synthetic_version": json.loads(open(wpath, "rb").read(8 + int.from_bytes(open(wpath, "rb").read(8), "little"))[8:])
            ["__metadata__"]["strix_synthetic_version"],
            "ultralytics": ultralytics.__version__, "torch": torch.__version__,
            "regenerate": "/opt/strix-ref/bin/python tools/reference/make_goldens.py --tasks --build build"}
    out_path = os.path.join(args.out, f"{name}.safetensors")
    save_file(tensors, out_path, metadata=meta)
    print(f"{name}: {', '.join(f'{k} {list(v.shape)}' for k, v in tensors.items())}, "
          f"{os.path.getsize(out_path) / 1e3:.0f} kB")


def fnv1a64(data):
    h = 0xCBF29CE484222325
    for b in data:
        h = ((h ^ b) * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return h


def run_case(args, case, tmp, inputs):
    name, yaml_path, scale, seed, images, imgsz, batch, iou = case
    wpath = os.path.join(tmp, f"{name}.safetensors")
    subprocess.run([os.path.join(args.build, "mkweights"), "--model", yaml_path, "--scale", scale,
                    "--seed", str(seed), "--out", wpath, "--overwrite"], check=True)
    yolo = build_model(yaml_path, scale, wpath)
    inner = yolo.model

    captured = {"inputs": [], "heads": []}
    imgs = [cv2.imread(os.path.join(args.data, f"{n}.jpg")) for n in images]
    opts = dict(imgsz=imgsz, iou=iou, max_det=300, verbose=False, device="cpu")
    yolo.predict(imgs[:batch], batch=batch, conf=0.5, **opts)  # creates (and fuses) the predictor's model
    pm = yolo.predictor.model.model
    hooks = [pm.register_forward_pre_hook(lambda m, a: captured["inputs"].append(a[0].detach().clone())),
             pm.model[-1].register_forward_hook(lambda m, a, o: captured["heads"].append(
                 (o[0] if isinstance(o, tuple) else o).detach().clone()))]
    yolo.predict(imgs[:batch], batch=batch, conf=0.5, **opts)
    best = captured["heads"][-1][0, 4:].amax(0).numpy()
    conf = round(float(np.quantile(best[best < 0.999], 0.95)), 4)  # saturated anchors aside
    opts["conf"] = conf

    tensors, metas = {}, {}
    all_dets = []
    for start in range(0, len(imgs), batch):
        chunk = imgs[start:start + batch]
        captured["inputs"].clear()
        captured["heads"].clear()
        results = yolo.predict(chunk, batch=len(chunk), **opts)
        x = captured["inputs"][-1]  # [B, 3, H, W] float32 RGB /255
        y = captured["heads"][-1]  # [B, 4 + nc, A]
        u8 = torch.round(x * 255.0).clamp(0, 255).to(torch.uint8).permute(0, 2, 3, 1).contiguous().numpy()
        assert np.abs(u8.astype(np.float32) / 255.0 - x.permute(0, 2, 3, 1).numpy()).max() < 1e-6
        for b, r in enumerate(results):
            i = start + b
            head = y[b].transpose(0, 1).contiguous().numpy()  # [A, 4 + nc]
            cand = head[:, 4:].max(axis=1) > conf
            keep = np.nonzero(cand | (np.arange(head.shape[0]) % SAMPLE_EVERY == 0))[0]
            key = f"lb.{images[i]}.{u8.shape[1]}x{u8.shape[2]}"
            if key in inputs:
                assert np.array_equal(inputs[key], u8[b]), key
            inputs[key] = u8[b]
            metas[f"img{i}.input"] = key
            metas[f"img{i}.source"] = f"src.{images[i]}"
            tensors[f"img{i}.head_rows"] = keep.astype(np.int32)
            tensors[f"img{i}.head"] = head[keep].astype(np.float32)
            boxes = r.boxes
            det = np.concatenate([boxes.xyxy.numpy(), boxes.conf.numpy()[:, None],
                                  boxes.cls.numpy()[:, None]], axis=1).astype(np.float32)
            tensors[f"img{i}.dets"] = det.reshape(-1, 6)
            metas[f"img{i}.name"] = f"{images[i]}.jpg"
            metas[f"img{i}.anchors"] = str(head.shape[0])
            metas[f"img{i}.candidates"] = str(int(cand.sum()))
            metas[f"img{i}.tensor_hw"] = f"{u8.shape[1]}x{u8.shape[2]}"
            metas[f"img{i}.batch_start"] = str(start)
            all_dets.append(len(det))
    for h in hooks:
        h.remove()
    metas.update({
        "case": name, "yaml": yaml_path, "scale": scale, "seed": str(seed), "imgsz": str(imgsz),
        "batch": str(batch), "conf": str(conf), "iou": str(iou), "images": str(len(imgs)),
        "nc": str(inner.yaml["nc"]), "sample_every": str(SAMPLE_EVERY),
        "weights_sha256": sha256(wpath),
        "synthetic_version": json.loads(open(wpath, "rb").read(8 + int.from_bytes(open(wpath, "rb").read(8), "little"))[8:])
        ["__metadata__"]["strix_synthetic_version"],
        "ultralytics": ultralytics.__version__, "torch": torch.__version__, "opencv": cv2.__version__,
        "numpy": np.__version__,
        "regenerate": "/opt/strix-ref/bin/python tools/reference/make_goldens.py --build build --data ../shared/data",
    })
    out = os.path.join(args.out, f"{name}.safetensors")
    save_file(tensors, out, metadata=metas)
    print(f"{name}: detections per image {all_dets}, candidates "
          f"{[metas[f'img{i}.candidates'] for i in range(len(imgs))]}, {os.path.getsize(out) / 1e6:.1f} MB")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--out", default="tests/golden")
    ap.add_argument("--only", default="")
    ap.add_argument("--tasks", action="store_true", help="only the task-head goldens (TASK_CASES)")
    args = ap.parse_args()
    torch.set_num_threads(max(1, os.cpu_count() or 1))
    if args.tasks:
        with tempfile.TemporaryDirectory() as tmp:
            for case in TASK_CASES:
                if not args.only or args.only in case[0]:
                    run_task_case(args, case, tmp)
        write_readme(args)
        return 0
    inputs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for case in CASES:
            if args.only and args.only not in case[0]:
                continue
            run_case(args, case, tmp, inputs)
    # only hashes of the letterboxed inputs are stored: the C test letterboxes
    # the same JPEGs (decoded with libjpeg-turbo, as OpenCV does) and compares
    with open(os.path.join(args.out, "inputs.txt"), "w") as f:
        f.write("# Ultralytics' letterboxed inputs (uint8 NHWC RGB, input tensor x 255): FNV-1a 64 of the bytes,\n"
                "# made by tools/reference/make_goldens.py; the sources are ../shared/data/<name>.jpg as "
                "libjpeg-turbo decodes them\n")
        for key in sorted(inputs):
            f.write("%s %016x\n" % (key, fnv1a64(inputs[key].tobytes())))
    write_readme(args)


def write_readme(args):
    path = os.path.join(args.out, "README.md")
    # the sections other scripts' goldens added (## tasks/, ## gmc/, ...) stay
    old = open(path).read() if os.path.exists(path) else ""
    rest = old[old.index("\n## ") :] if "\n## " in old else ""
    with open(path, "w") as f:
        f.write(GOLDEN_README.format(ul=ultralytics.__version__, torch=torch.__version__, cv=cv2.__version__,
                                     cases="\n".join(f"- `{c[0]}.safetensors`: {c[1]} scale {c[2]}, seed {c[3]}, "
                                                     f"images {', '.join(c[4])}, imgsz {c[5]}, batch {c[6]}, "
                                                     f"iou {c[7]}" for c in CASES),
                                     tasks="\n".join(f"- `{c[0]}.safetensors`: {c[1]} scale {c[2]}, seed {c[3]}"
                                                      for c in TASK_CASES), size=TASK_SIZE,
                                     rows=TASK_ROW_EVERY, protos=TASK_PROTO_EVERY) + rest)


GOLDEN_README = """# Goldens from Ultralytics

Made by `tools/reference/make_goldens.py` with ultralytics {ul}, torch {torch},
opencv-python {cv} on the CPU, from strix's own YAMLs and the synthetic weights
`build/mkweights` writes (the seed and the weights' SHA-256 are in each file's
metadata; tests/test_golden.c regenerates the weights and checks the hash first).

`inputs.txt` holds, for each letterboxed tensor Ultralytics fed the network
(`lb.<name>.<H>x<W>`, uint8 NHWC RGB, its input x 255), the FNV-1a 64 hash of
its bytes.  The C test loads ../shared/data/<name>.jpg with strix_image_load
(libjpeg-turbo set up as OpenCV sets it up: bit-identical to OpenCV's decode),
letterboxes it and must hash the same.  Each case file holds per image i: `img<i>.head_rows` /
`img<i>.head` (rows of the Detect output [A, 4 + nc] for every candidate anchor
and every 32nd anchor) and `img<i>.dets` (final detections: x1 y1 x2 y2 score
class); its metadata names the inputs, conf, iou, imgsz, batch and weights.

{cases}

The task heads (`task_*.safetensors`, `--tasks`) hold the raw eval-mode head
output of a segment, pose, obb or classify model (YOLO26's one-to-many head;
the `_e2e` cases its one-to-one head, from `mkweights --nms-free` weights, whose
boxes are x1 y1 x2 y2 except obb's) on a computed {size} x {size} picture (pixel (x, y) channel c =
((x * 7 + y * 13 + c * 50 + (x * y) % 31) & 255) / 255, RGB): `head_rows` /
`head` (every {rows}th row of [A, 4 + nc + extra] and the 16 best-scoring),
for segment `proto_pixels` / `proto` (every {protos}th pixel of the protos,
[H/4 * W/4, 32] NHWC), for classify `probs` ([nc]); for the YOLOv8/YOLO11
segment, pose and obb cases and YOLO26's `_e2e` cases (`nms=False`) also
YOLO.predict's results on the same picture
cut to 200 x 150 (imgsz {size}, conf about 30 boxes, iou 0.7): `dets` (x1 y1
x2 y2 score class in source pixels; obb: OBB.xyxy) and `keypoints` ([k, 17 x 3])
or `xywhr` ([k, 5]).

{tasks}

Regenerate (dev machines only; needs PyPI):

    python3 -m venv /opt/strix-ref && /opt/strix-ref/bin/pip install ultralytics safetensors
    make && /opt/strix-ref/bin/python tools/reference/make_goldens.py --build build --data ../shared/data
    /opt/strix-ref/bin/python tools/reference/make_goldens.py --tasks --build build
"""

if __name__ == "__main__":
    sys.exit(main())
