#!/bin/sh
# cli_gpu.sh — what of the GPU check runs without a GPU: tools/gpu-check.sh's
# "no GPU" exit (status 9, one line, nothing written), its usage errors, its
# step bookkeeping (in a fake bundle whose programs, nvidia-smi and
# compute-sanitizer are stand-in scripts: a failing step is named, the report
# is made), perf/gpu_video.sh with a stand-in infer, perf/gpu_report.sh on
# canned result rows, and perf/gpu_bench's exit codes.
#   sh tests/cli_gpu.sh BUILD_DIR      (from the repository root)
B=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d "${TMPDIR:-/tmp}/strix_cli_gpu.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
pass() { echo "PASS cli_gpu_$1"; }
fail() { echo "FAIL cli_gpu_$1: $2"; }
skip() { echo "SKIP cli_gpu_$1: $2"; }

# --- gpu-check without a GPU, and its usage errors
if command -v nvidia-smi >/dev/null 2>&1; then
    skip no_gpu_exit "this machine has nvidia-smi"
else
    mkdir -p "$T/nogpu/tools" && cp "$ROOT/tools/gpu-check.sh" "$T/nogpu/tools/"
    sh "$T/nogpu/tools/gpu-check.sh" >"$T/out" 2>"$T/err"
    rc=$?
    if [ $rc -ne 9 ]; then fail no_gpu_exit "exit $rc, want 9"
    elif [ "$(wc -l <"$T/err")" -ne 1 ] || ! grep -q '^gpu-check: no GPU: nvidia-smi not found' "$T/err"; then
        fail no_gpu_exit "want one line naming the missing GPU: $(cat "$T/err")"
    elif [ -s "$T/out" ] || [ -e "$T/nogpu/perf" ]; then fail no_gpu_exit "wrote something: $(ls "$T/nogpu")"
    else pass no_gpu_exit; fi
fi
for bad in "--seeds 0" "--batch 1,x" "--models yolov9n" "--python /nonexistent/python" "--time-limit soon" "--frobnicate"; do
    # shellcheck disable=SC2086 # $bad: option and value
    sh "$ROOT/tools/gpu-check.sh" $bad >/dev/null 2>"$T/err"
    rc=$?
    if [ $rc -ne 2 ] || [ "$(wc -l <"$T/err")" -ne 1 ]; then fail "usage_$(echo "$bad" | tr -c 'a-z0-9\n' _)" "exit $rc, want 2 and one line: $(cat "$T/err")"
    else pass "usage_$(echo "$bad" | tr -c 'a-z0-9\n' _)"; fi
done

