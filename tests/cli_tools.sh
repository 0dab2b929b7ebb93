#!/bin/sh
# cli_tools.sh — end-to-end checks of the inspect, mkweights and moteval tools: output,
# documented exit codes, one-line errors, no partial files.
#   sh tests/cli_tools.sh BUILD_DIR      (from the repository root)
B=${1:-build}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass() { echo "PASS $1"; }
fail() { echo "FAIL $1: $2"; }
# expect NAME CODE CMD... : exit code CODE and, on failure, one stderr line
expect() {
    name=$1 code=$2
    shift 2
    "$@" >"$T/out" 2>"$T/err"
    rc=$?
    lines=$(wc -l <"$T/err")
    if [ $rc -ne "$code" ]; then fail "$name" "exit $rc, want $code: $(head -c 300 "$T/err")"
    elif [ "$code" -ne 0 ] && [ "$lines" -ne 1 ]; then fail "$name" "want one error line, got $lines"
    else pass "$name"; fi
}

expect inspect_ok 0 "$B/inspect" --model weights/yolov8.yaml --scale n
if grep -q "^fused: 72 layers, 3151904 parameters, 8.7 GFLOPs$" "$T/out" &&
   grep -q "^unfused: 129 layers, 3157200 parameters, 8.9 GFLOPs$" "$T/out" &&
   grep -q "^  22 *\[15, 18, 21\] *1 *897664  Detect" "$T/out"; then pass inspect_table
else fail inspect_table "$(tail -5 "$T/out")"; fi
# the program's fusions are shown where they happen: SPPF's three max-pools run as one cascade
grep -q "^   9 .* SPPF .* 256 x 20 x 20  (3 max-pools fused)$" "$T/out" && pass inspect_fusions ||
    fail inspect_fusions "$(grep SPPF "$T/out")"
expect inspect_yolo11x_summary 0 "$B/inspect" --model weights/yolo11.yaml --scale x --summary
grep -q "^fused: 190 layers, 56919424 parameters, 194.9 GFLOPs$" "$T/out" && pass inspect_yolo11x_numbers ||
    fail inspect_yolo11x_numbers "$(cat "$T/out")"
expect inspect_rect_size 0 "$B/inspect" --model weights/yolo11.yaml --scale n --size 384x640
grep -q "Detect .* 84 x 1 x 5040$" "$T/out" && pass inspect_rect_anchors || fail inspect_rect_anchors "$(grep Detect "$T/out")"
expect inspect_no_model 2 "$B/inspect"
expect inspect_bad_option 2 "$B/inspect" --model weights/yolov8.yaml --frobnicate 3
expect inspect_missing_yaml 3 "$B/inspect" --model "$T/none.yaml" --scale n
printf 'nc: 80\nbackbone:\n  - [-1, 1, Conv, [16, 3, 2]\n' >"$T/bad.yaml"
expect inspect_malformed_yaml 4 "$B/inspect" --model "$T/bad.yaml" --scale n
grep -q "bad.yaml:" "$T/err" && pass inspect_error_names_file || fail inspect_error_names_file "$(cat "$T/err")"
expect inspect_bad_size 2 "$B/inspect" --model weights/yolov8.yaml --scale n --size 100x100

expect mkweights_ok 0 "$B/mkweights" --model weights/yolov8.yaml --scale n --seed 3 --out "$T/w.safetensors"
sum=$(cksum <"$T/w.safetensors")
expect mkweights_refuses_overwrite 7 "$B/mkweights" --model weights/yolov8.yaml --scale n --out "$T/w.safetensors"
[ "$(cksum <"$T/w.safetensors")" = "$sum" ] && pass mkweights_left_file_alone || fail mkweights_left_file_alone "file changed"
expect mkweights_overwrite 0 "$B/mkweights" --model weights/yolov8.yaml --scale n --seed 3 --out "$T/w.safetensors" --overwrite
[ "$(cksum <"$T/w.safetensors")" = "$sum" ] && pass mkweights_deterministic || fail mkweights_deterministic "same seed, different bytes"
expect mkweights_unwritable 7 "$B/mkweights" --model weights/yolov8.yaml --scale n --out "$T/w.safetensors/sub/x.safetensors"
expect inspect_with_weights 0 "$B/inspect" --model weights/yolov8.yaml --scale n --weights "$T/w.safetensors" --summary
expect inspect_wrong_scale_weights 5 "$B/inspect" --model weights/yolov8.yaml --scale s --weights "$T/w.safetensors"
head -c 1000 "$T/w.safetensors" >"$T/trunc.safetensors"
expect inspect_truncated_weights 5 "$B/inspect" --model weights/yolov8.yaml --scale n --weights "$T/trunc.safetensors"
# task models: inspect gives Ultralytics' counts (tests/test_model.c checks every task YAML); infer runs
# them from YAML + safetensors and writes their fields (tests/cli_tasks.sh checks them against Ultralytics)
expect inspect_seg 0 "$B/inspect" --model weights/yolov8-seg.yaml --scale n --summary
grep -q "^fused: 85 layers, 3404320 parameters, 12.0 GFLOPs$" "$T/out" && pass inspect_seg_numbers ||
    fail inspect_seg_numbers "$(cat "$T/out")"
