#!/bin/sh
# run.sh — the CPU team's idle polling (perf/bench --cpu-spin-us) at 2 threads,
# yolo11n 640 batch 1, quiet and with two busy processes (`yes`) beside it:
#   sh perf/results/2026-11-29-amd-epyc-2c-spin/run.sh BENCH
set -eu
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/../../.."
lscpu > "$here/lscpu.txt"
run() { # label spin
    echo "$1 spin $2 load $(cut -d' ' -f1-3 /proc/loadavg): $("$B" --model weights/yolo11.yaml --scale n --threads 2 --runs 10 \
        --no-roofline --cpu-spin-us "$2" 2>&1 | grep '^ *640' | awk '{print "median", $3, "p90", $4}')"
}
B=$1
for r in 1 2; do for s in 0 50; do run quiet "$s"; done; done
yes >/dev/null & y1=$!
yes >/dev/null & y2=$!
for r in 1 2; do for s in 0 50; do run loaded "$s"; done; done
kill $y1 $y2