# --- the step bookkeeping, in a fake bundle: FAKE_FAIL names the stand-in that fails
fake=$T/bundle
mkdir -p "$fake/tools/reference" "$fake/perf" "$fake/build/tests" "$fake/build/perf" "$fake/bin" "$fake/lib"
cp "$ROOT/tools/gpu-check.sh" "$fake/tools/" && cp "$ROOT/perf/gpu_report.sh" "$fake/perf/"
printf 'strix GPU bundle\ncommit: 0123abc\nbuilt: test\n' >"$fake/BUNDLE"
cat >"$fake/bin/nvidia-smi" <<'EOF'
#!/bin/sh
case "$*" in
*name*) echo "Fake GPU 80GB" ;;
*driver_version*) echo "999.1" ;;
*compute_cap*) echo "9.0" ;;
*) echo "| CUDA Version: 13.0 |" ;;
esac
EOF
cat >"$fake/bin/compute-sanitizer" <<'EOF'
#!/bin/sh
tool=""
while [ $# -gt 0 ]; do case "$1" in --tool) tool=$2; shift 2 ;; --leak-check|--error-exitcode) shift 2 ;; *) break ;; esac; done
"$@" || exit $?
if [ "$FAKE_FAIL" = "$tool" ]; then echo "========= ERROR SUMMARY: 3 errors"; exit 99; fi
echo "========= ERROR SUMMARY: 0 errors"
EOF
cat >"$fake/build/tests/test_cuda_ops" <<'EOF'
#!/bin/sh
if [ "$FAKE_FAIL" = nodevice ]; then echo "SKIP op_convert: no CUDA device"; exit 0; fi
echo "PASS op_convert"
EOF
cat >"$fake/build/mkweights" <<'EOF'
#!/bin/sh
while [ $# -gt 0 ]; do case "$1" in --out) : >"$2"; shift 2 ;; *) shift ;; esac; done
EOF
cat >"$fake/build/perf/gpu_bench" <<'EOF'
#!/bin/sh
json="" mode="" name="" half=fp32
while [ $# -gt 0 ]; do case "$1" in --json) json=$2; shift 2 ;; --mode) mode=$2; shift 2 ;; --name) name=$2; shift 2 ;; --half) half=fp16; shift ;; *) shift ;; esac; done
[ "$FAKE_FAIL" = "bench" ] && [ "$mode" = layers ] && { echo "gpu_bench: fake failure" >&2; exit 9; }
[ "$FAKE_FAIL" = "slow" ] && sleep 1
case $mode in
detect) case "$*" in *--async*) echo "{\"tool\": \"strix\", \"model\": \"$name\", \"dtype\": \"$half\", \"batch\": 8, \"mode\": \"detect-1280x720-async\", \"median_ms\": 2, \"images_per_s\": 4000, \"latency_median_ms\": 3}" >>"$json" ;; esac ;;
forward) echo "{\"tool\": \"strix\", \"model\": \"$name\", \"dtype\": \"$half\", \"batch\": 8, \"mode\": \"forward-device\", \"median_ms\": 4, \"images_per_s\": 2000}" >>"$json" ;;
cold) echo "{\"tool\": \"strix\", \"model\": \"$name\", \"dtype\": \"$half\", \"batch\": 1, \"mode\": \"cold-start\", \"process_to_detection_s\": 0.5, \"max_rss_mb\": 300}" >>"$json" ;;
esac
EOF
mkdir -p "$fake/build/perf/cuda"
for lab in conv_lab pool_lab resize_lab letterbox_lab; do
    cat >"$fake/build/perf/cuda/$lab" <<EOF
#!/bin/sh
if [ "\$FAKE_FAIL" = nodevice ]; then echo "$lab: no CUDA device" >&2; exit 9; fi
if [ "\$FAKE_FAIL" = $lab ]; then echo "FAIL: 1 failed checks"; exit 1; fi
echo "ok: 0 failed checks"
EOF
done
chmod +x "$fake/bin/"* "$fake/build/tests/test_cuda_ops" "$fake/build/mkweights" "$fake/build/perf/gpu_bench" \
    "$fake/build/perf/cuda/"*
# fakecheck NAME FAKE_FAIL WANT_RC [ARGS]: run the fake bundle's check into $T/NAME
fakecheck() {
    name=$1 ff=$2 want_rc=$3
    shift 3
    FAKE_FAIL=$ff PATH="$fake/bin:$PATH" sh "$fake/tools/gpu-check.sh" --out "$T/$name" --models yolov8n --batch 8 \
        --sanitizer-timeout 60 "$@" >"$T/$name.out" 2>&1
    rc=$?
    [ $rc -eq "$want_rc" ] || { fail "$name" "exit $rc, want $want_rc: $(tail -n 5 "$T/$name.out")"; return 1; }
}
if fakecheck fake_pass none 0; then
    s=$T/fake_pass/summary.txt
    if ! grep -q '^SKIP build: a bundle' "$s" || ! grep -q '^PASS ops' "$s" || ! grep -q '^PASS initcheck' "$s" ||
        ! grep -q '^PASS async' "$s" || [ "$(grep -c -- '--async' "$T/fake_pass/async.log")" -ne 5 ] ||
        ! grep -q '^SKIP peers: no --python PATH given' "$s" || [ "$(tail -n 1 "$s")" != "gpu-check: every step passed" ]; then
        fail fake_pass "summary: $(cat "$s")"
    elif ! grep -q '"model": "yolov8n", "dtype": "fp16", "batch": 8, "mode": "forward-device"' "$T/fake_pass/results.json" ||
        ! grep -q '"gpu": "Fake GPU 80GB"' "$T/fake_pass/results.json" || ! grep -q '^| yolov8n | fp16 | 8 | 4.00 | 2000 |' "$T/fake_pass/table.md" ||
        ! grep -q '</svg>' "$T/fake_pass/plot.svg"; then
        fail fake_pass "report: $(cat "$T/fake_pass/table.md")"
    else pass fake_pass; fi
