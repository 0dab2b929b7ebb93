#!/bin/sh
# run.sh — int8 on AVX2 without VNNI: which convolutions go int8.  Alternates,
# per round and model, strix fp32, the base's int8 (every eligible
# convolution), and this rule (backend.c int8_wins) at INT8_THIN_CIN 1, 32
# (the default) and 64; perf/bench, 1 thread, batch 1, 640, 10 timed runs.
#   sh run.sh BASE_BENCH CIN1_BENCH CIN32_BENCH CIN64_BENCH [ROUNDS]
# BASE_BENCH is main 5624c1a's perf/bench (its flag: --int8 IMGS); the
# others are this tree's, built with CFLAGS=-DINT8_THIN_CIN=N (32: the
# normal build).  Raw output to raw.txt, one line a run to runs.txt.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
D=${STRIX_DATA:-../shared/data}
cal=$D/dog.jpg,$D/horses.jpg
base=$1 cin1=$2 cin32=$3 cin64=$4 rounds=${5:-3}
r=1
while [ "$r" -le "$rounds" ]; do
    for m in yolov8 yolo11; do
        for v in fp32 base-int8 cin1 cin32 cin64; do
            case $v in
            fp32) set -- "$cin32" ;;
            base-int8) set -- "$base" --int8 "$cal" ;;
            cin1) set -- "$cin1" --precision int8 --calibrate "$cal" ;;
            cin32) set -- "$cin32" --precision int8 --calibrate "$cal" ;;
            cin64) set -- "$cin64" --precision int8 --calibrate "$cal" ;;
            esac
            echo "round $r $m $v load $(cut -d' ' -f1-3 /proc/loadavg): $*" >> "$here/raw.txt"
            "$@" --model weights/$m.yaml --scale n --threads 1 --runs 10 --no-roofline >> "$here/raw.txt" 2>&1
            echo "$r ${m}n $v $(tail -n 1 "$here/raw.txt" | awk '{print $3}')" >> "$here/runs.txt"
        done
    done
    r=$((r + 1))
done
