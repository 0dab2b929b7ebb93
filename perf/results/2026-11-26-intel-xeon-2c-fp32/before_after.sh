#!/bin/sh
# before/after: old main (87e6a49: AVX2 only, OpenMP, B packed per call) vs this branch, alternating
cd /work/wt-cpu
for model in yolov8n; do
for t in 1 2; do
for r in 1 2 3 4 5; do
  for cfg in old-default old-passive new; do
    case $cfg in
      old-default) env -u OMP_WAIT_POLICY /tmp/b-cpu-base/perf/bench --model weights/yolov8.yaml --scale n --weights /tmp/cpu-ab/$model.safetensors --threads $t --runs 5 --warmup 1 --no-roofline ;;
      old-passive) OMP_WAIT_POLICY=passive /tmp/b-cpu-base/perf/bench --model weights/yolov8.yaml --scale n --weights /tmp/cpu-ab/$model.safetensors --threads $t --runs 5 --warmup 1 --no-roofline ;;
      new) /tmp/b-cpu-bench/perf/bench --model weights/yolov8.yaml --scale n --weights /tmp/cpu-ab/$model.safetensors --threads $t --runs 5 --warmup 1 --no-roofline ;;
    esac > /tmp/cpu-ab/run.txt 2>&1
    echo "$model t=$t round=$r $cfg load=$(cut -d' ' -f1 /proc/loadavg) $(tail -1 /tmp/cpu-ab/run.txt)"
  done
done; done; done