fi
for f in initcheck bench pool_lab nodevice; do
    want=$f
    [ $f = pool_lab ] && want="lab-pool"
    [ $f = bench ] && want="bench bench-more" # the first model's layers, with kernel sets 2, 3 and then 1
    [ $f = nodevice ] && want="ops network memcheck memcheck-network lab lab-batch1 lab-pool lab-resize lab-letterbox racecheck initcheck synccheck"
    if fakecheck "fake_fail_$f" "$f" 1; then
        last=$(tail -n 1 "$T/fake_fail_$f/summary.txt")
        if [ "$last" != "gpu-check: FAILED steps: $want" ]; then fail "fake_fail_$f" "last line: $last"
        else pass "fake_fail_$f"; fi
    fi
done

# the time limit: every stand-in benchmark call takes a second and the limit
# is 4 s, so the goals' calls start and the later steps and calls are left
# out, each named; the report is still made and the exit is 0
if fakecheck fake_time_limit slow 0 --time-limit 4; then
    s=$T/fake_time_limit/summary.txt
    if ! grep -q '^PASS ops' "$s" || ! grep -q '^PASS bench' "$s" || ! grep -q '^    SKIP the time limit (4s) left out: ' "$s" ||
        ! grep -q '^SKIP racecheck: the time limit (4s, --time-limit) was reached before it started' "$s" ||
        ! grep -q '^PASS report' "$s" || ! grep -q '^gpu-check: the time limit cut: .*racecheck' "$s" ||
        [ "$(tail -n 1 "$s")" != "gpu-check: every step that ran passed" ] || [ ! -s "$T/fake_time_limit/table.md" ]; then
        fail fake_time_limit "summary: $(cat "$s")"
    else pass fake_time_limit; fi
fi

# --- perf/gpu_video.sh with a stand-in infer (one JSON Lines file of 3 frames
# per input; its summary names NVDEC for --decode nvdec; FAKE_BAD makes the
# NVDEC runs' detections differ): every run timed, rows written, the NVDEC
# runs compared with the CPU --nv12 run's, a difference named
v=$T/video
mkdir -p "$v/bin"
cat >"$v/bin/infer" <<'EOF'
#!/bin/sh
out="" ins="" dec=0
while [ $# -gt 0 ]; do
    case "$1" in
    --out) out=$2; shift 2 ;;
    --decode) dec=1; shift 2 ;;
    --model | --scale | --weights | --device | --batch | --jobs | --imgsz | --threads | --vid-stride | --codec | --preset | --crf) shift 2 ;;
    --*) shift ;;
    *) ins="$ins $1"; shift ;;
    esac
done
mkdir -p "$out"
for i in $ins; do
    d=0
    [ $dec = 1 ] && [ -n "$FAKE_BAD" ] && d=1
    printf '{"header": 1}\n{"frame": 0, "d": %d}\n{"frame": 1}\n{"frame": 2}\n' $d >"$out/$(basename "$i" .mp4).jsonl"
    echo "infer: $i: 3 frames (3 detected)$([ $dec = 1 ] && echo '; NVDEC 40% busy (NVML)'); peak memory 5 MB"
