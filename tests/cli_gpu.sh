#!/bin/sh
# cli_gpu.sh — what of the GPU check runs without a GPU: tools/gpu-check.sh's
# "no GPU" exit (status 9, one line, nothing written), its usage errors, its
# step bookkeeping (in a fake bundle whose programs, nvidia-smi and
# compute-sanitizer are stand-in scripts: a failing step is named, the report
# is made), perf/gpu_report.sh on canned result rows, and perf/gpu_bench's
# exit codes.
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
for bad in "--seeds 0" "--batch 1,x" "--models yolov9n" "--python /nonexistent/python" "--frobnicate"; do
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
case $mode in
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
# fakecheck NAME FAKE_FAIL WANT_RC: run the fake bundle's check into $T/NAME
fakecheck() {
    FAKE_FAIL=$2 PATH="$fake/bin:$PATH" sh "$fake/tools/gpu-check.sh" --out "$T/$1" --models yolov8n --batch 8 \
        --sanitizer-timeout 60 >"$T/$1.out" 2>&1
    rc=$?
    [ $rc -eq "$3" ] || { fail "$1" "exit $rc, want $3: $(tail -n 5 "$T/$1.out")"; return 1; }
}
if fakecheck fake_pass none 0; then
    s=$T/fake_pass/summary.txt
    if ! grep -q '^SKIP build: a bundle' "$s" || ! grep -q '^PASS ops' "$s" || ! grep -q '^PASS initcheck' "$s" ||
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
    [ $f = nodevice ] && want="ops network memcheck racecheck initcheck synccheck memcheck-network lab lab-batch1 lab-pool lab-resize lab-letterbox"
    if fakecheck "fake_fail_$f" "$f" 1; then
        last=$(tail -n 1 "$T/fake_fail_$f/summary.txt")
        if [ "$last" != "gpu-check: FAILED steps: $want" ]; then fail "fake_fail_$f" "last line: $last"
        else pass "fake_fail_$f"; fi
    fi
done

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
{"tool": "strix", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 1, "imgsz": 640, "mode": "cold-start", "process_to_detection_s": 0.52, "max_rss_mb": 384.2}
{"tool": "ultralytics", "model": "yolov8n", "device": "cuda", "dtype": "fp16", "batch": 1, "imgsz": 640, "mode": "cold-start", "process_to_detection_s": 7.19, "max_rss_mb": 2100}
{"kind": "video", "name": "nvdec-8", "inputs": 8, "frames": 960, "fps": 2345.6}
EOF
echo '{"gpu": "NVIDIA H100 80GB HBM3", "driver": "580.159.04", "cuda": "13.0", "commit": "abc", "date": "2026-11-25"}' >"$r/machine.json"
printf 'PASS ops (exit 0, 1s): ops.log\nFAIL initcheck (exit 99, 3s): initcheck.log\n' >"$r/summary.txt"
if ! sh "$ROOT/perf/gpu_report.sh" "$r" >"$T/out" 2>&1; then fail report "exit $?: $(cat "$T/out")"
elif ! grep -q '^| yolov8n | fp16 | 1 | 1.50 | 667 | 167 | 4.00 |$' "$r/table.md"; then fail report_forward_ratio "$(cat "$r/table.md")"
elif ! grep -q '^| yolov8n k2 | fp16 | 1 | 1.00 | 1000 | 167 | 6.00 |$' "$r/table.md"; then fail report_kernels2_row "$(cat "$r/table.md")"
elif ! grep -q '^| yolov8n k3 | fp16 | 1 | 0.50 | 2000 | 167 | 12.00 |$' "$r/table.md"; then fail report_kernels3_row "$(cat "$r/table.md")"
elif ! grep -q '^| yolov8n | fp16 | 8 | 8.00 | 1000 | 500 | 2.00 |$' "$r/table.md"; then fail report_detect_ratio "$(cat "$r/table.md")"
elif [ "$(grep -n '| 2 | C2f |' "$r/table.md" | cut -d: -f1)" -ge "$(grep -n '| 0 | Conv |' "$r/table.md" | cut -d: -f1)" ]; then
    fail report_layers_sorted "$(grep '|' "$r/table.md")"
elif ! grep -q '^| ultralytics | yolov8n | fp16 | 7.19 | 2100 |' "$r/table.md"; then fail report_cold "$(cat "$r/table.md")"
elif ! grep -q '^| nvdec-8 | 8 | 960 | 2345.6 |$' "$r/table.md"; then fail report_video "$(cat "$r/table.md")"
elif [ "$(grep -c '"tool"' "$r/results.json")" -ne 11 ] || ! grep -q '"FAIL initcheck (exit 99, 3s): initcheck.log"' "$r/results.json"; then
    fail report_json "$(cat "$r/results.json")"
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
    if command -v nvidia-smi >/dev/null 2>&1; then
        skip gpu_bench_no_device "this machine has nvidia-smi"
    else
        "$B/mkweights" --model "$ROOT/weights/yolov8.yaml" --scale n --out "$T/w.safetensors" >/dev/null 2>&1
        "$B/perf/gpu_bench" --mode forward --model "$ROOT/weights/yolov8.yaml" --scale n --weights "$T/w.safetensors" \
            --json "$T/rows.jsonl" >/dev/null 2>"$T/err"
        rc=$?
        [ $rc -eq 9 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q "device 'cuda'" "$T/err" && [ ! -s "$T/rows.jsonl" ] &&
            pass gpu_bench_no_device || fail gpu_bench_no_device "exit $rc, want 9 and one line: $(cat "$T/err")"
    fi
fi
