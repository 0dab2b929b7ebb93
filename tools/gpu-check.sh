#!/bin/sh
# gpu-check.sh — all GPU evidence in one command, on a machine with an NVIDIA
# GPU, its driver and the CUDA toolkit (nvcc to build here, compute-sanitizer),
# from the repository or from the bundle `make gpu-bundle` packs (then nothing
# is built and no -dev package or network is needed):
#
# The steps, in the order they run (what the issues' goals need first: a
# lent GPU comes with minutes, not hours):
#
#   build         make CUDA=1 CUDA_ARCHS=<this GPU's> the programs below
#                 (skipped in a bundle: the file BUNDLE is at its root);
#   ops           build/tests/test_cuda_ops --seeds N op_: every CUDA op
#                 against the CPU on N seeds (default 5), and the async
#                 path's per-batch letterbox against per-frame launches
#                 (op_letterbox_batch; not yet run on a GPU);
#   network       the same program's net_ tests: yolov8n / yolo11n end to end,
#                 fp32 and fp16, CUDA-graph replay; the async path
#                 (net_detect_async*, and net_graph_cache: its graphs per
#                 batch shape; the last two not yet run on a GPU); frames in
#                 page-locked memory DMA'd straight from it (net_detect_pinned:
#                 STRIX_PINNED == STRIX_HOST bit for bit, sync and async
#                 lanes; not yet run on a GPU);
#   memcheck      compute-sanitizer memcheck over test_cuda_ops --quick op_,
#                 then (memcheck-network) over the net_detect tests; 0 errors;
#   weights       build/mkweights, seed 1, for every model of --models;
#   bench         build/perf/gpu_bench on the first model (yolov8n), fp16,
#                 with each kernel set of --kernels from 2 up (default 1,2,3;
#                 3 is not yet verified on a GPU): forward with the input on
#                 the device and the public detect path from uint8 1280x720
#                 frames to host boxes, batches --batch (default 1 8 64 256);
#                 per-layer GPU time at batch 64;
#   async         gpu_bench on the first model, fp16, the default kernel set,
#                 1280x720 frames, the same batches: the asynchronous API
#                 (--async: two batches in flight, cuda_async) from host RGB
#                 and host NV12 frames, from RGB frames in page-locked memory
#                 (--mode pinned: STRIX_PINNED, no staging copy; what infer's
#                 video frames are with STRIX_CUDA_ASYNC=1), and frames already in device memory
#                 (--mode device: NV12 as NVDEC hands them out, synchronous and
#                 async; RGB async): images/s, batch-1 latency; async.log;
#   bench-models  the other models (yolov8s, yolo11n), fp16 forward, and the
#                 first model's fp32 forward, kernel sets from 2 up;
#   video         perf/gpu_video.sh: the bundle's infer on its 720p H.264
#                 clip, 1 and 8 inputs, decoded on the CPU (RGB, NV12) and
#                 with NVDEC, each synchronous and with STRIX_CUDA_ASYNC=1:
#                 frames/s, NVDEC utilisation, and the NVDEC runs'
#                 detections equal to the CPU-decoded NV12 run's; 8 inputs
#                 at batch 64 with host RSS and device memory sampled; with
#                 the ffmpeg program here, the annotated MP4 against a plain
#                 ffmpeg transcode (perf/bench_video.sh, same encoder);
#   lab*          build/perf/cuda/conv_lab: every convolution version (v1
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
#   bench-more    the rest of the table: kernel set 1, the detect path from
#                 640x640 frames, fp32 detect, the other models' detect
#                 paths and fp32, layers of the other models, and the cold
#                 start of the first model (5 fresh processes each dtype);
#   racecheck, initcheck, synccheck: compute-sanitizer over test_cuda_ops
#                 --quick op_; 0 errors required;
#   peers         only with --python PATH (a Python with torch on CUDA and
#                 ultralytics): tools/reference/gpu_peers.py on the same
#                 weights and frames; else one SKIP line saying why;
#   report        perf/gpu_report.sh: results.json, table.md, plot.svg
#                 (always, whatever ran).
#
# --time-limit S (default 480): no step or benchmark call starts after S
# seconds, and each runs under `timeout` with the time left (a sanitizer
# with the smaller of that and --sanitizer-timeout), so that the whole check
# fits a lent GPU's minutes with its report; what the limit cut is a SKIP
# line naming it, and the last line says so.  0 lifts the limit.
#
# Every step writes its log to the output directory (default
# perf/results/<YYYY-MM-DD>-<gpu>/), opening with a header (date, GPU, driver,
# CUDA, commit, seed, command), and a line PASS/FAIL/SKIP <step> to
# summary.txt and the terminal.  A failed step does not stop the later ones
# (a failed build does); the last line names every failed step.
#
# Usage: tools/gpu-check.sh [--out DIR] [--python PATH] [--seeds N]
#                           [--batch LIST] [--models LIST] [--kernels LIST]
#                           [--time-limit S] [--sanitizer-timeout S]
#                           [--no-sanitizers]
# Environment: STRIX_TEST_SEED (default: from the date and time).
# Exit codes: 0 every step that ran passed; 1 a step failed (named on the
#   last line; a call the time limit killed is a failure);
#   2 usage; 9 no usable GPU here (no nvidia-smi, no GPU listed, or no
#   compute-sanitizer): one line on stderr, nothing written.
set -u