done
EOF
chmod +x "$v/bin/infer"
if command -v ffmpeg >/dev/null 2>&1; then
    ffmpeg -v error -nostdin -y -f lavfi -i testsrc2=s=64x64:r=10:d=0.2 -c:v libx264 -pix_fmt yuv420p "$v/clip.mp4"
else
    : >"$v/clip.mp4"
fi
(cd "$ROOT" && sh perf/gpu_video.sh "$v/bin/infer" "$v/clip.mp4" weights/yolov8.yaml n "$v/w" "$v/work" "$v/rows.jsonl") \
    >"$v/out" 2>&1
rc=$?
runs="cpu-rgb-1 cpu-nv12-1 nvdec-1 cpu-rgb-1-async cpu-nv12-1-async nvdec-1-async cpu-rgb-8 cpu-nv12-8 nvdec-8"
runs="$runs cpu-rgb-8-async cpu-nv12-8-async nvdec-8-async mem-8-b64"
missing=""
for r in $runs; do grep -q "\"name\": \"$r\"" "$v/rows.jsonl" 2>/dev/null || missing="$missing $r"; done
if [ $rc -ne 0 ] || [ -n "$missing" ]; then fail video_script "exit $rc, rows missing:$missing: $(tail -n 5 "$v/out")"
elif [ "$(grep -c '^PASS nvdec-' "$v/out")" -ne 4 ] || [ "$(grep -c '^PASS cpu-nv12-' "$v/out")" -ne 2 ]; then
    fail video_script "want 6 PASS comparisons: $(grep -E '^(PASS|FAIL)' "$v/out")"
elif ! grep -q '"name": "nvdec-8-async", "inputs": 8, "frames": 24, .*"async": 1, "batch": 32, "nvdec_util_infer": 40.0' "$v/rows.jsonl" ||
    ! grep -q '"name": "mem-8-b64", "inputs": 8, "frames": 24, .*"batch": 64, .*"max_rss_mb": ' "$v/rows.jsonl"; then
    fail video_script "rows: $(cat "$v/rows.jsonl")"
