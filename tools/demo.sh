#!/bin/sh
# demo.sh — the README's main job: annotate sample images with a YOLOv8n.
# No pretrained weights may be downloaded here, so it makes synthetic ones
# (deterministic, seed 7) unless weights/yolov8n.safetensors exists (see the
# README for converting an official checkpoint); with synthetic weights the
# boxes are meaningless but every stage runs, hence the low --conf.
set -e
cd "$(dirname "$0")/.."
B=${BUILD:-build}
out=runs/demo
images=""
for f in ../shared/data/*.jpg; do [ -f "$f" ] && images="$images $f"; done
if [ -z "$images" ]; then
    echo "demo: ../shared/data has no sample images; see ../shared/data/README.md (Debian's darknet package ships them)" >&2
    exit 3
fi
if [ -f weights/yolov8n.safetensors ] && [ -f weights/yolov8n.yaml ]; then
    model=weights/yolov8n.yaml weights=weights/yolov8n.safetensors conf=0.25
else
    model=weights/yolov8.yaml weights=weights/demo-yolov8n-synthetic.safetensors conf=0.1
    [ -f "$weights" ] || "$B/mkweights" --model "$model" --scale n --seed 7 --out "$weights"
fi
"$B/infer" --model "$model" --scale n --weights "$weights" --conf "$conf" --out "$out" --overwrite $images
echo "demo: annotated images and detections.json are in $out/"
