"""gpu_peers.py — the GPU peers of tools/gpu-check.sh (dev-time only: strix
never needs Python), on the same GPU, the same synthetic weights and the same
kind of frames as perf/gpu_bench, one JSON row each in the bench schema
(tool, model, device, dtype, batch, imgsz, mode, median_ms, p90_ms, min_ms,
mean_ms, images_per_s, runs, warmup, times_ms) appended to --rows:

  ultralytics          the fused DetectionModel built from strix's YAML with
                       the safetensors loaded (make_goldens.build_model),
                       input already on the GPU, torch.inference_mode, eager
                       fp32 and fp16 (model.half()); mode "forward-device";
  ultralytics-compile  the same, torch.compile fp16 (compile time in
                       "compile_s", not in the times);
  ultralytics          YOLO.predict on uint8 frames in host memory (random
                       pixels, 1280x720 and 640x640, BGR as OpenCV gives them),
                       batch=N, half for fp16: letterbox, forward, NMS, boxes
                       back; mode "detect-WxH" (the counterpart of strix's
                       public detect path);
  ultralytics          cold start: a fresh `python -c` doing
                       `from ultralytics import YOLO`, loading the checkpoint,
                       the first predict on one 1280x720 frame and writing
                       the boxes; wall time and max RSS, 5 times each dtype;
                       mode "cold-start".

Every timed call is followed by torch.cuda.synchronize().  A configuration
that fails (out of memory, say) gives a row with "error" instead of times.

  python tools/reference/gpu_peers.py --weights-dir DIR --models yolov8n,yolo11n
      --batch 1,8,64,256 --rows ROWS.jsonl [--runs 20] [--warmup 3] [--cold-out FILE]

DIR holds NAME.safetensors from build/mkweights (tools/gpu-check.sh writes them).
Needs torch with CUDA and ultralytics (which brings opencv-python, PyYAML),
and safetensors; run it from the repository root.
"""
import argparse
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = {"yolov8": "weights/yolov8.yaml", "yolo11": "weights/yolo11.yaml"}

COLD = r"""
import json, sys
import numpy as np
from ultralytics import YOLO
frame = np.random.default_rng(1).integers(0, 256, (720, 1280, 3), dtype=np.uint8)
r = YOLO(sys.argv[1]).predict(frame, device=0, half=sys.argv[3] == "fp16", imgsz=640, verbose=False, save=False)[0]
with open(sys.argv[2], "w") as f:
    json.dump({"boxes": r.boxes.xyxy.tolist(), "scores": r.boxes.conf.tolist(), "classes": r.boxes.cls.tolist()}, f)
"""