elif command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1 &&
    [ "$(grep -c '"kind": "video-annotated", "name": "annotated.*"encoder": "libx264"' "$v/rows.jsonl")" -ne 2 ]; then
    fail video_script "want 2 annotated rows: $(grep -E 'annotated|FAIL' "$v/out")"
else pass video_script; fi
(cd "$ROOT" && FAKE_BAD=1 sh perf/gpu_video.sh "$v/bin/infer" "$v/clip.mp4" weights/yolov8.yaml n "$v/w" "$v/bad" "$v/bad.jsonl") \
    >"$v/bad.out" 2>&1
rc=$?
if [ $rc -eq 1 ] && grep -q '^FAIL nvdec-8-async: c1.jsonl differs from the CPU-decoded --nv12 run' "$v/bad.out"; then
    pass video_script_mismatch
else fail video_script_mismatch "exit $rc, want 1 and a FAIL line: $(grep -E '^(PASS|FAIL)' "$v/bad.out")"; fi

# --- the report from canned rows: strix and a peer side by side, sorted layers
r=$T/report
mkdir -p "$r"
cat >"$r/rows.jsonl" <<'EOF'
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 8, "imgsz": 640, "mode": "forward-device", "median_ms": 4.0, "images_per_s": 2000}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 1, "imgsz": 640, "mode": "forward-device", "median_ms": 1.5, "images_per_s": 666.67}
{"tool": "ultralytics", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 1, "imgsz": 640, "mode": "forward-device", "median_ms": 6.0, "images_per_s": 166.67}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 1, "imgsz": 640, "mode": "forward-device", "kernels": 2, "median_ms": 1.0, "images_per_s": 1000}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 1, "imgsz": 640, "mode": "forward-device", "kernels": 3, "median_ms": 0.5, "images_per_s": 2000}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 8, "imgsz": 640, "mode": "detect-1280x720", "median_ms": 8.0, "images_per_s": 1000, "frame": "1280x720"}
{"tool": "ultralytics", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 8, "imgsz": 640, "mode": "detect-1280x720", "median_ms": 16.0, "images_per_s": 500, "frame": "1280x720"}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 64, "imgsz": 640, "mode": "layer", "layer": 2, "module": "C2f", "runs": 5, "median_ms": 3.0, "percent": 30.00, "forward_ms": 10.0}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 64, "imgsz": 640, "mode": "layer", "layer": 0, "module": "Conv", "runs": 5, "median_ms": 1.0, "percent": 10.00, "forward_ms": 10.0}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 64, "imgsz": 640, "mode": "layer", "kernels": 3, "layer": 0, "module": "Conv", "runs": 5, "median_ms": 0.6, "percent": 8.00, "forward_ms": 7.5}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 64, "imgsz": 640, "mode": "layer", "kernels": 2, "layer": 0, "module": "Conv", "runs": 5, "median_ms": 0.8, "percent": 9.00, "forward_ms": 8.9}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 1, "imgsz": 640, "mode": "cold-start", "process_to_detection_s": 0.52, "max_rss_mb": 384.2}
{"tool": "ultralytics", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 1, "imgsz": 640, "mode": "cold-start", "process_to_detection_s": 7.19, "max_rss_mb": 2100}
{"kind": "video", "name": "nvdec-8", "inputs": 8, "frames": 960, "fps": 2345.6}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 64, "imgsz": 640, "mode": "forward-device", "median_ms": 14.0, "images_per_s": 4571.43}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 64, "imgsz": 640, "mode": "detect-1280x720-async", "median_ms": 16.0, "images_per_s": 4000, "latency_median_ms": 20.5, "latency_p90_ms": 21, "wall_images_per_s": 3900}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 1, "imgsz": 640, "mode": "detect-1280x720-async", "median_ms": 0.4, "images_per_s": 2500, "latency_median_ms": 0.7, "latency_p90_ms": 0.8, "wall_images_per_s": 2400}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 64, "imgsz": 640, "mode": "device-1280x720-nv12-async", "median_ms": 15.0, "images_per_s": 4266.67, "latency_median_ms": 18, "latency_p90_ms": 19, "wall_images_per_s": 4200}
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 64, "imgsz": 640, "mode": "pinned-1280x720-async", "median_ms": 15.5, "images_per_s": 4129.03, "latency_median_ms": 19, "latency_p90_ms": 20, "wall_images_per_s": 4100}
{"tool": "ultralytics", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 64, "imgsz": 640, "mode": "detect-1280x720", "median_ms": 93.2, "images_per_s": 687}
{"kind": "video", "name": "mem-8-b64", "inputs": 8, "frames": 14400, "fps": 2000, "async": 1, "batch": 64, "nvdec_util_infer": 55.0, "samples": 30, "rss_first_half_mb": 700, "max_rss_mb": 702, "max_device_mb": 0, "device_used_delta_mb": 1100}
{"kind": "video-annotated", "name": "annotated", "frames": 1800, "fps": 400.1, "ffmpeg_fps": 420.0, "ratio": 0.953, "encoder": "libx264", "async": 0}
EOF
echo '{"gpu": "NVIDIA H100 80GB HBM3", "driver": "580.159.04", "cuda": "13.0", "commit": "abc", "date": "2026-11-25"}' >"$r/machine.json"
printf 'PASS ops (exit 0, 1s): ops.log\nFAIL initcheck (exit 99, 3s): initcheck.log\n' >"$r/summary.txt"
if ! sh "$ROOT/perf/gpu_report.sh" "$r" >"$T/out" 2>&1; then fail report "exit $?: $(cat "$T/out")"
elif ! grep -q '^| yolov8n | fp16 | 1 | 1.50 | 667 | 167 | 4.00 |$' "$r/table.md"; then fail report_forward_ratio "$(cat "$r/table.md")"
elif ! grep -q '^| yolov8n k2 | fp16 | 1 | 1.00 | 1000 | 167 | 6.00 |$' "$r/table.md"; then fail report_kernels2_row "$(cat "$r/table.md")"
elif ! grep -q '^| yolov8n k3 | fp16 | 1 | 0.50 | 2000 | 167 | 12.00 |$' "$r/table.md"; then fail report_kernels3_row "$(cat "$r/table.md")"
elif ! grep -q '^| yolov8n | fp16 | 8 | 8.00 | 1000 | 500 | 2.00 |$' "$r/table.md"; then fail report_detect_ratio "$(cat "$r/table.md")"
elif [ "$(grep -n '^| yolov8n | fp16 | 2 | C2f |' "$r/table.md" | cut -d: -f1)" -ge \
       "$(grep -n '^| yolov8n | fp16 | 0 | Conv |' "$r/table.md" | cut -d: -f1)" ]; then
    fail report_layers_sorted "$(grep '|' "$r/table.md")"
