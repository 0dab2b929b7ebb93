#!/bin/sh
# bench.sh — what `make bench` runs after building: strix's perf/bench (fp32
# and int8) and its CPU peers (ONNX Runtime fp32 and int8, OpenVINO f32 and at
# its default precision, ncnn fp32 and bf16, OpenCV DNN, Ultralytics/PyTorch)
# in one run, the cold start, the per-kernel harnesses, then
# perf/results/<date>-<machine>/ (raw logs, results.json, table.md, plot.png)
# and the performance section of docs/performance.md.  Dev-time only: the
# peers need Python from PyPI (perf/setup.sh); strix itself never does.
#   sh perf/bench.sh [bench_peers.py options]     (BUILD=dir, default build)
# `make bench BUILD=build/cpu CUDA=0` benchmarks a CPU-only build directory
# (make passes BUILD here; CUDA=0 spares compiling the CUDA backend).
# Environment: STRIX_REF_PY (default /opt/strix-ref/bin/python).
set -eu
cd "$(dirname "$0")/.."
PY=${STRIX_REF_PY:-/opt/strix-ref/bin/python}
if ! [ -x "$PY" ] || ! "$PY" -c "import ultralytics, onnx, onnxruntime, onnxslim, cv2, matplotlib, safetensors, openvino, ncnn, pnnx" 2>/dev/null; then
    echo "make bench: the dev-time Python venv $PY (ultralytics, onnx, onnxruntime, onnxslim, opencv-python, matplotlib, safetensors, openvino, ncnn, pnnx) is missing or incomplete: create it with 'sh perf/setup.sh' (PyPI; strix itself never needs Python)" >&2
    exit 1
fi
exec "$PY" tools/reference/bench_peers.py --build "${BUILD:-build}" "$@"
