#!/bin/sh
# gpu-check.sh — all GPU evidence in one command, on a machine with an NVIDIA
# GPU, its driver and the CUDA toolkit (nvcc to build here, compute-sanitizer),
# from the repository or from the bundle `make gpu-bundle` packs (then nothing
# is built and no -dev package or network is needed):
#
#   1. build      make CUDA=1 CUDA_ARCHS=<this GPU's> the programs below
#                 (skipped in a bundle: the file BUNDLE is at its root);
#   2. ops        build/tests/test_cuda_ops --seeds N op_: every CUDA op
#                 against the CPU on N seeds (default 20), and the async
#                 path's per-batch letterbox against per-frame launches
#                 (op_letterbox_batch; not yet run on a GPU);
#   3. network    the same program's net_ tests: yolov8n / yolo11n end to end,
#                 fp32 and fp16, CUDA-graph replay; the async path
#                 (net_detect_async*, and net_graph_cache: its graphs per
#                 batch shape; the last two not yet run on a GPU); frames in
#                 page-locked memory DMA'd straight from it (net_detect_pinned:
#                 STRIX_PINNED == STRIX_HOST bit for bit, sync and async
#                 lanes; not yet run on a GPU);
#   4. memcheck, racecheck, initcheck, synccheck: compute-sanitizer over
#                 test_cuda_ops --quick (op_ tests; memcheck the net_ tests
#                 too); 0 errors required;
#   5. weights    build/mkweights, seed 1, for yolov8n, yolov8s, yolo11n;
#   6. lab        build/perf/cuda/conv_lab: every convolution version (v1
#                 WMMA, v1 + cuBLAS, v2 mma.sync, v3 split-K) on every conv
#                 shape of the first model and 100 random shapes, checked
#                 against the CPU, timed at batch 64; then at batch 1, where
#                 v3 splits K, v2 against v3 aiming at 1, 2 and 4 blocks per
#                 SM (--split-sweep); then the other labs, each checked
#                 exactly against the CPU on the model's ops and 200 random
#                 shapes, fp16 and fp32, and timed: pool_lab (max-pool: plain,
#                 cascade, set 3's one-pass SPPF) and resize_lab (upsample,
#                 vectorised upsample, copy) at batch 64, letterbox_lab
#                 (RGB and NV12 frames, 8 a run); all with the run's seed;
#   7. bench      build/perf/gpu_bench, fp16 and fp32, batch 1 8 64 256 (or
#                 --batch), with each kernel set of --kernels (default 1,2,3;
#                 3 is not yet verified on a GPU):
#                 forward with the input on the device; the public
#                 detect path from uint8 frames (1280x720 and 640x640) to host
#                 boxes; per-layer GPU time at batch 64 (fp16); cold start of
#                 yolov8n (5 fresh processes each dtype, default kernel set);
#   8. async      build/perf/gpu_bench on the first model, fp16, the default
#                 kernel set, 1280x720 frames, the same batches: the
#                 asynchronous API (--async: two batches in flight, cuda_async)
#                 from host RGB and host NV12 frames, and frames already in
#                 device memory (--mode device: NV12 as NVDEC hands them out,
#                 synchronous and async; RGB async): images/s, batch-1
#                 latency; its own log, async.log;
#   9. video      perf/gpu_video.sh: the bundle's infer on its 720p H.264
#                 clip, 1 and 8 inputs, decoded on the CPU (RGB, NV12) and
#                 with NVDEC, each synchronous and with STRIX_CUDA_ASYNC=1:
#                 frames/s, NVDEC utilisation, and the NVDEC runs'
#                 detections equal to the CPU-decoded NV12 run's; 8 inputs
#                 at batch 64 with host RSS and device memory sampled; with
#                 the ffmpeg program here, the annotated MP4 against a plain
#                 ffmpeg transcode (perf/bench_video.sh, same encoder);
#  10. peers      only with --python PATH (a Python with torch on CUDA and
#                 ultralytics): tools/reference/gpu_peers.py on the same
#                 weights and frames; else one SKIP line saying why;
#  11. report     perf/gpu_report.sh: results.json, table.md, plot.svg.
#
# Every step writes its log to the output directory (default
# perf/results/<YYYY-MM-DD>-<gpu>/), opening with a header (date, GPU, driver,
# CUDA, commit, seed, command), and a line PASS/FAIL/SKIP <step> to
# summary.txt and the terminal.  A failed step does not stop the later ones
# (a failed build does); the last line names every failed step.
#
# Usage: tools/gpu-check.sh [--out DIR] [--python PATH] [--seeds N]
#                           [--batch LIST] [--models LIST] [--kernels LIST]
#                           [--sanitizer-timeout S] [--no-sanitizers]
# Environment: STRIX_TEST_SEED (default: from the date and time).
# Exit codes: 0 every step passed; 1 a step failed (named on the last line);
#   2 usage; 9 no usable GPU here (no nvidia-smi, no GPU listed, or no
#   compute-sanitizer): one line on stderr, nothing written.
set -u