elif ! grep -q '^| yolov8n | fp16 | 64 | 0 | Conv | 1.000 | 0.800 | 0.600 |$' "$r/table.md" ||
    ! grep -q '^| yolov8n | fp16 | 64 | 2 | C2f | 3.000 |  |  |$' "$r/table.md" ||
    [ "$(grep -n '^| yolov8n | fp16 | 64 | 0 | Conv | 1.000' "$r/table.md" | cut -d: -f1)" -ge \
      "$(grep -n '^| yolov8n | fp16 | 64 | 2 | C2f | 3.000' "$r/table.md" | cut -d: -f1)" ]; then
    fail report_layers_before_after "$(grep '|' "$r/table.md")"
elif ! grep -q '^| ultralytics | yolov8n | fp16 | 7.19 | 2100 |' "$r/table.md"; then fail report_cold "$(cat "$r/table.md")"
elif ! grep -q '^| nvdec-8 | 8 | 960 | 2345.6 |$' "$r/table.md"; then fail report_video "$(cat "$r/table.md")"
elif ! grep -q '^| yolov8n | fp16 | 64 | 16.00 | 4000 | 687 | 5.82 |$' "$r/table.md"; then fail report_async_beside_peer "$(cat "$r/table.md")"
elif ! grep -q '^| yolov8n detect path, host frames to host boxes, async, batch 64 (images/s) | 4000 | >= 4000 | yes |$' "$r/table.md" ||
    ! grep -q '^| yolov8n detect path, batch-1 latency, async, none other in flight (ms) | 0.700 | <= 0.6 | no |$' "$r/table.md" ||
    ! grep -q '^| yolov8n device-1280x720-nv12-async, batch 64: images/s ÷ the device-resident forward rate | 0.93 | >= 0.90 | yes |$' "$r/table.md" ||
    ! grep -q '^| yolov8n device-1280x720-nv12, batch 64: images/s ÷ the device-resident forward rate |  | >= 0.90 | not measured |$' "$r/table.md" ||
    ! grep -q '^| video job, annotated MP4 ÷ plain ffmpeg transcode, annotated | 0.953 | >= 0.90 | yes |$' "$r/table.md" ||
    ! grep -q '^| device memory, 8 inputs at batch 64 (MB) | 1100 | <= 1024 | no |$' "$r/table.md" ||
    ! grep -q '^| yolov8n | fp16 | device-1280x720-nv12-async | 64 | 18.000 | 19.000 | 4200 |$' "$r/table.md" ||
    ! grep -q '^| mem-8-b64 | 8 | 64 | 700 | 702 | 0 | 1100 |$' "$r/table.md"; then fail report_goals "$(cat "$r/table.md")"