expect mkweights_pose 0 "$B/mkweights" --model weights/yolo11-pose.yaml --scale n --out "$T/pose.safetensors"
expect infer_task_model 0 "$B/infer" --model weights/yolo11-pose.yaml --scale n --weights "$T/pose.safetensors" \
    --device cpu --imgsz 160 --conf 0.05 --no-save tests/golden/inputs.txt --json "$T/pose.json"
grep -q '"keypoints": {"x": \[' "$T/pose.json" && pass infer_task_model_keypoints ||
    fail infer_task_model_keypoints "no keypoints in $T/pose.json: $(head -c 300 "$T/pose.json")"
# --nms-free: YOLO26's one-to-one head alone (which infer and inspect then take); refused without one
expect mkweights_nms_free 0 "$B/mkweights" --model weights/yolo26-obb.yaml --scale n --nms-free --out "$T/o2o.safetensors"
expect inspect_nms_free_tensors 0 "$B/inspect" --model weights/yolo26-obb.yaml --scale n --weights "$T/o2o.safetensors" \
    --tensors
grep -q "model.23.one2one_cv4.0.0.conv.weight" "$T/out" && ! grep -q "model.23.cv[234]\." "$T/out" &&
    pass mkweights_nms_free_one_head || fail mkweights_nms_free_one_head "$(grep "model.23" "$T/out" | head -3)"
expect mkweights_nms_free_v8 2 "$B/mkweights" --model weights/yolov8.yaml --scale n --nms-free --out "$T/nf.safetensors"
grep -q "no one-to-one head" "$T/err" && pass mkweights_nms_free_v8_says_why || fail mkweights_nms_free_v8_says_why "$(cat "$T/err")"
left=$(find "$T" -name '*.tmp*' | wc -l)
[ "$left" -eq 0 ] && pass no_temp_files_left || fail no_temp_files_left "$left temporary files"
expect inspect_bad_device 2 "$B/inspect" --model weights/yolov8.yaml --scale n --device tpu
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L >/dev/null 2>&1; then
    echo "SKIP inspect_cuda_without_gpu: this machine has a GPU"
else
    expect inspect_cuda_without_gpu 9 "$B/inspect" --model weights/yolov8.yaml --scale n --device cuda
fi
# moteval: the ground truth scored against itself is perfect; against a
# stream with one identity swapped half way, one switch per object
G=tests/golden/track/cross.gt.txt
expect moteval_self 0 "$B/moteval" "$G" "$G"
grep -q "^MOTA 1.0000 IDF1 1.0000" "$T/out" 2>/dev/null && pass moteval_self_perfect || fail moteval_self_perfect "$(cat "$T/out" 2>/dev/null)"
awk -F, '$1 > 45 { $2 = 3 - $2 } { print }' OFS=, "$G" >"$T/swapped.txt"
expect moteval_swapped 0 "$B/moteval" "$G" "$T/swapped.txt"
grep -q "idsw 2 " "$T/out" 2>/dev/null && pass moteval_swapped_counts || fail moteval_swapped_counts "$(cat "$T/out" 2>/dev/null)"
printf '1,1,10,10,5\n' >"$T/short.txt"
expect moteval_malformed 3 "$B/moteval" "$G" "$T/short.txt"
expect moteval_usage 2 "$B/moteval" "$G"
# a binary file (here a PNG header) and a negative width: one line naming
# file:line, exit 3 (input), and no raw bytes echoed from the file
printf '\211PNG\r\n\032\n\000\000\000\rIHDR\377\376' >"$T/binary.txt"
expect moteval_binary_file 3 "$B/moteval" "$G" "$T/binary.txt"
if grep -qF "binary.txt:1: field 1 '\x89PNG' is not a finite number" "$T/err" &&
   ! LC_ALL=C grep -q '[^ -~]' "$T/err"; then
    pass moteval_binary_message
else fail moteval_binary_message "$(od -c "$T/err" | head -5)"; fi
printf '1,1,10,10,5,5\n\032\001\n' >"$T/control.txt"
expect moteval_control_bytes 3 "$B/moteval" "$T/control.txt" "$G"
grep -q "control.txt:2: byte 0x1a at column 1 is not text (is this a binary file?" "$T/err" &&
    pass moteval_control_message || fail moteval_control_message "$(cat -v "$T/err")"
printf '1,1,10,10,5,5\n2,1,10,10,-5,5\n' >"$T/negative.txt"
expect moteval_negative_width 3 "$B/moteval" "$T/negative.txt" "$G"
grep -q "negative.txt:2: bb_width -5 is negative" "$T/err" && pass moteval_negative_message ||
    fail moteval_negative_message "$(cat "$T/err")"