usage() { echo "gpu-check: $* (see tools/gpu-check.sh --help)" >&2; exit 2; }
nogpu() { echo "gpu-check: $* — run this on a machine with an NVIDIA GPU, its driver and the CUDA toolkit" >&2; exit 9; }

cd "$(dirname "$0")/.." || usage "cannot enter the repository root"
root=$(pwd)
out="" py="" seeds=5 batches="1,8,64,256" models="yolov8n,yolov8s,yolo11n" stimeout=600 kernel_sets="1,2,3" sanitize=1
limit=480
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
    --time-limit) [ $# -ge 2 ] && [ "$2" -ge 0 ] 2>/dev/null || usage "--time-limit needs seconds (0: none)"; limit=$2; shift 2 ;;
    --sanitizer-timeout) [ $# -ge 2 ] && [ "$2" -ge 1 ] 2>/dev/null || usage "--sanitizer-timeout needs seconds"; stimeout=$2; shift 2 ;;
    -h | --help) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 0 ;;
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
# left: the seconds before the time limit (a large number without one)
left() { if [ "$limit" -eq 0 ]; then echo 1000000; else echo $((limit - ($(date +%s) - t_start))); fi; }
cut=""
# over NAME: true, with a SKIP line, when the time limit leaves no time to start NAME
over() {
    [ "$(left)" -gt 0 ] && return 1
    cut="$cut $1"
    note "SKIP $1: the time limit (${limit}s, --time-limit) was reached before it started"
}
# step NAME LOG COMMAND...: run under the time left, log, PASS/FAIL line (a
# FAIL or SKIP line in the log fails a test step; a sanitizer needs its
# "0 errors" summary); a step the time limit stopped is CUT (in the summary's
# last line, not a failure)
step() {
    name=$1 log=$2
    shift 2
    over "$name" && return
    header "$log" "$*"
    t0=$(date +%s)
    timeout "$(left)" "$@" >>"$log" 2>&1
    rc=$?
    verdict=PASS
    [ $rc -eq 0 ] || verdict=FAIL
    case $name in
    ops | network | memcheck* | racecheck | initcheck | synccheck) grep -Eq '^(FAIL|SKIP)' "$log" && verdict=FAIL ;;
    esac
    case $name in
    memcheck* | racecheck | initcheck | synccheck) grep -q 'ERROR SUMMARY: 0 errors' "$log" || verdict=FAIL ;;
    esac
    if [ $rc -eq 124 ] && [ "$(left)" -le 0 ]; then
        verdict=CUT
        cut="$cut $name"
    fi
    [ $verdict != FAIL ] || failed="$failed $name"
    note "$verdict $name (exit $rc, $(($(date +%s) - t0))s): $log"
    grep -E '^(PASS|FAIL|SKIP)' "$log" | sed 's/^/    /' >>"$summary"
}
# sanitize TOOL [NAME [TESTS]]: compute-sanitizer TOOL over test_cuda_ops --quick TESTS (default op_)
sanitize() {
    extra=""
    [ "$1" = memcheck ] && extra="--leak-check full"
    st=$stimeout
    [ "$(left)" -lt "$st" ] && st=$(left)
    # shellcheck disable=SC2086 # $extra: zero or two words
    step "${2:-$1}" "$out/${2:-$1}.log" timeout "$st" compute-sanitizer --tool "$1" $extra --error-exitcode 99 \
        "$tests" --quick "${3:-op_}"
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
if [ $sanitize = 1 ]; then
    sanitize memcheck
    sanitize memcheck memcheck-network net_detect
else
    note "SKIP sanitizers: --no-sanitizers given"
fi
first=$(echo "$models" | cut -d, -f1)
others=$(echo "$models" | tr ',' '\n' | sed 1d | tr '\n' ' ')
# the kernel sets from 2 up first (the goals are theirs), set 1 with the rest
new_sets=$(echo "$kernel_sets" | tr ',' '\n' | grep -v '^1$' | tr '\n' ' ')
old_sets=$(echo "$kernel_sets" | tr ',' '\n' | grep '^1$' | tr '\n' ' ')

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

blog=$out/bench.log
header "$blog" "$bench (forward, detect, layers, cold)"
# run_bench WHAT ARGS...: one gpu_bench call under the time left, rows appended; bad and skipped collect
run_bench() {
    what=$1
    shift
    if [ "$(left)" -le 0 ]; then
        skipped="$skipped|$what"
        return
    fi
    echo "## $what: $bench $*" >>"$blog"
    timeout "$(left)" "$bench" --json "$rows" "$@" >>"$blog" 2>&1
    rc=$?
    if [ $rc -eq 124 ] && [ "$(left)" -le 0 ]; then skipped="$skipped|$what (stopped)"
    elif [ $rc -ne 0 ]; then bad="$bad|$what"; fi
}
# group_begin NAME LOG ... group_end: gpu_bench calls in between as step NAME, one PASS/FAIL line;
# group_begin is false (a SKIP line) when the time limit leaves none to start them
group_begin() {
    over "$1" && return 1
    gname=$1 blog=$2 t0=$(date +%s) bad="" skipped=""
}
group_end() {
    if [ -n "$bad" ]; then
        failed="$failed $gname"
        note "FAIL $gname ($(($(date +%s) - t0))s, failed: ${bad#|}): $blog"
    else
        note "PASS $gname ($(($(date +%s) - t0))s): $blog"
    fi
    if [ -n "$skipped" ]; then
        cut="$cut $gname"
        note "    SKIP the time limit (${limit}s) left out: ${skipped#|}"
    fi
}
common_of() { echo "--model $(yaml_of "$1") --scale $(scale_of "$1") --weights $work/$1.safetensors --name $1"; }
# dtype_of HALF: fp16 for --half, else fp32
dtype_of() { if [ -n "$1" ]; then echo fp16; else echo fp32; fi; }
# fwd M HALF KS, det M HALF KS FRAME, layers M KS: one gpu_bench call for
# model M, dtype HALF ("" or --half), kernel set KS ($2 and common_of: words)
# shellcheck disable=SC2046,SC2086
fwd() {
    run_bench "forward $1 $(dtype_of "$2") k$3" --mode forward $(common_of "$1") $2 --kernels "$3" --batch "$batches"
}
# shellcheck disable=SC2046,SC2086
det() {
    run_bench "detect $1 $(dtype_of "$2") $4 k$3" --mode detect $(common_of "$1") $2 --kernels "$3" --batch "$batches" --frame "$4"
}
# shellcheck disable=SC2046
layers() {
    run_bench "layers $1 fp16 k$2" --mode layers $(common_of "$1") --half --kernels "$2" --batch 64 --runs 5 --warmup 1
}
bench_goals() {
    for ks in $new_sets; do
        fwd "$first" --half "$ks"
        det "$first" --half "$ks" 1280x720
    done
    for ks in $new_sets; do layers "$first" "$ks"; done
}
bench_async() {
    for how in "detect --async" "pinned --async" "detect --async --pixels nv12" "device --pixels nv12" \
        "device --async --pixels nv12" "device --async"; do
        # shellcheck disable=SC2046,SC2086 # $how, common_of: words
        run_bench "$how" --mode $how $(common_of "$first") --half --batch "$batches" --frame 1280x720 --runs 50
    done
}
bench_models() {
    for ks in $new_sets; do
        for m in $others; do fwd "$m" --half "$ks"; done
        fwd "$first" "" "$ks"
    done
}
bench_more() {
    for ks in $new_sets; do
        det "$first" --half "$ks" 640x640
        for frame in 1280x720 640x640; do det "$first" "" "$ks" "$frame"; done
        for m in $others; do
            fwd "$m" "" "$ks"
            for half in --half ""; do for frame in 1280x720 640x640; do det "$m" "$half" "$ks" "$frame"; done; done
            layers "$m" "$ks"
        done
    done
    for ks in $old_sets; do
        for m in $first $others; do
            for half in --half ""; do
                fwd "$m" "$half" "$ks"
                for frame in 1280x720 640x640; do det "$m" "$half" "$ks" "$frame"; done
            done
            layers "$m" "$ks"
        done
    done
    for half in "" --half; do
        for k in 1 2 3 4 5; do
            # shellcheck disable=SC2046,SC2086 # common_of, $half: words
            run_bench "cold $first $(dtype_of "$half") $k" --mode cold $(common_of "$first") $half --out "$work/cold.jsonl"
        done
    done
}
labs() {
    step lab "$out/lab.log" "$lab" --model "$(yaml_of "$first")" --scale "$(scale_of "$first")" --batch 64 --runs 20 \
        --random 100 --seed "$seed"
    step lab-batch1 "$out/lab-batch1.log" "$lab" --model "$(yaml_of "$first")" --scale "$(scale_of "$first")" --batch 1 \
        --runs 50 --split-sweep
    step lab-pool "$out/lab-pool.log" "$pool_lab" --model "$(yaml_of "$first")" --scale "$(scale_of "$first")" --batch 64 \
        --runs 20 --seed "$seed"
    step lab-resize "$out/lab-resize.log" "$resize_lab" --model "$(yaml_of "$first")" --scale "$(scale_of "$first")" \
        --batch 64 --runs 20 --seed "$seed"
    step lab-letterbox "$out/lab-letterbox.log" "$letterbox_lab" --batch 8 --runs 20 --seed "$seed"
}

if [ $ok = 1 ]; then
    header "$out/async.log" "$bench (async and device-resident detect paths, $first fp16)"
    if group_begin bench "$out/bench.log"; then bench_goals; group_end; fi
    if group_begin async "$out/async.log"; then bench_async; group_end; fi
    if group_begin bench-models "$out/bench.log"; then bench_models; group_end; fi
    if [ -x build/infer ] && [ -f clips/720p.mp4 ]; then
        step video "$out/video.log" sh perf/gpu_video.sh build/infer clips/720p.mp4 "$(yaml_of "$first")" \
            "$(scale_of "$first")" "$work/$first.safetensors" "$work/video" "$rows"
    else
        note "SKIP video: no build/infer and clips/720p.mp4 (a bundle made without the static FFmpeg or the ffmpeg program)"
    fi
    labs
    if group_begin bench-more "$out/bench.log"; then bench_more; group_end; fi
else
    labs
fi
if [ $sanitize = 1 ]; then
    for tool in racecheck initcheck synccheck; do sanitize $tool; done
fi

if [ -z "$py" ]; then
    note "SKIP peers: no --python PATH given (a Python with torch on CUDA and ultralytics; the GPU machine may have no network, so it is never installed here)"
elif [ $ok = 1 ]; then
    step peers "$out/peers.log" "$py" tools/reference/gpu_peers.py --weights-dir "$work" --models "$models" \
        --batch "$batches" --rows "$rows" --cold-out "$work/cold_peer.txt"
fi

limit=0 # the report runs whatever time is left
step report "$out/report.log" sh perf/gpu_report.sh "$out"
note "total $(($(date +%s) - t_start))s; results in $out"
[ -z "$cut" ] || note "gpu-check: the time limit cut:$cut"
if [ -n "$failed" ]; then
    note "gpu-check: FAILED steps:$failed"
    exit 1
fi
if [ -n "$cut" ]; then note "gpu-check: every step that ran passed"; else note "gpu-check: every step passed"; fi
exit 0