usage() { echo "gpu-check: $* (see tools/gpu-check.sh --help)" >&2; exit 2; }
nogpu() { echo "gpu-check: $* — run this on a machine with an NVIDIA GPU, its driver and the CUDA toolkit" >&2; exit 9; }

cd "$(dirname "$0")/.." || usage "cannot enter the repository root"
root=$(pwd)
out="" py="" seeds=20 batches="1,8,64,256" models="yolov8n,yolov8s,yolo11n" stimeout=600 kernel_sets="1,2,3" sanitize=1
# shellcheck disable=SC2015 # "test && test || usage": usage exits
while [ $# -gt 0 ]; do
    case "$1" in
    --out) [ $# -ge 2 ] || usage "--out needs a directory"; out=$2; shift 2 ;;
    --python) [ $# -ge 2 ] || usage "--python needs a path"; py=$2; shift 2 ;;
    --seeds) [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || usage "--seeds needs a count >= 1"; seeds=$2; shift 2 ;;
    --batch) [ $# -ge 2 ] && printf '%s' "$2" | grep -Eq '^[0-9]+(,[0-9]+)*$' || usage "--batch needs a list like 1,8,64"; batches=$2; shift 2 ;;
    --models) [ $# -ge 2 ] && printf '%s' "$2" | grep -Eq '^(yolov8[nslmx]|yolo11[nslmx])(,(yolov8[nslmx]|yolo11[nslmx]))*$' ||
        usage "--models needs a list of yolov8n..x / yolo11n..x"; models=$2; shift 2 ;;
    --kernels) [ $# -ge 2 ] && printf '%s' "$2" | grep -Eq '^[123](,[123])*$' || usage "--kernels needs a list of kernel sets (1, 2, 3)"; kernel_sets=$2; shift 2 ;;
    --no-sanitizers) sanitize=0; shift ;;
    --sanitizer-timeout) [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || usage "--sanitizer-timeout needs seconds"; stimeout=$2; shift 2 ;;
    -h | --help) sed -n '2,67p' "$0"; exit 0 ;;
    *) usage "unknown argument '$1'" ;;
    esac
done
[ -z "$py" ] || [ -x "$py" ] || usage "--python $py is not an executable"

# the toolkit's usual place, when it is not on PATH (compute-sanitizer, nvcc)
[ -d /usr/local/cuda/bin ] && PATH="$PATH:/usr/local/cuda/bin"
command -v nvidia-smi >/dev/null 2>&1 || nogpu "no GPU: nvidia-smi not found"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
[ -n "$gpu" ] || nogpu "no GPU: nvidia-smi lists none"
command -v compute-sanitizer >/dev/null 2>&1 || nogpu "compute-sanitizer not found (it ships with the CUDA toolkit: add its bin/ to PATH)"
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
cc=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader 2>/dev/null | head -n 1 | tr -d '.')
slug=$(printf '%s' "$gpu" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/^-*//; s/-*$//')
[ -n "$out" ] || out="perf/results/$(date -u +%Y-%m-%d)-$slug"
mkdir -p "$out" || usage "cannot create $out"
out=$(cd "$out" && pwd)
if [ -f BUNDLE ]; then
    commit=$(sed -n 's/^commit: //p' BUNDLE)
    # the bundle's libraries first, the toolkit's (libcudart, libcublas) after whatever is set
    cudaroot=$(dirname "$(dirname "$(command -v nvcc 2>/dev/null || command -v compute-sanitizer)")")
    export LD_LIBRARY_PATH="$root/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}:$cudaroot/lib64:$cudaroot/lib"
else
    commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
    [ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit (with uncommitted changes)"
fi
cuda=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
[ -n "$cuda" ] || cuda=$(nvidia-smi 2>/dev/null | sed -n 's/.*CUDA Version: *\([0-9.]*\).*/\1 (driver)/p' | head -n 1)
seed=${STRIX_TEST_SEED:-$(date -u +%Y%m%d%H%M%S)}
export STRIX_TEST_SEED="$seed"
work=${TMPDIR:-/tmp}/strix-gpu-check.$$
mkdir -p "$work" || usage "cannot create $work"
trap 'rm -rf "$work"' EXIT
t_start=$(date +%s)

header() { # LOG WHAT...: a log's first lines
    log=$1
    shift
    {
        echo "# strix gpu-check: $*"
        echo "# date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        echo "# gpu:     $gpu (driver $driver, compute capability $cc)"
        echo "# cuda:    ${cuda:-unknown}"
        echo "# commit:  $commit"
        echo "# seed:    STRIX_TEST_SEED=$seed"
        echo "# host:    $(uname -srm)"
        echo
    } >"$log"
}

summary=$out/summary.txt
header "$summary" summary
printf '{"gpu": "%s", "driver": "%s", "cuda": "%s", "compute_capability": "%s", "commit": "%s", "date": "%s", "seed": "%s", "host": "%s"}\n' \
    "$gpu" "$driver" "$cuda" "$cc" "$commit" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$seed" "$(uname -srm)" >"$out/machine.json"
rows=$out/rows.jsonl
: >"$rows"
failed=""
note() { echo "$*" | tee -a "$summary"; }
# step NAME LOG COMMAND...: run, log, PASS/FAIL line (a FAIL or SKIP line in
# the log fails a test step; a sanitizer needs its "0 errors" summary)
step() {
    name=$1 log=$2
    shift 2
    header "$log" "$*"
    t0=$(date +%s)
    "$@" >>"$log" 2>&1
    rc=$?
    verdict=PASS
    [ $rc -eq 0 ] || verdict=FAIL
    case $name in
    ops | network | memcheck* | racecheck | initcheck | synccheck) grep -Eq '^(FAIL|SKIP)' "$log" && verdict=FAIL ;;
    esac
    case $name in
    memcheck* | racecheck | initcheck | synccheck) grep -q 'ERROR SUMMARY: 0 errors' "$log" || verdict=FAIL ;;
    esac
    [ $verdict = PASS ] || failed="$failed $name"
    note "$verdict $name (exit $rc, $(($(date +%s) - t0))s): $log"
    grep -E '^(PASS|FAIL|SKIP)' "$log" | sed 's/^/    /' >>"$summary"
}

