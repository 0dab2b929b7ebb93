"""task_e2e_goldens.py — end-to-end goldens of the task models for
tests/cli_tasks.sh: Ultralytics' YOLO.predict (8.4.190, torch) with the
loader fixtures tests/loaders/t-seg.pt, t-pose.pt, t-obb.pt and t-cls.pt
(synthetic weights, tools/reference/make_loader_fixtures.py) on sample
pictures of ../shared/data at imgsz 320, each result as Results.summary()
gives it (5 decimals): segments (masks.xy), keypoints, an obb's 4 corners,
classify's top-5.  t-seg also with retina_masks=True on horses.jpg (one
picture: the goldens stay under 300 kB).  YOLO26's task fixtures t26-seg.pt,
t26-pose.pt and t26-obb.pt on dog.jpg, with the default one-to-many head
(NMS) and with nms=False (the one-to-one head, top-k without NMS:
<name>-dog-e2e.json, "nms": false).  Two more:
- t26-seg-eagle-e2e.json, t26-seg on eagle.jpg with nms=False: its two
  best boxes reach into the letterbox padding below the picture (one lies
  wholly in it: [523, 512, 568, 512] once scale_boxes has clipped it);
  process_mask crops to the boxes before they are clipped, so their masks
  are not empty and the boxes stay (cropped to the clipped boxes both
  would be dropped);
- t-cls at imgsz 100 on dog.jpg and 250 on horses.jpg (t-cls-<picture>-<imgsz>
  .json): the predictor rounds imgsz up to a multiple of the backend's
  stride, max(model stride, 32), before classify_transforms.

conf is put in the widest gap between the scores ranked 3rd to 8th, so a
box near the threshold cannot flip in or out between Ultralytics and strix.

Dev-time only, in a venv with ultralytics and torch:
    /tmp/coldref/bin/python tools/reference/task_e2e_goldens.py
writes tests/golden/tasks_e2e/<model>-<picture>[-retina|-e2e|-<imgsz>].json."""
import json
import os

import cv2
import numpy as np
import ultralytics
from ultralytics import YOLO

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
DATA = os.path.join(ROOT, "..", "shared", "data")
OUT = os.path.join(ROOT, "tests", "golden", "tasks_e2e")
IMGSZ = 320
PICTURES = ("dog.jpg", "horses.jpg")
# model, task, retina_masks, nms=False (YOLO26's one-to-one head), pictures
CASES = (("t-seg", "segment", False, False, PICTURES), ("t-seg", "segment", True, False, PICTURES[1:]),
         ("t-pose", "pose", False, False, PICTURES), ("t-obb", "obb", False, False, PICTURES),
         ("t-cls", "classify", False, False, PICTURES)) + tuple(
    (m, task, False, e2e, PICTURES[:1]) for m, task in (("t26-seg", "segment"), ("t26-pose", "pose"),
                                                        ("t26-obb", "obb")) for e2e in (False, True))
ODD_CLS = (("dog.jpg", 100), ("horses.jpg", 250))  # t-cls: picture, imgsz


def pick_conf(scores):
    """The middle of the widest gap between the scores ranked 3rd to 8th."""
    s = np.sort(np.asarray(scores, dtype=np.float64))[::-1]
    if len(s) < 4:
        return 0.001
    ks = range(2, min(8, len(s) - 1))
    k = max(ks, key=lambda i: s[i] - s[i + 1])
    return round(float((s[k] + s[k + 1]) / 2), 5)


def golden(name, task, pic, suffix="", imgsz=IMGSZ, retina=False, e2e=False):
    """One golden: tests/golden/tasks_e2e/<name>-<picture><suffix>.json."""
    model = YOLO(os.path.join(ROOT, "tests", "loaders", name + ".pt"), task=task, verbose=False)
    img = cv2.imread(os.path.join(DATA, pic))
    opts = dict(imgsz=imgsz, iou=0.7, verbose=False, device="cpu", retina_masks=retina)
    if e2e:
        opts["nms"] = False
    conf = 0.25
    if task != "classify":
        r0 = model.predict(img, conf=0.001, max_det=300, **opts)[0]
        conf = pick_conf((r0.obb if task == "obb" else r0.boxes).conf.numpy())
    r = model.predict(img, conf=conf, max_det=300, **opts)[0]
    out = {"made_by": f"tools/reference/task_e2e_goldens.py, ultralytics {ultralytics.__version__}",
           "model": name + ".pt", "task": task, "picture": pic, "imgsz": imgsz, "conf": conf,
           "retina_masks": retina, "width": img.shape[1], "height": img.shape[0],
           **({"nms": False} if e2e else {}), "results": r.summary(decimals=5)}
    path = os.path.join(OUT, f"{name}-{os.path.splitext(pic)[0]}{suffix}.json")
    with open(path, "w") as f:
        json.dump(out, f, separators=(",", ":"))
        f.write("\n")
    print(path, len(out["results"]), "results, conf", conf)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, task, retina, e2e, pictures in CASES:
        for pic in pictures:
            golden(name, task, pic, f"{'-retina' if retina else ''}{'-e2e' if e2e else ''}", retina=retina, e2e=e2e)
    golden("t26-seg", "segment", "eagle.jpg", "-e2e", e2e=True)
    for pic, imgsz in ODD_CLS:
        golden("t-cls", "classify", pic, f"-{imgsz}", imgsz=imgsz)


if __name__ == "__main__":
    main()