elif [ "$(grep -c '"tool"' "$r/results.json")" -ne 19 ] || ! grep -q '"FAIL initcheck (exit 99, 3s): initcheck.log"' "$r/results.json"; then
    fail report_json "$(cat "$r/results.json")"
elif ! grep -q '^## Detect path from pinned frames 1280x720: uint8 RGB frames in page-locked host (strix_model_alloc_pinned' "$r/table.md" ||
    ! grep -q '^| yolov8n | fp16 | pinned-1280x720-async | 64 | 19.000 | 20.000 | 4100 |$' "$r/table.md"; then
    fail report_pinned "$(cat "$r/table.md")"
elif [ "$(grep -c '<polyline' "$r/plot.svg")" -ne 6 ]; then fail report_plot "want 6 lines (2 tools x 2 paths, strix k2 and k3 forward): $(grep -c '<polyline' "$r/plot.svg")"
else pass report; fi
mkdir -p "$T/empty"
sh "$ROOT/perf/gpu_report.sh" "$T/empty" >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 3 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -e "$T/empty/table.md" ] && pass report_no_rows ||
    fail report_no_rows "exit $rc, want 3 and one line: $(cat "$T/err")"

# --- gpu_bench: usage and no-device exits
if [ ! -x "$B/perf/gpu_bench" ]; then
    skip gpu_bench_exits "$B/perf/gpu_bench not built"
else
    "$B/perf/gpu_bench" --mode fly --model "$ROOT/weights/yolov8.yaml" --scale n --weights x >/dev/null 2>"$T/err"
    rc=$?
    [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && pass gpu_bench_usage || fail gpu_bench_usage "exit $rc: $(cat "$T/err")"
    for bad in "--mode forward --async" "--mode layers --pixels nv12" "--mode detect --pixels yuv"; do
        # shellcheck disable=SC2086 # $bad: options
        "$B/perf/gpu_bench" $bad --model "$ROOT/weights/yolov8.yaml" --scale n --weights x >/dev/null 2>"$T/err"
        rc=$?
        t=gpu_bench_usage_$(echo "$bad" | tr -c 'a-z0-9\n' _)
        if [ $rc -eq 2 ] && [ "$(wc -l <"$T/err")" -eq 1 ]; then pass "$t"; else fail "$t" "exit $rc: $(cat "$T/err")"; fi
    done
    if command -v nvidia-smi >/dev/null 2>&1; then
        skip gpu_bench_no_device "this machine has nvidia-smi"
    else
        "$B/mkweights" --model "$ROOT/weights/yolov8.yaml" --scale n --out "$T/w.safetensors" >/dev/null 2>&1
        "$B/perf/gpu_bench" --mode forward --model "$ROOT/weights/yolov8.yaml" --scale n --weights "$T/w.safetensors" \
            --json "$T/rows.jsonl" >/dev/null 2>"$T/err"
        rc=$?
        [ $rc -eq 9 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "device 'cuda'" "$T/err" && [ ! -s "$T/rows.jsonl" ] &&
            pass gpu_bench_no_device || fail gpu_bench_no_device "exit $rc, want 9 and one line: $(cat "$T/err")"
        # the device-resident and async paths: the same exit before any frame is made
        for how in "device --async --pixels nv12" "detect --async" "pinned --async"; do
            # shellcheck disable=SC2086 # $how: options
            "$B/perf/gpu_bench" --mode $how --model "$ROOT/weights/yolov8.yaml" --scale n --weights "$T/w.safetensors" \
                --json "$T/rows.jsonl" >/dev/null 2>"$T/err"
            rc=$?
            t=gpu_bench_no_device_$(echo "$how" | tr -c 'a-z0-9\n' _)
            if [ $rc -eq 9 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && [ ! -s "$T/rows.jsonl" ]; then pass "$t"
            else fail "$t" "exit $rc, want 9 and one line: $(cat "$T/err")"; fi
        done
    fi
fi