tests=build/tests/test_cuda_ops bench=build/perf/gpu_bench mkw=build/mkweights lab=build/perf/cuda/conv_lab
pool_lab=build/perf/cuda/pool_lab resize_lab=build/perf/cuda/resize_lab letterbox_lab=build/perf/cuda/letterbox_lab
if [ -f BUNDLE ]; then
    note "SKIP build: a bundle ($(sed -n 's/^built: //p' BUNDLE))"
else
    step build "$out/build.log" make -j"$(nproc 2>/dev/null || echo 4)" CUDA=1 ${cc:+CUDA_ARCHS=$cc} "$tests" "$bench" "$mkw" \
        "$lab" "$pool_lab" "$resize_lab" "$letterbox_lab"
    case $failed in *build*) echo "gpu-check: FAIL build: see $out/build.log" >&2; exit 1 ;; esac
fi

step ops "$out/ops.log" "$tests" --seeds "$seeds" op_
step network "$out/network.log" "$tests" net_,device_selection
[ $sanitize = 1 ] || note "SKIP sanitizers: --no-sanitizers given"
[ $sanitize = 1 ] && for tool in memcheck racecheck initcheck synccheck; do
    extra=""
    [ $tool = memcheck ] && extra="--leak-check full"
    # shellcheck disable=SC2086 # $extra: zero or two words
    step $tool "$out/$tool.log" timeout "$stimeout" compute-sanitizer --tool $tool $extra --error-exitcode 99 \
        "$tests" --quick op_
done
[ $sanitize = 1 ] && step memcheck-network "$out/memcheck-network.log" timeout "$stimeout" compute-sanitizer --tool memcheck \
    --leak-check full --error-exitcode 99 "$tests" net_detect
first=$(echo "$models" | cut -d, -f1)

# weights: the same synthetic file for strix and the peers
yaml_of() { case $1 in yolov8*) echo weights/yolov8.yaml ;; *) echo weights/yolo11.yaml ;; esac; }
scale_of() { printf '%s' "$1" | tail -c 1; }
wlog=$out/weights.log
header "$wlog" "$mkw (seed 1)"
ok=1
for m in $(echo "$models" | tr ',' ' '); do
    "$mkw" --model "$(yaml_of "$m")" --scale "$(scale_of "$m")" --seed 1 --out "$work/$m.safetensors" >>"$wlog" 2>&1 || ok=0
done
if [ $ok = 1 ]; then note "PASS weights: $wlog"; else failed="$failed weights"; note "FAIL weights: $wlog"; fi

step lab "$out/lab.log" "$lab" --model "$(yaml_of "$first")" --scale "$(scale_of "$first")" --batch 64 --runs 20 \
    --random 100 --seed "$seed"
step lab-batch1 "$out/lab-batch1.log" "$lab" --model "$(yaml_of "$first")" --scale "$(scale_of "$first")" --batch 1 \
    --runs 50 --split-sweep