def stats(times, batch):
    s = sorted(times)
    n = len(s)
    med = s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])
    return {"runs": n, "times_ms": [round(t, 4) for t in times], "median_ms": med,
            "p90_ms": s[max(0, (9 * n + 9) // 10 - 1)], "min_ms": s[0], "mean_ms": sum(s) / n,
            "images_per_s": batch / (med / 1e3)}


def timed(fn, runs, warmup, torch):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        torch.cuda.synchronize()
        times.append((time.perf_counter() - t0) * 1e3)
    return times


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--weights-dir", required=True)
    ap.add_argument("--models", default="yolov8n,yolov8s,yolo11n")
    ap.add_argument("--batch", default="1,8,64,256")
    ap.add_argument("--rows", required=True)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--cold-out", default=os.path.join(os.environ.get("TMPDIR", "/tmp"), "gpu_peers_cold.json"))
    args = ap.parse_args()
    batches = [int(b) for b in args.batch.split(",")]

    import numpy as np
    import torch
    import ultralytics

    sys.path.insert(0, HERE)
    from make_goldens import build_model

    if not torch.cuda.is_available():
        sys.exit("gpu_peers: torch sees no CUDA device (torch %s)" % torch.__version__)
    out = open(args.rows, "a")
    base = {"device": "cuda", "imgsz": 640, "warmup": args.warmup, "torch": torch.__version__,
            "ultralytics": ultralytics.__version__}

    def emit(row):
        out.write(json.dumps(row) + "\n")
        out.flush()
        print(row["tool"], row["model"], row["dtype"], row["batch"], row["mode"],
              row.get("error") or "%.2f ms, %.1f images/s" % (row["median_ms"], row["images_per_s"]), flush=True)

    rng = np.random.default_rng(1)
    for name in args.models.split(","):
        yaml_path, scale = MODELS[name[:-1]], name[-1]
        st = os.path.join(args.weights_dir, name + ".safetensors")
        pt = os.path.join(args.weights_dir, name + ".pt")
        y = build_model(yaml_path, scale, st)
        m = y.model
        m.args = {"imgsz": 640, "task": "detect", "data": "coco8.yaml"}
        m.task = "detect"
        torch.save({"model": m, "train_args": dict(m.args), "date": None, "version": "strix gpu_peers"}, pt)
        net = m.float().fuse().eval().cuda()
        for dtype in ("fp32", "fp16"):
            tdt = torch.float16 if dtype == "fp16" else torch.float32
            model = net.half() if dtype == "fp16" else net.float()
            variants = [("ultralytics", model, 0.0)]
            if dtype == "fp16":
                t0 = time.perf_counter()
                variants.append(("ultralytics-compile", torch.compile(model), None))
                compile_start = t0
            for tool, fn_model, compile_s in variants:
                for b in batches:
                    row = dict(base, tool=tool, model=name, dtype=dtype, batch=b, mode="forward-device")
                    try:
                        x = torch.rand(b, 3, 640, 640, device="cuda", dtype=tdt)
                        with torch.inference_mode():
                            if compile_s is None:  # the first call compiles
                                fn_model(x)
                                torch.cuda.synchronize()
                                compile_s = time.perf_counter() - compile_start
                                row["compile_s"] = round(compile_s, 2)
                            row.update(stats(timed(lambda: fn_model(x), args.runs, args.warmup, torch), b))
                        del x
                    except Exception as e:  # a failed configuration is a row, not the end of the run
                        row["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
                    torch.cuda.empty_cache()
                    emit(row)
            # predict on uint8 frames in host memory
            yolo = ultralytics.YOLO(pt)
            for w, h in ((1280, 720), (640, 640)):
                for b in batches:
                    row = dict(base, tool="ultralytics", model=name, dtype=dtype, batch=b, mode="detect-%dx%d" % (w, h),
                               frame="%dx%d" % (w, h))
                    try:
                        frames = [rng.integers(0, 256, (h, w, 3), dtype=np.uint8) for _ in range(b)]
                        call = lambda: yolo.predict(frames, device=0, half=dtype == "fp16", imgsz=640, batch=b,
                                                    verbose=False, save=False)
                        row.update(stats(timed(call, args.runs, args.warmup, torch), b))
                    except Exception as e:
                        row["error"] = "%s: %s" % (type(e).__name__, str(e).splitlines()[0][:200] if str(e) else "")
                    emit(row)
        del net, model, y
        torch.cuda.empty_cache()

    # cold start, first model: a fresh process each time
    name = args.models.split(",")[0]
    pt = os.path.join(args.weights_dir, name + ".pt")
    for dtype in ("fp32", "fp16"):
        for _ in range(5):
            row = dict(base, tool="ultralytics", model=name, dtype=dtype, batch=1, mode="cold-start", frame="1280x720")
            t0 = time.perf_counter()
            p = subprocess.Popen([sys.executable, "-c", COLD, pt, args.cold_out, dtype], stdout=subprocess.DEVNULL,
                                 stderr=subprocess.PIPE, text=True)
            _, status, ru = os.wait4(p.pid, 0)
            row["process_to_detection_s"] = round(time.perf_counter() - t0, 4)
            row["max_rss_mb"] = round(ru.ru_maxrss / 1024.0, 1)
            if os.waitstatus_to_exitcode(status):
                row["error"] = (p.stderr.read().strip().splitlines() or ["?"])[-1][:200]
            p.stderr.close()
            out.write(json.dumps(row) + "\n")
            out.flush()
            print("cold start", dtype, row["process_to_detection_s"], "s", row.get("error", ""), flush=True)
    out.close()


if __name__ == "__main__":
    main()
