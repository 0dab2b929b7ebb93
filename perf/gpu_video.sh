#!/bin/sh
# gpu_video.sh — the video job on the GPU, gpu-check's `video` step: the
# bundle's infer (static FFmpeg with NVDEC) on its 720p H.264 clip, the
# first model of the check in fp16, detections only (JSON Lines, no annotated video):
#   - one input and 8 inputs at once (--jobs 8), decoded three ways: on the
#     CPU to RGB (the default), on the CPU to NV12 (--nv12), with NVDEC
#     (--decode nvdec: frames stay in device memory); the wall time of each
#     run and its frames/s (the frames of all its inputs over the wall time,
#     start-up included);
#   - NVDEC's utilisation during the 8-input NVDEC run (nvidia-smi sampled
#     every 0.2 s: mean and max of the busy samples);
#   - correctness: H.264 decoding is bit-exact, so every JSON Lines file of
#     an NVDEC run must equal the --nv12 CPU run's byte for byte.
# A row per run is appended to ROWS (JSON Lines) for perf/gpu_report.sh.
#   sh perf/gpu_video.sh INFER CLIP YAML SCALE WEIGHTS WORK ROWS
# Exit 0 when every run worked and the detections matched; 1 otherwise.
set -u
infer=$1 clip=$2 yaml=$3 scale=$4 weights=$5 work=$6 rows=$7
bad=0
mkdir -p "$work/in"
inputs=""
for i in 1 2 3 4 5 6 7 8; do
    ln -sf "$(cd "$(dirname "$clip")" && pwd)/$(basename "$clip")" "$work/in/c$i.mp4"
    inputs="$inputs $work/in/c$i.mp4"
done
frames_of() { cat "$1"/*.jsonl | grep -c '"frame": '; }
now() { date +%s.%N; }

# run NAME N_INPUTS ARGS...: one infer run, timed; its outputs in $work/NAME
run() {
    name=$1 n=$2
    shift 2
    # shellcheck disable=SC2046 # the first n input paths: words (no spaces in $work)
    set -- $(echo "$inputs" | tr ' ' '\n' | grep . | head -n "$n" | tr '\n' ' ') "$@"
    t0=$(now)
    "$infer" --model "$yaml" --scale "$scale" --weights "$weights" --device cuda --half --batch 32 --jobs "$n" --quiet \
        --no-save --out "$work/$name" "$@" >"$work/$name.log" 2>&1
    rc=$?
    t1=$(now)
    if [ $rc -ne 0 ]; then
        echo "FAIL $name: infer exit $rc: $(tail -n 3 "$work/$name.log")"
        bad=1
        return 1
    fi
    f=$(frames_of "$work/$name")
    fps=$(awk -v f="$f" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", f / (b - a) }')
    echo "$name: $n input(s), $f frames in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s: $fps frames/s"
    printf '{"kind": "video", "name": "%s", "inputs": %d, "frames": %d, "fps": %s}\n' "$name" "$n" "$f" "$fps" >>"$rows"
}

for n in 1 8; do
    run "cpu-rgb-$n" "$n"
    run "cpu-nv12-$n" "$n" --nv12
    if [ "$n" = 8 ] && command -v nvidia-smi >/dev/null 2>&1; then
        (while :; do nvidia-smi --query-gpu=utilization.decoder --format=csv,noheader,nounits; sleep 0.2; done) \
            >"$work/dec.txt" 2>/dev/null &
        sampler=$!
    fi
    nvdec_ok=1
    run "nvdec-$n" "$n" --decode nvdec || nvdec_ok=0
    if [ "$n" = 8 ] && [ -n "${sampler:-}" ]; then
        kill "$sampler" 2>/dev/null
        awk '$1 > 0 { s += $1; k++; if ($1 > m) m = $1 } END { if (k) printf "NVDEC utilisation during nvdec-8: mean %.0f%%, max %d%% over %d busy samples\n", s / k, m, k; else print "NVDEC utilisation during nvdec-8: no busy sample (NVDEC idle or not reported)" }' \
            "$work/dec.txt"
    fi
    [ $nvdec_ok = 1 ] || continue
    for j in "$work/cpu-nv12-$n"/*.jsonl; do
        k="$work/nvdec-$n/$(basename "$j")"
        if [ ! -f "$k" ]; then echo "FAIL nvdec-$n: no $(basename "$j")"; bad=1
        elif ! cmp -s "$j" "$k"; then echo "FAIL nvdec-$n: $(basename "$j") differs from the CPU-decoded --nv12 run's"; bad=1
        fi
    done
    [ $bad = 0 ] && echo "PASS nvdec-$n: each of its $n JSON Lines files equals the CPU-decoded --nv12 run's"
done
exit $bad
