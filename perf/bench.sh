#!/bin/sh
# bench.sh — what `make bench` runs after building: strix's perf/bench and its
# CPU peers (ONNX Runtime, OpenVINO, ncnn, OpenCV DNN, Ultralytics/PyTorch) in one run, the
# cold start, the per-kernel harnesses, then perf/results/<date>-<machine>/
# (raw logs, results.json, table.md, plot.png) and the performance
# section of docs/performance.md.  Dev-time only: the peers need Python from PyPI (perf/setup.sh);
# strix itself never does.
#   sh perf/bench.sh [bench_peers.py options]     (BUILD=dir, default build)
# Environment: STRIX_REF_PY (default /opt/strix-ref/bin/python).
set -eu
cd "$(dirname "$0")/.."
PY=${STRIX_REF_PY:-/opt/strix-ref/bin/python}
if ! [ -x "$PY" ] || ! "$PY" -c "import ultralytics, onnx, onnxruntime, onnxslim, cv2, matplotlib, safetensors, openvino, ncnn, pnnx" 2>/dev/null; then
    echo "make bench: the dev-time Python venv $PY (ultralytics, onnx, onnxruntime, onnxslim, opencv-python, matplotlib, safetensors, openvino, ncnn, pnnx) is missing or incomplete: create it with 'sh perf/setup.sh' (PyPI; strix itself never needs Python)" >&2
    exit 1
fi
exec "$PY" tools/reference/bench_peers.py --build "${BUILD:-build}" "$@"
