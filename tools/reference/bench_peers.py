#!/usr/bin/env python3
"""bench_peers.py — dev-only: strix against its CPU peers in one run, on the
same machine, with the same weights, the same inputs and the same thread count,
then the results directory and the README's performance section (through
bench_report.py).  `make bench` runs it (perf/bench.sh); strix itself never
needs Python.

What it measures (model only: input tensor in, decoded head out):
  strix           build/perf/bench, once per OMP_WAIT_POLICY asked for
  strix-int8      build/perf/bench calibrated on the calibration images
                  (strix_int8_flags) and run in int8
  onnxruntime     the ONNX export (opset 17, static shape), CPU EP,
                  intra_op_num_threads = N, inter_op = 1
  onnxruntime-int8  the same export quantised by onnxruntime.quantization's
                  quantize_static (QDQ, uint8 activations, per-channel int8
                  weights, MinMax over the calibration images letterboxed as
                  the inputs are; only Conv/Gemm/MatMul quantised, as
                  Ultralytics' own ONNX int8 export does), run as onnxruntime
  opencv          cv2.dnn of the venv's opencv-python on the same ONNX file
  opencv-debian   cv2.dnn of Debian's python3-opencv (run with /usr/bin/python3),
                  when it is installed; if it cannot import the export, its
                  error is logged instead of a time
  ultralytics     Ultralytics' fused DetectionModel, PyTorch eager fp32,
                  torch.set_num_threads(N), torch.inference_mode()
  openvino        OpenVINO (PyPI openvino) on the same ONNX file, device CPU,
                  INFERENCE_NUM_THREADS = N, PERFORMANCE_HINT LATENCY and
                  INFERENCE_PRECISION_HINT f32 (its default on CPUs with
                  AVX-512 BF16 / AMX is bf16: not the fp32 network the others run)
  openvino-default  the same without INFERENCE_PRECISION_HINT: what a user
                  gets; the row records the precision the compiled model chose
  ncnn            ncnn (PyPI ncnn) on a model converted from the batch-1 ONNX
                  export by pnnx (PyPI pnnx, ncnn's converter: `pnnx model.onnx
                  inputshape=[1,3,S,S]` writes model.ncnn.param/.bin),
                  opt.num_threads = N, no Vulkan, fp16/bf16 storage and
                  arithmetic off (fp32 throughout); ncnn has no batch dimension,
                  so a batch is its images one after the other
  ncnn-bf16       the same model with use_bf16_storage, use_bf16_packed and
                  use_packing_layout on (ncnn's bf16 path)
  ncnn-int8       not run: the row records why (ncnn_int8_reason)
The calibration images (dog.jpg and horses.jpg of --data; two seeded-noise
PNGs without them) are the same for strix-int8 and onnxruntime-int8.
Every row records the CPU model, the CPU's ISA flags of note (ISA_FLAGS) and
what the engine reports of the ISA it uses (engine_isa), and its precision.
Peak memory: each process (strix's perf/bench and every peer, same inputs) runs
under GNU time (/usr/bin/time -f %M: its wait4() ru_maxrss, the kernel's peak
resident set size of that process); the floor of a Python peer (the interpreter with numpy imported, no
framework) is measured the same way, and so is build/infer on one image in
the cold start (the whole job: decode, letterbox, network, NMS, JSON).
Every peer runs in its own process, warm-up then >= 20 timed runs, inputs
rotated among 4 batches made of the letterboxed sample images (or seeded
noise without them), the very same floats for all.  Each peer also saves its
output on the first batch; the driver reports its relative L2 difference
from Ultralytics' (the proof that all ran the same network and weights).
Then the cold start: `build/infer` on one image (process start to the
detections written) against Ultralytics' import + load + first predict in a
fresh `python`, alternated, several repetitions.  Finally the per-kernel
harnesses (build/perf/bench_conv, build/perf/bench_nms) for the raw logs.

Weights: `build/mkweights` (seeded synthetic weights, as the goldens use);
Ultralytics builds the model from strix's YAML and loads that safetensors
file (as make_goldens.py does), saves it as an Ultralytics checkpoint (.pt)
and exports ONNX from it.

Usage (from the repo root, after `make all` and the perf programs):
  /opt/strix-ref/bin/python tools/reference/bench_peers.py --build build
      [--configs "yolov8n:1,8 yolo11n:1"] [--threads N] [--runs 20] [--warmup 3]
      [--omp-policies default,passive,active] [--wait-load 1.0 --wait-max 1200]
      [--machine NAME] [--out perf/results] [--peers strix-int8,onnxruntime,...]
Venv: perf/setup.sh (ultralytics safetensors onnx onnxruntime onnxslim
      opencv-python matplotlib openvino ncnn pnnx from PyPI)
"""
import argparse
import datetime
import glob
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
os.environ.setdefault("YOLO_VERBOSE", "False")  # Ultralytics' export chatter off (children inherit it)
MODELS = {"yolov8n": ("weights/yolov8.yaml", "n"), "yolo11n": ("weights/yolo11.yaml", "n"),
          "yolov8s": ("weights/yolov8.yaml", "s"), "yolo11s": ("weights/yolo11.yaml", "s")}
ROTATE = 4  # input batches cycled through, as perf/bench --rotate
DEBIAN_PY = "/usr/bin/python3"
GNU_TIME = "/usr/bin/time"  # Debian package time: the peak RSS of each process (run_rss)
# The CPU flags that decide which kernels an engine can run: x86 (AVX2/FMA,
# AVX-512, its BF16/VNNI/FP16 parts, AMX) and their aarch64 counterparts
# (/proc/cpuinfo "Features": NEON, dot product, fp16, bf16, int8 matrix, SVE, SME).
ISA_FLAGS = ("avx2", "fma", "avx512f", "avx512_bf16", "avx512_vnni", "amx_tile", "amx_bf16", "amx_int8",
             "avx512_fp16", "asimd", "asimddp", "asimdhp", "bf16", "i8mm", "sve", "sve2", "sme")