step lab-pool "$out/lab-pool.log" "$pool_lab" --model "$(yaml_of "$first")" --scale "$(scale_of "$first")" --batch 64 \
    --runs 20 --seed "$seed"
step lab-resize "$out/lab-resize.log" "$resize_lab" --model "$(yaml_of "$first")" --scale "$(scale_of "$first")" \
    --batch 64 --runs 20 --seed "$seed"
step lab-letterbox "$out/lab-letterbox.log" "$letterbox_lab" --batch 8 --runs 20 --seed "$seed"

if [ $ok = 1 ]; then
    blog=$out/bench.log
    header "$blog" "$bench (forward, detect, layers, cold)"
    t0=$(date +%s) bad=""
    run_bench() { # WHAT ARGS...: one gpu_bench call, rows appended
        what=$1
        shift
        echo "## $what: $bench $*" >>"$blog"
        "$bench" --json "$rows" "$@" >>"$blog" 2>&1 || bad="$bad $what"
    }
    for m in $(echo "$models" | tr ',' ' '); do
        common="--model $(yaml_of "$m") --scale $(scale_of "$m") --weights $work/$m.safetensors --name $m"
        for ks in $(echo "$kernel_sets" | tr ',' ' '); do
            for half in "" --half; do
                d=${half:+fp16}
                d=${d:-fp32}
                # shellcheck disable=SC2086 # $common, $half: words
                run_bench "forward $m $d k$ks" --mode forward $common $half --kernels "$ks" --batch "$batches"
                for frame in 1280x720 640x640; do
                    # shellcheck disable=SC2086
                    run_bench "detect $m $d $frame k$ks" --mode detect $common $half --kernels "$ks" --batch "$batches" --frame "$frame"
                done
            done
            # shellcheck disable=SC2086
            run_bench "layers $m fp16 k$ks" --mode layers $common --half --kernels "$ks" --batch 64 --runs 5 --warmup 1
        done
    done
    for half in "" --half; do
        for k in 1 2 3 4 5; do
            # shellcheck disable=SC2086
            run_bench "cold $first ${half:-fp32} $k" --mode cold --model "$(yaml_of "$first")" --scale "$(scale_of "$first")" \
                --weights "$work/$first.safetensors" --name "$first" $half --out "$work/cold.jsonl"
        done
    done
    if [ -z "$bad" ]; then
        note "PASS bench (exit 0, $(($(date +%s) - t0))s): $blog"
    else
        failed="$failed bench"
        note "FAIL bench ($(($(date +%s) - t0))s, failed:$bad): $blog"
    fi

    # the asynchronous and device-resident paths (issue 15's goals): one model, fp16
    blog=$out/async.log
    header "$blog" "$bench (async and device-resident detect paths, $first fp16)"
    t0=$(date +%s) bad=""
    common="--model $(yaml_of "$first") --scale $(scale_of "$first") --weights $work/$first.safetensors --name $first"
    for how in "detect --async" "detect --async --pixels nv12" "device --pixels nv12" "device --async --pixels nv12" \
        "device --async"; do
        # shellcheck disable=SC2086 # $how, $common: words
        run_bench "$how" --mode $how $common --half --batch "$batches" --frame 1280x720 --runs 50
    done
    if [ -z "$bad" ]; then
        note "PASS async (exit 0, $(($(date +%s) - t0))s): $blog"
    else
        failed="$failed async"
        note "FAIL async ($(($(date +%s) - t0))s, failed:$bad): $blog"
    fi

    if [ -x build/infer ] && [ -f clips/720p.mp4 ]; then
        step video "$out/video.log" sh perf/gpu_video.sh build/infer clips/720p.mp4 "$(yaml_of "$first")" \
            "$(scale_of "$first")" "$work/$first.safetensors" "$work/video" "$rows"
    else
        note "SKIP video: no build/infer and clips/720p.mp4 (a bundle made without the static FFmpeg or the ffmpeg program)"
    fi

    if [ -z "$py" ]; then
        note "SKIP peers: no --python PATH given (a Python with torch on CUDA and ultralytics; the GPU machine may have no network, so it is never installed here)"
    else
        step peers "$out/peers.log" "$py" tools/reference/gpu_peers.py --weights-dir "$work" --models "$models" \
            --batch "$batches" --rows "$rows" --cold-out "$work/cold_peer.txt"
    fi
fi

step report "$out/report.log" sh perf/gpu_report.sh "$out"
note "total $(($(date +%s) - t_start))s; results in $out"
if [ -n "$failed" ]; then
    note "gpu-check: FAILED steps:$failed"
    exit 1
fi
note "gpu-check: every step passed"
exit 0
