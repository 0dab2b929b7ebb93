#!/bin/sh
# run.sh — the depthwise / attention / decode changes of 2026-11-29 against
# their base, alternating in each round on the same machine:
#   sh perf/results/2026-11-29-amd-epyc-2c-fp32-ops/run.sh BASE_BUILD NEW_BUILD [ROUNDS]
# BASE_BUILD, NEW_BUILD: build dirs holding perf/bench and perf/bench_conv
# (e.g. /tmp/s16base/build/dev and build/dev).  Writes, beside this script,
# conv_<model>_<which>_r<k>.txt (bench_conv, CPU time, 1 thread) and
# layers_<model>_<which>_r<k>.jsonl + .txt (bench --layers: per-layer
# medians and the whole forward), plus lscpu.txt and the load averages.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
base=$1 new=$2 rounds=${3:-3}
lscpu > "$here/lscpu.txt"
r=1
while [ "$r" -le "$rounds" ]; do
    for m in yolo11 yolov8; do
        for which in base new; do
            b=$base
            [ "$which" = new ] && b=$new
            echo "round $r $m $which: load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$here/load.txt"
            "$b/perf/bench_conv" --model weights/$m.yaml --scale n --threads 1 --runs 9 --cpu-time \
                > "$here/conv_${m}n_${which}_r$r.txt" 2>&1
            rm -f "$here/layers_${m}n_${which}_r$r.jsonl"
            "$b/perf/bench" --model weights/$m.yaml --scale n --threads 1 --runs 15 --no-roofline \
                --layers "$here/layers_${m}n_${which}_r$r.jsonl" > "$here/layers_${m}n_${which}_r$r.txt" 2>&1
        done
    done
    r=$((r + 1))
done