CALIB_IMAGES = ("dog.jpg", "horses.jpg")  # what strix-int8 and onnxruntime-int8 calibrate on (of --data)


def strix_int8_flags(images):
    """build/perf/bench's int8 options, calibrated on images: spelled here
    only."""
    return ["--precision", "int8", "--calibrate", ",".join(images)]


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def log(msg):
    print(msg, flush=True)


# ------------------------------------------------------------------ peers
# Run in a child process each ("--peer NAME"); they import only what they use,
# so the Debian OpenCV peer runs under /usr/bin/python3 with Debian's numpy.

def peer_batches(args):
    import numpy as np

    s, n = args.imgsz, args.batch
    imgs = np.fromfile(args.inputs, dtype=np.float32).reshape(-1, s, s, 3)
    out = []
    for k in range(ROTATE):  # batch k, image i = file image (k*n + i) % count, as perf/bench
        idx = [(k * n + i) % len(imgs) for i in range(n)]
        out.append(np.ascontiguousarray(imgs[idx].transpose(0, 3, 1, 2)))  # NCHW
    return out


def peer_main(args):
    import numpy as np

    xs = peer_batches(args)
    info = {"tool": args.peer}
    if args.peer in ("onnxruntime", "onnxruntime-int8"):
        import onnxruntime as ort

        so = ort.SessionOptions()
        so.intra_op_num_threads = args.threads
        so.inter_op_num_threads = 1
        so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
        so.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        sess = ort.InferenceSession(args.onnx, so, providers=["CPUExecutionProvider"])
        name = sess.get_inputs()[0].name
        run = lambda x: sess.run(None, {name: x})[0]  # noqa: E731
        info["version"] = ort.__version__
        info["detail"] = "CPUExecutionProvider, ORT_ENABLE_ALL, intra_op=%d, inter_op=1%s" % (
            args.threads, ", the QDQ int8 model of quantize_static" if args.peer == "onnxruntime-int8" else "")
        info["precision"] = "int8 (QDQ)" if args.peer == "onnxruntime-int8" else "fp32"
        info["engine_isa"] = "not reported (MLAS picks its kernels from cpuid)"
    elif args.peer in ("opencv", "opencv-debian"):
        import cv2

        cv2.setNumThreads(args.threads)
        net = cv2.dnn.readNetFromONNX(args.onnx)
        net.setPreferableBackend(cv2.dnn.DNN_BACKEND_OPENCV)
        net.setPreferableTarget(cv2.dnn.DNN_TARGET_CPU)

        def run(x):
            net.setInput(x)
            return net.forward()
        info["version"] = cv2.__version__
        info["detail"] = "cv2.dnn.readNetFromONNX, DNN_BACKEND_OPENCV, setNumThreads(%d), %s" % (
            args.threads, "Debian python3-opencv" if args.peer == "opencv-debian" else "PyPI opencv-python")
        info["precision"] = "fp32"
        info["engine_isa"] = "build: " + cv2.getCPUFeaturesLine() + " (* dispatched at run time, ? not on this CPU)"
    elif args.peer == "ultralytics":
        import torch

        torch.set_num_threads(args.threads)
        import ultralytics
        from ultralytics import YOLO

        model = YOLO(args.pt).model.float().fuse().eval()
        for p in model.parameters():
            p.requires_grad_(False)

        def run(x):
            with torch.inference_mode():
                y = model(torch.from_numpy(x))
            return (y[0] if isinstance(y, (list, tuple)) else y).numpy()
        info["version"] = "ultralytics %s, torch %s" % (ultralytics.__version__, torch.__version__)
        info["detail"] = "fused DetectionModel, eager fp32, inference_mode, set_num_threads(%d)" % args.threads
        info["precision"] = "fp32"
        info["engine_isa"] = "torch cpu capability " + torch.backends.cpu.get_cpu_capability()
    elif args.peer in ("openvino", "openvino-default"):
        import openvino as ov

        core = ov.Core()
        cfg = {"INFERENCE_NUM_THREADS": args.threads, "PERFORMANCE_HINT": "LATENCY"}
        if args.peer == "openvino":  # forced to f32; openvino-default leaves the precision to OpenVINO
            cfg["INFERENCE_PRECISION_HINT"] = "f32"
        compiled = core.compile_model(core.read_model(args.onnx), "CPU", cfg)
        req = compiled.create_infer_request()
        out0 = compiled.output(0)
        run = lambda x: req.infer({0: x})[out0]  # noqa: E731
        info["version"] = ov.__version__
        info["detail"] = "device CPU, INFERENCE_NUM_THREADS=%d, PERFORMANCE_HINT=LATENCY, %s" % (
            args.threads, "INFERENCE_PRECISION_HINT=f32" if args.peer == "openvino" else
            "no INFERENCE_PRECISION_HINT (OpenVINO's default)")
        # what the compiled model runs in: f32, or bf16 / f16 where OpenVINO's default picks it
        info["precision"] = compiled.get_property("INFERENCE_PRECISION_HINT").get_type_name()
        info["engine_isa"] = "OPTIMIZATION_CAPABILITIES " + " ".join(core.get_property("CPU", "OPTIMIZATION_CAPABILITIES"))
    elif args.peer in ("ncnn", "ncnn-bf16"):
        import ncnn

        bf16 = args.peer == "ncnn-bf16"
        net = ncnn.Net()
        net.opt.num_threads = args.threads
        net.opt.use_vulkan_compute = False
        net.opt.use_fp16_storage = net.opt.use_fp16_packed = net.opt.use_fp16_arithmetic = False
        # ncnn's bf16 path: bf16 blobs and weights, packed, in the packing layout (fp32 arithmetic)
        net.opt.use_bf16_storage = net.opt.use_bf16_packed = bf16
        net.opt.use_packing_layout = True
        net.load_param(args.ncnn + ".ncnn.param")
        net.load_model(args.ncnn + ".ncnn.bin")

        def run(x):  # no batch dimension in ncnn: one extractor per image
            outs = []
            for img in x:
                ex = net.create_extractor()
                ex.input("in0", ncnn.Mat(np.ascontiguousarray(img)))
                _, y = ex.extract("out0")
                outs.append(np.array(y))
            return np.stack(outs)
        info["version"] = ncnn.__version__
        info["detail"] = "pnnx-converted from the batch-1 ONNX export (fp32 weights), num_threads=%d, no Vulkan, %s, " \
                         "images of a batch one after the other" % (args.threads, "use_bf16_storage, use_bf16_packed, " \
                         "use_packing_layout (fp16 off)" if bf16 else "fp32 (fp16/bf16 storage and arithmetic off)")
        info["precision"] = "bf16 storage" if bf16 else "fp32"
        info["engine_isa"] = "ncnn " + " ".join(
            n[len("cpu_support_"):] for n in sorted(dir(ncnn)) if n.startswith("cpu_support_") and getattr(ncnn, n)())
    elif args.peer == "floor":  # the interpreter and numpy alone: what a Python peer costs before its framework
        run = lambda x: x  # noqa: E731
        info["version"] = "Python %s, numpy %s" % (platform.python_version(), np.__version__)
        info["detail"] = "no framework"
    else:
        sys.exit(f"bench_peers: unknown peer {args.peer}")
    info["load_start"] = loadavg()
    y0 = np.asarray(run(xs[0]), dtype=np.float32)
    y0.tofile(args.save_out)
    info["out_shape"] = list(y0.shape)
    for i in range(args.warmup):
        run(xs[(i + 1) % ROTATE])
    times = []
    for i in range(args.runs):
        x = xs[i % ROTATE]
        t0 = time.perf_counter()
        run(x)
        times.append((time.perf_counter() - t0) * 1e3)
    info["load_end"] = loadavg()
    info["times_ms"] = [round(t, 4) for t in times]
    print(json.dumps(info))


