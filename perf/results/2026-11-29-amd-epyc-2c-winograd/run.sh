#!/bin/sh
# run.sh — the Winograd measurements of this directory (README.md says what
# each log is).  Run from the repo root:
#   sh perf/results/2026-11-29-amd-epyc-2c-winograd/run.sh BASE_BENCH ORT_DIR
# BASE_BENCH: build/dev/perf/bench of main e8b2848 (before Winograd);
# ORT_DIR: yolov8n.onnx, yolo11n.onnx and inputs640.f32 (README.md).
set -eu
D=perf/results/2026-11-29-amd-epyc-2c-winograd
BASE=$1 ORT=$2 NEW=build/dev/perf/bench PY=/tmp/coldref/bin/python
lscpu > $D/lscpu.txt
uptime > $D/load.txt
# per shape: the Winograd path against the path it replaces (STRIX_CPU_CONV_EXACT),
# their runs interleaved in each process, 3 rounds, CPU time, 1 thread
for r in 1 2 3; do
    for m in yolov8 yolo11; do
        build/dev/perf/bench_conv --model weights/$m.yaml --scale n --threads 1 --isa avx2 --cpu-time \
            --exact-too --runs 25 > $D/conv_${m}n_1t_r$r.txt
    done
done
for r in 1 2 3; do # small outputs (WINO_FITS): 5x5 and 10x10 at 160
    build/dev/perf/bench_conv --model weights/yolov8.yaml --scale n --imgsz 160 --threads 1 --isa avx2 \
        --cpu-time --exact-too --runs 25 > $D/conv_yolov8n_160_1t_r$r.txt
done
for m in yolov8 yolo11; do # 2 threads, wall clock
    build/dev/perf/bench_conv --model weights/$m.yaml --scale n --threads 2 --isa avx2 --exact-too --runs 25 \
        > $D/conv_${m}n_2t.txt
done
uptime >> $D/load.txt
# whole network: before (e8b2848), after, ONNX Runtime fp32, alternating per round
for r in 1 2 3; do
    for t in 1 2; do
        for m in yolov8 yolo11; do
            $BASE --model weights/$m.yaml --scale n --threads $t --runs 20 --no-roofline --inputs $ORT/inputs640.f32 \
                --label "base e8b2848 r$r" --json $D/net.jsonl > /dev/null
            $NEW --model weights/$m.yaml --scale n --threads $t --runs 20 --no-roofline --inputs $ORT/inputs640.f32 \
                --label "winograd r$r" --json $D/net.jsonl > /dev/null
            $PY tools/reference/bench_peers.py --peer onnxruntime --onnx $ORT/${m}n.onnx --pt none \
                --inputs $ORT/inputs640.f32 --batch 1 --threads $t --imgsz 640 --runs 20 --warmup 3 \
                --save-out /tmp/wino-ort-out.f32 | sed "s/^{/{\"model\": \"${m}n\", \"threads\": $t, \"label\": \"ort r$r\", /" \
                >> $D/net.jsonl
        done
    done
done
uptime >> $D/load.txt
