#!/bin/sh
# setup.sh — the dev-time Python environment `make bench` needs for the peers
# (never needed to build, run or test strix): a venv at $STRIX_REF_VENV
# (default /opt/strix-ref) with Ultralytics (which brings PyTorch), ONNX,
# ONNX Runtime, onnxslim, opencv-python, matplotlib, safetensors, OpenVINO,
# ncnn and pnnx (ncnn's converter, ONNX -> ncnn) from PyPI,
# plus Debian's python3-opencv when apt-get is there (its OpenCV DNN is tried
# as a second OpenCV peer).  Idempotent.
set -eu
VENV=${STRIX_REF_VENV:-/opt/strix-ref}
[ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
"$VENV/bin/pip" install --quiet ultralytics safetensors onnx onnxruntime onnxslim opencv-python matplotlib \
    openvino ncnn pnnx
if command -v apt-get >/dev/null 2>&1 && ! /usr/bin/python3 -c "import cv2" 2>/dev/null; then
    SUDO=""
    [ "$(id -u)" -eq 0 ] || SUDO=sudo
    $SUDO apt-get install -y python3-opencv || echo "setup.sh: python3-opencv not installed: the Debian OpenCV peer will be skipped"
fi
echo "setup.sh: $VENV ready"
