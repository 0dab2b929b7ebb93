#!/bin/sh
# gpu-check.sh — the whole GPU check in one command, for a machine with an
# NVIDIA GPU, the CUDA toolkit (nvcc, compute-sanitizer) and nvidia-smi:
#
#   1. builds the CUDA test program (make CUDA=1 build/tests/test_cuda_ops),
#   2. runs it: every CUDA op against the CPU backend, then yolov8n / yolo11n
#      end to end in fp32 and fp16 (tests/test_cuda_ops.c),
#   3. runs it again under compute-sanitizer's memcheck (leak check on),
#      racecheck, initcheck and synccheck,
# and writes one log per step, each opening with a header (date, GPU, driver,
# CUDA, git commit, seed, command), plus summary.txt, to
# perf/results/<YYYY-MM-DD>-<gpu>/.  Exits 0 only when every step passed
# (a SKIP line means the program found no device: that fails the check).
#
# Usage (from anywhere; it works in the repository root):
#   tools/gpu-check.sh [--bin PROGRAM] [--out DIR] [--filter F] [--sanitize-filter F]
#     --bin PROGRAM        run a prebuilt test_cuda_ops instead of building one
#                          (e.g. one packed by ../shared/tools/device-bundle:
#                          the lib/ beside its bin/ joins LD_LIBRARY_PATH)
#     --out DIR            where the logs go (default perf/results/<date>-<gpu>)
#     --filter F           run only tests whose name contains F (all steps)
#     --sanitize-filter F  the same for the four sanitizer runs only, e.g.
#                          "op_" when time is short (racecheck over the whole
#                          network takes much longer than the plain run)
# Environment: STRIX_TEST_SEED (default: derived from the date and time; the
# same seed is used by every step, so all runs see the same shapes),
# SANITIZER_TIMEOUT seconds per sanitizer run (default 1800).
set -u

die() { echo "gpu-check: $*" >&2; exit 2; }

cd "$(dirname "$0")/.." || die "cannot enter the repository root"
bin="" out="" filter="" sfilter=""
while [ $# -gt 0 ]; do
    case "$1" in
    --bin) [ $# -ge 2 ] || die "--bin needs a path"; bin=$2; shift 2 ;;
    --out) [ $# -ge 2 ] || die "--out needs a directory"; out=$2; shift 2 ;;
    --filter) [ $# -ge 2 ] || die "--filter needs a substring"; filter=$2; shift 2 ;;
    --sanitize-filter) [ $# -ge 2 ] || die "--sanitize-filter needs a substring"; sfilter=$2; shift 2 ;;
    -h | --help) sed -n '2,30p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (see --help)" ;;
    esac
done
[ -n "$sfilter" ] || sfilter=$filter

command -v nvidia-smi >/dev/null 2>&1 || die "nvidia-smi not found: this needs a machine with an NVIDIA GPU and driver"
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -n 1)
driver=$(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -n 1)
[ -n "$gpu" ] || die "nvidia-smi lists no GPU"
slug=$(printf '%s' "$gpu" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/^-*//; s/-*$//')
day=$(date -u +%Y-%m-%d)
[ -n "$out" ] || out="perf/results/$day-$slug"
mkdir -p "$out" || die "cannot create $out"
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit (with uncommitted changes)"
cuda=$(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p')
seed=${STRIX_TEST_SEED:-$(date -u +%Y%m%d%H%M%S)}
export STRIX_TEST_SEED="$seed"
timeout_s=${SANITIZER_TIMEOUT:-1800}

# header LOG COMMAND...: the log's first lines
header() {
    log=$1
    shift
    {
        echo "# strix gpu-check: $*"
        echo "# date:    $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
        echo "# gpu:     $gpu (driver $driver)"
        echo "# cuda:    ${cuda:-unknown (nvcc not on PATH)}"
        echo "# commit:  $commit"
        echo "# seed:    STRIX_TEST_SEED=$seed"
        echo "# host:    $(uname -srm)"
        echo
    } >"$log"
}

summary="$out/summary.txt"
header "$summary" "summary"
failed=0
# step NAME LOG COMMAND...: runs a step, appends its status to the summary
step() {
    name=$1 log=$2
    shift 2
    header "$log" "$*"
    start=$(date +%s)
    "$@" >>"$log" 2>&1
    rc=$?
    secs=$(($(date +%s) - start))
    verdict=PASS
    if [ $rc -ne 0 ] || grep -q '^FAIL' "$log" || grep -q '^SKIP' "$log"; then verdict=FAIL; failed=1; fi
    line="$verdict $name (exit $rc, ${secs}s): $log"
    echo "$line" | tee -a "$summary"
    grep -E '^(PASS|FAIL|SKIP)' "$log" | sed 's/^/    /' >>"$summary"
}

if [ -z "$bin" ]; then
    bin=build/tests/test_cuda_ops
    header "$out/build.log" "make CUDA=1 $bin"
    if ! make CUDA=1 "$bin" >>"$out/build.log" 2>&1; then
        echo "FAIL build: $out/build.log" | tee -a "$summary"
        tail -n 20 "$out/build.log" >&2
        exit 1
    fi
    echo "PASS build: $out/build.log" | tee -a "$summary"
else
    [ -x "$bin" ] || die "$bin is not an executable"
    lib="$(dirname "$bin")/../lib" # device-bundle's layout: bin/ and lib/ side by side
    if [ -d "$lib" ]; then
        lib=$(cd "$lib" && pwd)
        export LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
fi

step test "$out/test.log" "$bin" ${filter:+"$filter"}
command -v compute-sanitizer >/dev/null 2>&1 || die "compute-sanitizer not found (it ships with the CUDA toolkit)"
for tool in memcheck racecheck initcheck synccheck; do
    extra=""
    [ "$tool" = memcheck ] && extra="--leak-check full"
    # shellcheck disable=SC2086 # $extra: zero or two words
    step "$tool" "$out/$tool.log" timeout "$timeout_s" compute-sanitizer --tool "$tool" $extra --error-exitcode 99 \
        "$bin" ${sfilter:+"$sfilter"}
done

echo "logs in $out"
exit $failed