# ----------------------------------------------------------------- driver

def quantiles(times):
    s = sorted(times)
    n = len(s)
    med = s[n // 2] if n % 2 else 0.5 * (s[n // 2 - 1] + s[n // 2])
    p90 = s[max(0, -(-9 * n // 10) - 1)]  # nearest rank, as perf/bench
    return med, p90


def last_error(stderr, rc):
    """The line of a child's stderr that says what failed."""
    lines = [l.strip() for l in stderr.splitlines() if l.strip()]
    hits = [l for l in lines if "error" in l.lower()]
    return (hits or lines or [f"exit status {rc}"])[-1]


def run_rss(cmd, env=None):
    """Run cmd to completion; (CompletedProcess, peak RSS in kB or None).
    The peak is GNU time's %M (its wait4() ru_maxrss of the child it forks).
    Not wait4() from here: Linux carries a process's peak RSS across fork and
    exec, so every child of this driver (torch imported: close to 1 GB)
    would report at least the driver's size; GNU time is a small process."""
    import tempfile

    if not os.path.exists(GNU_TIME):
        return subprocess.run(cmd, text=True, capture_output=True, env=env), None
    with tempfile.NamedTemporaryFile("r") as t:
        r = subprocess.run([GNU_TIME, "-q", "-f", "%M", "-o", t.name] + cmd, text=True, capture_output=True, env=env)
        lines = t.read().split()
    return r, int(lines[-1]) if lines and lines[-1].isdigit() else None


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


def first_line(cmd):
    try:
        return subprocess.run(cmd, text=True, capture_output=True, timeout=60).stdout.strip().splitlines()[0]
    except (OSError, IndexError, subprocess.SubprocessError):
        return "unavailable"


def cpu_model_isa():
    """(CPU model, the ISA_FLAGS it has) from /proc/cpuinfo ("flags" on x86,
    "Features" on aarch64, whose model name comes from lscpu)."""
    cpu, have = "unknown", set()
    with open("/proc/cpuinfo") as f:
        for line in f:
            k, _, v = line.partition(":")
            if k.strip() == "model name" and cpu == "unknown":
                cpu = v.strip()
            elif k.strip() in ("flags", "Features") and not have:
                have = set(v.split())
    if cpu == "unknown":
        cpu = next((l.split(":", 1)[1].strip() for l in sh(["lscpu"]).splitlines() if l.startswith("Model name")),
                   "unknown")
    return cpu, " ".join(x for x in ISA_FLAGS if x in have)


def machine_info(args):
    cpu, flags = cpu_model_isa()
    mem = "unknown"
    with open("/proc/meminfo") as f:
        for line in f:
            if line.startswith("MemTotal"):
                mem = "%.1f GiB" % (int(line.split()[1]) / 1048576)
    import numpy
    import onnx
    import onnxruntime
    import openvino
    import ncnn
    import torch
    import ultralytics
    import cv2

    commit = first_line(["git", "rev-parse", "HEAD"])
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], text=True,
                           capture_output=True).stdout.strip() != ""
    with open("engine/strix.h") as f:
        version = re.search(r'#define STRIX_VERSION "([^"]+)"', f.read()).group(1)
    cuda = "cudart" in first_line(["sh", "-c", "ldd %s | grep cudart" % os.path.join(args.build, "perf", "bench")])
    return {
        "cpu": cpu, "cores": os.cpu_count(), "affinity": len(os.sched_getaffinity(0)), "cpu_flags": flags,
        "memory": mem, "kernel": platform.release(), "os": first_line(["sh", "-c", ". /etc/os-release; echo $PRETTY_NAME"]),
        "compiler": first_line([os.environ.get("CC", "cc"), "--version"]),
        "strix_version": version, "git_commit": commit, "git_dirty": dirty,
        "strix_build": "make default flags (-O3, baseline ISA; the convolution's build per ISA chosen at run "
                       "time)%s" % (", CUDA objects linked" if cuda else ""),
        "python": platform.python_version(), "numpy": numpy.__version__, "torch": torch.__version__,
        "ultralytics": ultralytics.__version__, "onnx": onnx.__version__, "onnxruntime": onnxruntime.__version__,
        "opencv_python": cv2.__version__, "openvino": openvino.__version__, "ncnn": ncnn.__version__,
        "pnnx": importlib.metadata.version("pnnx"),
        "opencv_debian": first_line([DEBIAN_PY, "-c", "import cv2; print(cv2.__version__)"])
        if os.path.exists(DEBIAN_PY) else "unavailable",
    }


def wait_for_quiet(limit, max_s):
    """Poll the 1-minute load average every minute until it drops below
    limit or max_s pass; returns (quiet, seconds waited, last reading)."""
    t0 = time.time()
    while True:
        la = loadavg()
        one = float(la.split()[0]) if la != "unknown" else 0.0
        if one < limit:
            return True, time.time() - t0, la
        if time.time() - t0 >= max_s:
            return False, time.time() - t0, la
        log(f"  load average {la}: waiting for the 1-minute figure to drop below {limit}")
        time.sleep(60)


def make_inputs(args, s, path):
    """4 letterboxed sample images (Ultralytics' LetterBox, RGB, /255) as
    float32 [4, s, s, 3]; seeded noise when the images are missing."""
    import numpy as np

    files = sorted(glob.glob(os.path.join(args.data, "*.jpg")))[:ROTATE]
    if files:
        imgs = letterbox_files(files, s)
        desc = "letterboxed " + ", ".join(os.path.basename(f) for f in files)
    else:
        rng = np.random.default_rng(args.seed)
        imgs = [rng.random((s, s, 3), dtype=np.float32) for _ in range(ROTATE)]
        desc = "uniform noise, seed %d" % args.seed
    np.ascontiguousarray(np.stack(imgs), dtype=np.float32).tofile(path)
    return desc


def letterbox_files(files, s):
    """Image files letterboxed to s x s by Ultralytics' LetterBox: float32
    [len(files), s, s, 3], RGB, /255 (every framework's input)."""
    import cv2
    import numpy as np
    from ultralytics.data.augment import LetterBox

    lb = LetterBox((s, s), auto=False, stride=32)
    return np.stack([lb(image=cv2.imread(f))[:, :, ::-1].astype(np.float32) / 255.0 for f in files])


def calib_images(args, work):
    """The int8 rows' calibration images: CALIB_IMAGES of --data, or two
    seeded-noise 640x480 PNGs written to work without them; (files, words)."""
    files = [os.path.join(args.data, f) for f in CALIB_IMAGES]
    if all(os.path.exists(f) for f in files):
        return files, " and ".join(CALIB_IMAGES) + " of " + args.data
    import cv2
    import numpy as np

    rng = np.random.default_rng(args.seed)
    files = [os.path.join(work, f"calib_noise_{i}.png") for i in range(2)]
    for f in files:
        cv2.imwrite(f, rng.integers(0, 256, (480, 640, 3), dtype=np.uint8))
    return files, "two 640x480 uniform-noise PNGs, seed %d" % args.seed


def quantize_ort(onnx_path, calib, batch, s, dst):
    """The onnxruntime-int8 model: quantize_static of the fp32 export to dst,
    calibrated on the calibration images letterboxed as the inputs are (in
    batches of `batch`, the export's static shape; MinMax ranges do not depend
    on how they are batched); returns the settings for the row."""
    import numpy as np
    import onnx
    from onnxruntime.quantization import (CalibrationDataReader, CalibrationMethod, QuantFormat, QuantType,
                                          quantize_static)

    imgs = letterbox_files(calib, s).transpose(0, 3, 1, 2)
    n = len(imgs)
    batches = [np.ascontiguousarray(imgs[[(k * batch + i) % n for i in range(batch)]]) for k in range(-(-n // batch))]
    graph = onnx.load(onnx_path).graph
    name = graph.input[0].name
    # Only the weighted ops in int8, as Ultralytics' own ONNX int8 export
    # (utils/export/onnx.py): one int8 scale over the Detect decode's output
    # would span box pixels (0-640) and class scores (0-1) and zero every score.
    exclude = [nd.name for nd in graph.node if nd.op_type not in ("Conv", "Gemm", "MatMul")]

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(batches)

        def get_next(self):
            x = next(self.it, None)
            return None if x is None else {name: x}

    # Activations unsigned (U8S8), as strix's: ONNX Runtime's documented fast
    # path on x86 (vpmaddubsw / VNNI); with its default signed activations
    # (S8S8) yolov8n ran slower than fp32 on an AVX2 machine (160 against 119 ms).
    quantize_static(onnx_path, dst, Reader(), quant_format=QuantFormat.QDQ, activation_type=QuantType.QUInt8,
                    weight_type=QuantType.QInt8, per_channel=True, calibrate_method=CalibrationMethod.MinMax,
                    nodes_to_exclude=exclude)
    return {"function": "onnxruntime.quantization.quantize_static", "quant_format": "QDQ",
            "activation_type": "QUInt8", "weight_type": "QInt8", "per_channel": True, "calibrate_method": "MinMax",
            "quantized_ops": "Conv, Gemm, MatMul (the %d other nodes stay fp32)" % len(exclude),
            "calibration": ", ".join(os.path.basename(f) for f in calib) + " letterboxed to %d" % s}


def ncnn_int8_reason():
    """Why there is no ncnn int8 time: ncnn makes int8 models with its
    ncnn2table (calibration) and ncnn2int8 (conversion) programs; pnnx writes
    fp32 or fp16 weights only."""
    import ncnn

    path = os.path.dirname(sys.executable) + os.pathsep + os.environ.get("PATH", "")
    found = [t for t in ("ncnn2table", "ncnn2int8") if shutil.which(t, path=path)]
    if found:
        return "not run: %s found, but bench_peers.py does not drive ncnn's int8 conversion" % ", ".join(found)
    return ("not run: the PyPI wheels (ncnn %s, pnnx %s) cannot make an int8 model: ncnn's ncnn2table and "
            "ncnn2int8 are not in them (built from ncnn's source tree only) and pnnx writes fp32 or fp16 weights"
            % (ncnn.__version__, importlib.metadata.version("pnnx")))


def prepare_model(args, name, work):
    """mkweights -> safetensors; Ultralytics checkpoint (.pt) from it."""
    yaml_path, scale = MODELS[name]
    st = os.path.join(work, f"{name}.safetensors")
    pt = os.path.join(work, f"{name}.pt")
    sh([os.path.join(args.build, "mkweights"), "--model", yaml_path, "--scale", scale, "--seed", str(args.seed),
        "--out", st, "--overwrite"])
    sys.path.insert(0, HERE)
    import torch
    from make_goldens import build_model

    model = build_model(yaml_path, scale, st).model
    model.args = {"imgsz": args.imgsz, "task": "detect", "data": "coco8.yaml"}
    model.task = "detect"
    torch.save({"model": model, "train_args": dict(model.args), "date": None, "version": "strix bench_peers"}, pt)
    return st, pt


def export_onnx(pt, batch, s, dst):
    from ultralytics import YOLO

    out = YOLO(pt).export(format="onnx", opset=17, imgsz=s, batch=batch, simplify=True, dynamic=False,
                          device="cpu", verbose=False)
    shutil.move(out, dst)


def convert_ncnn(onnx_path, s, dst):
    """ncnn's own converter on the batch-1 ONNX export: pnnx (PyPI) writes
    <stem>.ncnn.param / .ncnn.bin (and its own intermediates) beside the
    .onnx; returns the stem the peer loads.  fp16=0: pnnx stores the weights
    in fp16 unless told not to, and the ncnn rows are to run the fp32 weights."""
    onnx_path = os.path.abspath(onnx_path)
    stem = os.path.splitext(onnx_path)[0]
    pnnx = os.path.join(os.path.dirname(sys.executable), "pnnx")
    sh([pnnx, onnx_path, f"inputshape=[1,3,{s},{s}]", "fp16=0"], cwd=os.path.dirname(onnx_path))
    for ext in (".ncnn.param", ".ncnn.bin"):
        shutil.move(stem + ext, dst + ext)
    return dst


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def rel_l2(y, ref):
    import numpy as np

    y = y.astype(np.float64).ravel()
    ref = ref.astype(np.float64).ravel()
    return float(np.linalg.norm(y - ref) / max(np.linalg.norm(ref), 1e-30))


def run_peer(args, peer, work, cfg, onnx_path, pt, inputs, raw, runs, ncnn_stem=""):
    import numpy as np

    name, batch = cfg
    out = os.path.join(work, f"out_{peer}_{name}_b{batch}.f32")
    py = DEBIAN_PY if peer == "opencv-debian" else sys.executable
    cmd = [py, os.path.abspath(__file__), "--peer", peer, "--onnx", onnx_path, "--pt", pt, "--inputs", inputs,
           "--batch", str(batch), "--imgsz", str(args.imgsz), "--threads", str(args.threads), "--runs",
           str(runs), "--warmup", str(args.warmup), "--save-out", out, "--ncnn", ncnn_stem]
    r, rss = run_rss(cmd)
    row = {"tool": peer, "model": name, "batch": batch, "imgsz": args.imgsz, "threads": args.threads,
           "max_rss_kb": rss}
    if r.returncode:
        row["error"] = last_error(r.stderr, r.returncode)
        log(f"  {peer:14s} {name} b{batch}: failed: {row['error']}")
    else:
        row.update(json.loads(r.stdout.strip().splitlines()[-1]))
        row["median_ms"], row["p90_ms"] = quantiles(row["times_ms"])
        row["images_per_s"] = batch / (row["median_ms"] / 1e3)
        row["_out"] = np.fromfile(out, dtype=np.float32).reshape(row["out_shape"])
    raw.write(json.dumps({k: v for k, v in row.items() if k != "_out"}) + "\n")
    raw.flush()
    return row


def merge_rounds(parts):
    """One row from a tool's rounds: all timed runs together; the roofline
    probes keep the best rate seen (a peak is the most the machine gave)."""
    bad = [p for p in parts if "error" in p]
    if bad:
        return bad[0]
    row = dict(parts[0])
    row["times_ms"] = [t for p in parts for t in p["times_ms"]]
    row["runs"] = len(row["times_ms"])
    row["rounds"] = len(parts)
    row["load_per_round"] = [p.get("loadavg_start", p.get("load_start")) for p in parts]
    row["median_ms"], row["p90_ms"] = quantiles(row["times_ms"])
    row["min_ms"] = min(row["times_ms"])
    row["mean_ms"] = sum(row["times_ms"]) / len(row["times_ms"])
    row["images_per_s"] = row["batch"] / (row["median_ms"] / 1e3)
    if all(p.get("max_rss_kb") for p in parts):
        row["max_rss_kb"] = max(p["max_rss_kb"] for p in parts)
    if row["tool"].startswith("strix"):
        row["achieved_gflops"] = row["gflops_per_image"] * row["images_per_s"]
        if "peak_gemm_gflops" in row:
            row["peak_gemm_gflops"] = max(p["peak_gemm_gflops"] for p in parts)
            row["copy_gbps"] = max(p["copy_gbps"] for p in parts)
            row["roofline_gflops"] = min(row["peak_gemm_gflops"], row["flop_per_byte"] * row["copy_gbps"])
            row["roofline_fraction"] = row["achieved_gflops"] / row["roofline_gflops"]
    return row


def run_strix(args, work, cfg, st, inputs, policy, raw, table, runs, calib=None):
    """One round of build/perf/bench: fp32, or int8 calibrated on the files
    calib (the strix-int8 row, without the roofline probes)."""
    import numpy as np

    name, batch = cfg
    tool = "strix-int8" if calib else "strix"
    yaml_path, scale = MODELS[name]
    head = os.path.join(work, f"out_{tool}_{name}_b{batch}.f32")
    jl = os.path.join(work, "strix.jsonl")
    if os.path.exists(jl):
        os.remove(jl)
    env = dict(os.environ)
    env.pop("OMP_WAIT_POLICY", None)
    if policy != "default":
        env["OMP_WAIT_POLICY"] = policy
    cmd = [os.path.join(args.build, "perf", "bench"), "--model", yaml_path, "--scale", scale, "--weights", st,
           "--inputs", inputs, "--imgsz", str(args.imgsz), "--batch", str(batch), "--threads", str(args.threads),
           "--runs", str(runs), "--warmup", str(args.warmup), "--rotate", str(ROTATE), "--json", jl,
           "--label", f"OMP_WAIT_POLICY={policy}", "--save-head", head]
    if calib:
        cmd += strix_int8_flags(calib) + ["--no-roofline"]
    r, rss = run_rss(cmd, env=env)
    table.write(f"$ {'OMP_WAIT_POLICY=' + policy + ' ' if policy != 'default' else ''}{' '.join(cmd)}\n")
    table.write(r.stdout + r.stderr + "\n")
    table.flush()
    row = {"tool": tool, "model": name, "batch": batch, "imgsz": args.imgsz, "threads": args.threads,
           "omp_wait_policy": policy, "max_rss_kb": rss, "binary_bytes": os.path.getsize(cmd[0])}
    if r.returncode:
        row["error"] = last_error(r.stderr, r.returncode)
        log(f"  {tool} {policy:8s} {name} b{batch}: failed: {row['error']}")
    else:
        with open(jl) as f:
            row.update(json.loads(f.readline()))
        row.update({"tool": tool, "yaml": row["model"], "model": name})
        # bench's header line names the fp32 convolution's micro-kernels ("cpu avx2 int8")
        isa = re.search(r"\bcpu (\S+) (?:fp32|fp16|int8)\b", r.stdout)
        row["engine_isa"] = "fp32 convolution micro-kernels " + (isa.group(1) if isa else "not printed") + \
            ("; int8 kernels not reported (engine/cpu/conv_int8.c picks AVX-512 VNNI, AVX2, NEON sdot or C)"
             if calib else "")
        if calib:
            row["calibration"] = ", ".join(os.path.basename(f) for f in calib)
            row["rss_run"] = "the timed run (no roofline probes)"
        else:
            # the timed run's RSS holds the roofline probes' 512 MB of buffers:
            # the peak memory comes from a run without them (same inputs, threads)
            r2, rss = run_rss([c for c in cmd if c not in ("--save-head", head)] + ["--no-roofline"], env=env)
            row["max_rss_kb"] = rss if r2.returncode == 0 else None
            row["rss_run"] = "bench --no-roofline, same inputs and threads"
        row["_out"] = np.fromfile(head, dtype=np.float32)
    raw.write(json.dumps({k: v for k, v in row.items() if k != "_out"}) + "\n")
    raw.flush()
    return row


COLD_ULTRA = r"""
import json, sys, time
import torch
torch.set_num_threads(int(sys.argv[4]))
from ultralytics import YOLO
r = YOLO(sys.argv[1]).predict(sys.argv[2], device="cpu", imgsz=640, verbose=False, save=False)[0]
with open(sys.argv[3], "w") as f:
    json.dump({"boxes": r.boxes.xyxy.tolist(), "scores": r.boxes.conf.tolist(), "classes": r.boxes.cls.tolist()}, f)
"""


def cold_start(args, work, st, pt, raw):
    """Process start to detections written: build/infer vs a fresh python
    running Ultralytics' import + load + predict, alternated."""
    files = sorted(glob.glob(os.path.join(args.data, "*.jpg")))
    if not files:
        log("  cold start: no sample image in --data; skipped")
        return []
    img = files[0]
    yaml_path, scale = MODELS["yolov8n"]
    cmds = {
        "strix": [os.path.join(args.build, "infer"), "--model", yaml_path, "--scale", scale, "--weights", st,
                  "--threads", str(args.threads), "--no-save", "--quiet", "--overwrite",
                  "--json", os.path.join(work, "cold_strix.json"), img],
        "ultralytics": [sys.executable, "-c", COLD_ULTRA, pt, img, os.path.join(work, "cold_ultra.json"),
                        str(args.threads)],
    }
    times = {k: [] for k in cmds}
    rss = {k: 0 for k in cmds}
    for rep in range(args.cold_reps):
        for tool, cmd in cmds.items():
            t0 = time.perf_counter()
            r, kb = run_rss(cmd)
            dt = time.perf_counter() - t0
            if r.returncode:
                log(f"  cold start {tool}: failed: {(r.stderr.strip().splitlines() or ['?'])[-1]}")
                return []
            times[tool].append(round(dt, 4))
            rss[tool] = max(rss[tool], kb or 0)
    rows = []
    for tool, t in times.items():
        med, p90 = quantiles(t)
        row = {"tool": tool, "what": "cold start: process start to detections written, yolov8n, one image "
               + os.path.basename(img), "command": " ".join(cmds[tool][:2] if tool == "ultralytics" else cmds[tool]),
               "threads": args.threads, "median_s": med, "min_s": min(t), "max_s": max(t), "times_s": t,
               "max_rss_kb": rss[tool] or None, "load": loadavg()}
        if tool == "strix":
            row["binary_bytes"] = os.path.getsize(cmds[tool][0])
        rows.append(row)
        raw.write(json.dumps(row) + "\n")
        log(f"  cold start {tool:12s} median {med:.3f} s (min {min(t):.3f}, max {max(t):.3f}) over {len(t)}")
    return rows


def harness(args, outdir, name, cmd):
    with open(os.path.join(outdir, f"{name}.txt"), "w") as f:
        f.write(f"$ {' '.join(cmd)}\nload average before: {loadavg()}\n")
        f.flush()
        r = subprocess.run(cmd, text=True, stdout=f, stderr=subprocess.STDOUT)
        f.write(f"load average after: {loadavg()}\nexit status {r.returncode}\n")
    with open(os.path.join(outdir, f"{name}.txt")) as f:
        last = [l for l in f.read().splitlines() if l.startswith(("ok:", "FAIL:", "all convolutions"))]
    return {"command": " ".join(cmd), "exit_status": r.returncode, "summary": last}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build")
    ap.add_argument("--out", default="perf/results")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--configs", default="yolov8n:1,8 yolo11n:1",
                    help="model:batches ... (models: %s)" % ", ".join(MODELS))
    ap.add_argument("--imgsz", type=int, default=640)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--rounds", type=int, default=4,
                    help="split each tool's runs over this many rounds, tools alternating (load fairness)")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--omp-policies", default="default,passive,active")
    ap.add_argument("--peers", default="strix-int8,onnxruntime,onnxruntime-int8,openvino,openvino-default,ncnn,"
                                        "ncnn-bf16,ncnn-int8,opencv,opencv-debian,ultralytics")
    ap.add_argument("--cold-reps", type=int, default=5)
    ap.add_argument("--wait-load", type=float, default=0.0,
                    help="first wait (polling each minute) for the 1-minute load average to drop below this")
    ap.add_argument("--wait-max", type=int, default=1200)
    ap.add_argument("--machine", default="")
    ap.add_argument("--readme", default="docs/performance.md", help="the page whose performance section is regenerated ('' none)")
    ap.add_argument("--no-harness", action="store_true", help="skip bench_conv / bench_nms")
    # child mode: one peer, one configuration
    ap.add_argument("--peer")
    ap.add_argument("--onnx")
    ap.add_argument("--pt")
    ap.add_argument("--inputs")
    ap.add_argument("--batch", type=int)
    ap.add_argument("--save-out")
    ap.add_argument("--ncnn", default="")
    args = ap.parse_args()
    if args.peer:
        return peer_main(args)
    if args.runs < 20:
        log(f"bench_peers: note: --runs {args.runs} is below the 20 timed runs published figures need")

    info = machine_info(args)
    slug = args.machine or re.sub(r"[^a-z0-9]+", "-", re.sub(r"\b\d+-core processor\b", "", info["cpu"].lower())).strip("-")
    slug = f"{slug}-{info['affinity']}c" if not args.machine else slug
    date = datetime.datetime.now(datetime.timezone.utc)
    outdir = os.path.join(args.out, f"{date:%Y-%m-%d}-{slug}")
    if os.path.exists(outdir):
        outdir += f"-{date:%H%M}"
    os.makedirs(outdir)
    work = os.path.join(args.build, "bench")
    os.makedirs(work, exist_ok=True)
    log(f"bench_peers: results in {outdir}; machine {info['cpu']}, {info['affinity']} CPUs; load {loadavg()}")

    waited = None
    if args.wait_load > 0:
        quiet, secs, la = wait_for_quiet(args.wait_load, args.wait_max)
        waited = {"limit": args.wait_load, "quiet": quiet, "waited_s": round(secs), "load": la}
        log(f"  load wait: {'quiet' if quiet else 'still loaded'} after {secs:.0f} s ({la})")

    configs = []
    for item in args.configs.split():
        name, batches = item.split(":")
        if name not in MODELS:
            sys.exit(f"bench_peers: unknown model {name} (known: {', '.join(MODELS)})")
        configs += [(name, int(b)) for b in batches.split(",")]
    peers = [p for p in args.peers.split(",") if p]
    if "opencv-debian" in peers and not os.path.exists(DEBIAN_PY):
        peers.remove("opencv-debian")

    results = {"machine": info, "date": date.isoformat(timespec="seconds"), "load_start": loadavg(),
               "settings": {"imgsz": args.imgsz, "threads": args.threads, "runs": args.runs, "rounds": args.rounds,
                            "warmup": args.warmup,
                            "rotate": ROTATE, "seed": args.seed, "configs": args.configs,
                            "omp_policies": args.omp_policies, "peers": peers, "load_wait": waited},
               "models": {}, "rows": [], "cold_start": [], "harness": {}, "notes": []}
    inputs = os.path.join(work, f"inputs_{args.imgsz}.f32")
    results["settings"]["inputs"] = make_inputs(args, args.imgsz, inputs)
    calib, results["settings"]["int8_calibration"] = calib_images(args, work)

    raw = open(os.path.join(outdir, "peers.jsonl"), "w")
    table = open(os.path.join(outdir, "strix_bench.txt"), "w")
    prepared = {}
    for name, batch in configs:
        if name not in prepared:
            log(f"  preparing {name}: weights, Ultralytics checkpoint")
            prepared[name] = prepare_model(args, name, work)
            st, pt = prepared[name]
            results["models"][name] = {"yaml": MODELS[name][0], "scale": MODELS[name][1], "seed": args.seed,
                                       "weights_sha256": sha256(st)}
        st, pt = prepared[name]
        onnx_path = os.path.join(work, f"{name}_b{batch}_{args.imgsz}.onnx")
        export_onnx(pt, batch, args.imgsz, onnx_path)
        onnx_int8, quant = os.path.join(work, f"{name}_b{batch}_{args.imgsz}_int8.onnx"), None
        if "onnxruntime-int8" in peers:
            quant = quantize_ort(onnx_path, calib, batch, args.imgsz, onnx_int8)
        ncnn_stem = ""
        if "ncnn" in peers or "ncnn-bf16" in peers:
            one = os.path.join(work, f"{name}_b1_{args.imgsz}.onnx")
            if not os.path.exists(one):
                export_onnx(pt, 1, args.imgsz, one)
            try:
                ncnn_stem = convert_ncnn(one, args.imgsz, os.path.join(work, f"{name}_{args.imgsz}"))
            except subprocess.CalledProcessError as e:
                log(f"  pnnx could not convert {one}: {last_error(e.stderr or '', e.returncode)}")
        # rounds: every tool runs once per round, the order rotating, so a
        # burst of load from elsewhere falls on all of them alike
        tools = [("strix", p) for p in args.omp_policies.split(",")] + [(p, None) for p in peers if p != "ncnn-int8"]
        per_round = -(-args.runs // args.rounds)
        parts = {t: [] for t in tools}
        for rnd in range(args.rounds):
            k = rnd % len(tools)
            for t in tools[k:] + tools[:k]:
                if parts[t] and "error" in parts[t][0]:
                    continue  # failed once (e.g. cannot import the export): no retry
                if t[0] == "strix":
                    parts[t].append(run_strix(args, work, (name, batch), st, inputs, t[1], raw, table, per_round))
                elif t[0] == "strix-int8":
                    parts[t].append(run_strix(args, work, (name, batch), st, inputs, "default", raw, table, per_round,
                                              calib=calib))
                else:
                    parts[t].append(run_peer(args, peer=t[0], work=work, cfg=(name, batch),
                                             onnx_path=onnx_int8 if t[0] == "onnxruntime-int8" else onnx_path,
                                             pt=pt, inputs=inputs, raw=raw, runs=per_round, ncnn_stem=ncnn_stem))
        rows = [merge_rounds(parts[t]) for t in tools]
        if "ncnn-int8" in peers:
            rows.append({"tool": "ncnn-int8", "model": name, "batch": batch, "imgsz": args.imgsz,
                         "threads": args.threads, "precision": "int8", "error": ncnn_int8_reason()})
        for r in rows:
            r["cpu"], r["cpu_isa"] = info["cpu"], info["cpu_flags"]
            if r["tool"] == "onnxruntime-int8":
                r["quantization"] = quant
        ref = next((r["_out"] for r in rows if r["tool"] == "ultralytics" and "_out" in r), None)
        for r in rows:
            y = r.pop("_out", None)
            if y is not None and ref is not None:
                if r["tool"].startswith("strix"):  # [n, A, 4 + nc] -> [n, 4 + nc, A], the peers' layout
                    n, c, a = ref.shape
                    y = y.reshape(n, a, c).transpose(0, 2, 1)
                r["rel_l2_vs_ultralytics"] = rel_l2(y, ref)
            if "error" not in r:
                label = r["tool"] + (f" ({r['omp_wait_policy']})" if r["tool"] == "strix" else "")
                label += f" {r.get('precision', '')}"
                log(f"  {label:30s} {name} b{batch}: median {r['median_ms']:8.2f} ms, p90 {r['p90_ms']:8.2f} ms, "
                    f"{r['images_per_s']:7.2f} images/s, rel L2 vs Ultralytics "
                    f"{r.get('rel_l2_vs_ultralytics', float('nan')):.1e}")
            results["rows"].append(r)
    raw.close()
    table.close()

    if "yolov8n" not in prepared:
        prepared["yolov8n"] = prepare_model(args, "yolov8n", work)
    # the Python floor of the peers' peak RSS (interpreter + numpy + the same inputs, no framework)
    with open(os.path.join(outdir, "rss_floor.jsonl"), "w") as f:
        floor = run_peer(args, "floor", work, ("yolov8n", 1), "", "", inputs, f, 1)
        floor.pop("_out", None)
        results["rss_floor"] = floor
    with open(os.path.join(outdir, "cold_start.jsonl"), "w") as f:
        results["cold_start"] = cold_start(args, work, *prepared["yolov8n"], f)
    if not args.no_harness:
        log("  per-kernel harnesses")
        results["harness"]["conv"] = harness(args, outdir, "bench_conv", [
            os.path.join(args.build, "perf", "bench_conv"), "--threads", f"1,{args.threads}" if args.threads > 1
            else "1", "--imgsz", str(args.imgsz)])
        results["harness"]["nms"] = harness(args, outdir, "bench_nms", [os.path.join(args.build, "perf", "bench_nms")])
    results["load_end"] = loadavg()
    sys.path.insert(0, HERE)
    import bench_report  # also judges, from the recorded load averages, whether the machine was loaded
    for r in results["rows"]:
        if r["tool"] == "opencv-debian" and "error" in r:
            results["notes"].append(f"Debian's OpenCV {info['opencv_debian']} cannot import the ONNX export: "
                                    f"{r['error']}")
            break
    with open(os.path.join(outdir, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    log(f"bench_peers: wrote {outdir}/results.json; load average now {results['load_end']}")
    bench_report.report(outdir, readme=args.readme)


if __name__ == "__main__":
    sys.exit(main())
