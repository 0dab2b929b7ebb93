#!/usr/bin/env python3
"""convert_checkpoint.py — dev-time converter: an Ultralytics detection
checkpoint (yolov8n.pt, yolo11s.pt, your own best.pt) to strix's inputs:

    OUT.yaml          the model graph (Ultralytics' schema, with `scale` and `names`)
    OUT.safetensors   the weights under their state_dict names, dtype kept (F16/F32)

Usage (needs `pip install ultralytics safetensors`; strix itself needs neither):
    python3 tools/reference/convert_checkpoint.py yolov8n.pt weights/yolov8n
    build/infer --model weights/yolov8n.yaml --weights weights/yolov8n.safetensors photo.jpg

Loading a .pt file unpickles Python objects: only convert checkpoints you trust.
"""
import argparse
import os
import sys

import torch
import yaml
from safetensors.torch import save_file


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkpoint", help="Ultralytics .pt file")
    ap.add_argument("out", help="output path without extension")
    ap.add_argument("--overwrite", action="store_true")
    args = ap.parse_args()

    from ultralytics import YOLO

    model = YOLO(args.checkpoint).model  # a DetectionModel
    if type(model).__name__ != "DetectionModel":
        sys.exit(f"{args.checkpoint}: a {type(model).__name__}, but strix runs detection models only")
    cfg = model.yaml
    out_yaml, out_st = args.out + ".yaml", args.out + ".safetensors"
    for p in (out_yaml, out_st):
        if os.path.exists(p) and not args.overwrite:
            sys.exit(f"{p}: already exists (pass --overwrite to replace it)")

    names = model.names if isinstance(model.names, dict) else dict(enumerate(model.names))
    graph = {"nc": int(cfg["nc"])}
    if cfg.get("scales"):
        graph["scale"] = cfg.get("scale") or next(iter(cfg["scales"]))
        graph["scales"] = cfg["scales"]
    else:
        graph["depth_multiple"] = cfg.get("depth_multiple", 1.0)
        graph["width_multiple"] = cfg.get("width_multiple", 1.0)
    graph["names"] = {int(k): str(v) for k, v in names.items()}
    with open(out_yaml, "w") as f:
        f.write(f"# converted from {os.path.basename(args.checkpoint)} by tools/reference/convert_checkpoint.py\n")
        yaml.safe_dump(graph, f, sort_keys=False, default_flow_style=None, width=120)
        for part in ("backbone", "head"):  # one flow-style row per layer, as Ultralytics writes them
            f.write(f"{part}:\n")
            for row in cfg[part]:
                f.write("  - " + yaml.safe_dump(row, default_flow_style=True, width=1000).strip() + "\n")

    sd = {k: v.detach().contiguous() for k, v in model.state_dict().items()
          if not k.endswith("num_batches_tracked")}
    for k, v in sd.items():
        if v.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            sd[k] = v.float()
    save_file(sd, out_st, metadata={"source": os.path.basename(args.checkpoint)})
    print(f"wrote {out_yaml} and {out_st} ({len(sd)} tensors, {len(names)} classes)")


if __name__ == "__main__":
    main()
