"""task_counts.py — dev-only: Ultralytics' parameter counts and GFLOPs for the
task YAMLs (segment, pose, obb, classify of YOLOv8, YOLO11 and YOLO26, scales n
and s), the numbers tests/test_model.c's inspect_task_heads_match_ultralytics
holds.  Run in a venv with ultralytics 8.4.190 and torch:

    python tools/reference/task_counts.py

Per line: YAML, scale, parameters as built, parameters after fuse(), fused
GFLOPs at 640 in the convention of Ultralytics' published figures, which strix
follows (engine/plan.c): get_flops (thop 2.2.3) less the attention matmuls
(which thop 2.2.3 counts and the older thop did not) plus one op per
nearest-upsampled element (which the older thop counted).
"""
import warnings

import torch
from ultralytics import YOLO
from ultralytics.nn.modules.block import Attention
from ultralytics.utils.torch_utils import get_flops

warnings.filterwarnings("ignore")


def convention_delta(model, size=640):
    """Ops the published convention counts minus what thop 2.2.3 counts, one 640x640 pass."""
    ops = [0.0]
    hooks = []

    def attn(m, x, y):
        b, _, h, w = x[0].shape
        n = h * w
        ops[0] -= b * m.num_heads * n * n * (m.key_dim + m.head_dim)  # q^T k, then v attn^T

    def up(m, x, y):
        ops[0] += y.numel()

    for m in model.modules():
        if isinstance(m, Attention):
            hooks.append(m.register_forward_hook(attn))
        elif isinstance(m, torch.nn.Upsample):
            hooks.append(m.register_forward_hook(up))
    with torch.no_grad():
        model(torch.zeros(1, 3, size, size))
    for h in hooks:
        h.remove()
    return 2 * ops[0] / 1e9


for fam in ("yolov8", "yolo11", "yolo26"):
    for task in ("seg", "pose", "obb", "cls"):
        for scale in "ns":
            model = YOLO(f"{fam}{scale}-{task}.yaml", verbose=False).model.eval()
            unfused = sum(p.numel() for p in model.parameters())
            model.fuse(verbose=False)
            fused = sum(p.numel() for p in model.parameters())
            gflops = get_flops(model, 640) + convention_delta(model)
            print(f"weights/{fam}-{task}.yaml {scale} {unfused} {fused} {gflops:.4f}", flush=True)
