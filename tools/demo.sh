#!/bin/sh
# demo.sh — the README's main job: find objects in a sample video with a
# YOLOv8n and get the video back annotated.  ../shared/data/vtest.avi
# (OpenCV's sample clip, shipped by Debian's opencv-doc package; see
# ../shared/data/README.md) becomes runs/demo/vtest.mp4 (H.264, boxes and
# labels on every frame) and runs/demo/vtest.jsonl (the detections, one JSON
# object per frame).  Without the sample, a synthetic clip made with
# ffmpeg's lavfi (test pattern + tone) stands in for it.
# No pretrained weights may be downloaded here, so it makes synthetic ones
# (deterministic, seed 7) unless weights/yolov8n.safetensors exists (see the
# README for converting an official checkpoint); with synthetic weights the
# boxes are meaningless but every stage runs, hence the low --conf.
set -e
cd "$(dirname "$0")/.."
B=${BUILD:-build}
out=runs/demo
clip=../shared/data/vtest.avi
if [ ! -f "$clip" ]; then
    echo "demo: no $clip (see ../shared/data/README.md: Debian's opencv-doc package ships it);" \
         "using a synthetic clip instead" >&2
    mkdir -p "$out/input"
    clip=$out/input/synthetic.mp4
    [ -f "$clip" ] || ffmpeg -v error -nostdin -f lavfi -i testsrc2=size=768x576:rate=25 \
        -f lavfi -i sine=frequency=440:sample_rate=48000 -t 10 -c:v libx264 -c:a aac -shortest "$clip"
fi
if [ -f weights/yolov8n.safetensors ] && [ -f weights/yolov8n.yaml ]; then
    model=weights/yolov8n.yaml weights=weights/yolov8n.safetensors conf=0.25
else
    model=weights/yolov8.yaml weights=weights/demo-yolov8n-synthetic.safetensors conf=0.1
    [ -f "$weights" ] || "$B/mkweights" --model "$model" --scale n --seed 7 --out "$weights"
fi
"$B/infer" --model "$model" --scale n --weights "$weights" --conf "$conf" --out "$out" --overwrite "$clip"
stem=$(basename "${clip%.*}")
echo "demo: the annotated video is $out/$stem.mp4, its detections (JSON Lines) $out/$stem.jsonl"
