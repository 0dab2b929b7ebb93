#!/bin/sh
# gpu_video.sh — the video job on the GPU, gpu-check's `video` step: the
# bundle's infer (static FFmpeg with NVDEC) on its 720p H.264 clip, the
# first model of the check in fp16, detections only (JSON Lines, no annotated video):
#   - one input and 8 inputs at once (--jobs 8), batch 32, decoded three
#     ways: on the CPU to RGB (the default), on the CPU to NV12 (--nv12),
#     with NVDEC (--decode nvdec: frames stay in device memory); each run
#     synchronous and with STRIX_CUDA_ASYNC=1 (two batches in flight, the
#     model option cuda_async; runs named "-async"); the wall time of each
#     run and its frames/s (the frames of all its inputs over the wall time,
#     start-up included);
#   - NVDEC's utilisation during the 8-input NVDEC runs: nvidia-smi sampled
#     every 0.2 s (mean and max of the busy samples), and infer's own figure
#     (its summary line, read through NVML);
#   - correctness: H.264 decoding is bit-exact, so every JSON Lines file of
#     an NVDEC run (sync or async) must equal the synchronous --nv12 CPU
#     run's byte for byte;
#   - memory: 8 inputs at batch 64, NVDEC, async, on a 60 s loop of the clip
#     (the clip itself without the ffmpeg program): infer's host RSS
#     (/proc/PID/status, samples 0.2 s apart: the largest in the first and in the
#     second half of the run, so growth shows) and its device memory
#     (nvidia-smi's per-process figure, and the GPU's used memory above what
#     it was before the run: a container may hide the process);
#   - with the ffmpeg and ffprobe programs: the annotated MP4 (CPU decode,
#     sync and async) against a plain ffmpeg transcode of the same clip with
#     the same encoder and settings (perf/bench_video.sh: libx264 -preset
#     medium -crf 23, or h264_nvenc when this machine's ffmpeg can encode
#     with it); otherwise a SKIP line.
# A row per run is appended to ROWS (JSON Lines) for perf/gpu_report.sh.
#   sh perf/gpu_video.sh INFER CLIP YAML SCALE WEIGHTS WORK ROWS
# Exit 0 when every run worked and the detections matched; 1 otherwise.
set -u
infer=$1 clip=$2 yaml=$3 scale=$4 weights=$5 work=$6 rows=$7
bad=0
mkdir -p "$work/in"
clip=$(cd "$(dirname "$clip")" && pwd)/$(basename "$clip")
inputs=""
for i in 1 2 3 4 5 6 7 8; do
    ln -sf "$clip" "$work/in/c$i.mp4"
    inputs="$inputs $work/in/c$i.mp4"
done
frames_of() { cat "$1"/*.jsonl | grep -c '"frame": '; }
now() { date +%s.%N; }
have_ffmpeg=0
command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1 && have_ffmpeg=1

# launch NAME N ASYNC BATCH LIST ARGS...: infer in the background on the
# first N inputs of LIST (pid in $pid, start time in $t0)
launch() {
    name=$1 n=$2 async=$3 batch=$4 list=$5
    shift 5
    # shellcheck disable=SC2046 # the first n input paths: words (no spaces in $work)
    set -- $(echo "$list" | tr ' ' '\n' | grep . | head -n "$n" | tr '\n' ' ') "$@"
    t0=$(now)
    STRIX_CUDA_ASYNC=$async "$infer" --model "$yaml" --scale "$scale" --weights "$weights" --device cuda --half \
        --batch "$batch" --jobs "$n" --no-save --out "$work/$name" "$@" >"$work/$name.log" 2>&1 &
    pid=$!
}
# finish NAME N ASYNC BATCH [EXTRA_JSON]: wait for it, print and append its row
finish() {
    wait "$pid"
    rc=$?
    t1=$(now)
    echo "## $1: infer's output" && sed 's/^/    /' "$work/$1.log"
    if [ $rc -ne 0 ]; then
        echo "FAIL $1: infer exit $rc: $(tail -n 3 "$work/$1.log")"
        bad=1
        return 1
    fi
    f=$(frames_of "$work/$1")
    fps=$(awk -v f="$f" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", f / (b - a) }')
    # infer's NVDEC utilisation (NVML): the mean over its inputs' summary lines
    dec=$(sed -n 's/.*NVDEC \([0-9.]*\)%.*/\1/p' "$work/$1.log" | awk '{ s += $1; k++ } END { if (k) printf "%.1f", s / k }')
    echo "$1: $2 input(s), batch $4, async $3, $f frames in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s: $fps frames/s${dec:+, NVDEC $dec% (infer, NVML)}"
    printf '{"kind": "video", "name": "%s", "inputs": %d, "frames": %d, "fps": %s, "async": %d, "batch": %d%s%s}\n' \
        "$1" "$2" "$f" "$fps" "$3" "$4" "${dec:+, \"nvdec_util_infer\": $dec}" "${5:-}" >>"$rows"
}
run() { # NAME N ASYNC ARGS...: one timed run of the first N inputs, batch 32
    name=$1 n=$2 a=$3
    shift 3
    launch "$name" "$n" "$a" 32 "$inputs" "$@"
    finish "$name" "$n" "$a" 32
}
same_as_nv12() { # RUN N: its JSON Lines equal cpu-nv12-N's
    ok=1
    for j in "$work/cpu-nv12-$2"/*.jsonl; do
        k="$work/$1/$(basename "$j")"
        if [ ! -f "$k" ]; then echo "FAIL $1: no $(basename "$j")"; ok=0
        elif ! cmp -s "$j" "$k"; then echo "FAIL $1: $(basename "$j") differs from the CPU-decoded --nv12 run's"; ok=0
        fi
    done
    if [ $ok = 1 ]; then echo "PASS $1: each of its $2 JSON Lines files equals the CPU-decoded --nv12 run's"; else bad=1; fi
}

for n in 1 8; do
    for a in 0 1; do
        sfx=$([ $a = 1 ] && echo -async)
        run "cpu-rgb-$n$sfx" "$n" "$a"
        run "cpu-nv12-$n$sfx" "$n" "$a" --nv12
        [ "$a" = 1 ] && same_as_nv12 "cpu-nv12-$n$sfx" "$n"
        if [ "$n" = 8 ] && command -v nvidia-smi >/dev/null 2>&1; then
            (while :; do nvidia-smi --query-gpu=utilization.decoder --format=csv,noheader,nounits; sleep 0.2; done) \
                >"$work/dec.txt" 2>/dev/null &
            sampler=$!
        fi
        nvdec_ok=1
        run "nvdec-$n$sfx" "$n" "$a" --decode nvdec || nvdec_ok=0
        if [ "$n" = 8 ] && [ -n "${sampler:-}" ]; then
            kill "$sampler" 2>/dev/null
            wait "$sampler" 2>/dev/null
            sampler=""
            awk -v run="nvdec-8$sfx" '$1 > 0 { s += $1; k++; if ($1 > m) m = $1 } END { if (k) printf "NVDEC utilisation during %s (nvidia-smi): mean %.0f%%, max %d%% over %d busy samples\n", run, s / k, m, k; else print "NVDEC utilisation during " run " (nvidia-smi): no busy sample (NVDEC idle or not reported)" }' \
                "$work/dec.txt"
        fi
        [ $nvdec_ok = 1 ] && same_as_nv12 "nvdec-$n$sfx" "$n"
    done
done

# memory: 8 inputs at batch 64 (NVDEC, async) over a longer input
long=$clip
if [ $have_ffmpeg = 1 ] && ffmpeg -v error -nostdin -y -stream_loop 14 -i "$clip" -c copy "$work/long.mp4" 2>"$work/long.err"; then
    long=$work/long.mp4
else
    echo "memory run on the 4 s clip itself (no ffmpeg program to loop it: $(head -c 200 "$work/long.err" 2>/dev/null))"
fi
mkdir -p "$work/long"
linputs=""
for i in 1 2 3 4 5 6 7 8; do
    ln -sf "$long" "$work/long/l$i.mp4"
    linputs="$linputs $work/long/l$i.mp4"
done
gpu_used() { nvidia-smi --query-gpu=memory.used --format=csv,noheader,nounits 2>/dev/null | head -n 1 | tr -d ' '; }
base=$(gpu_used)
launch mem-8-b64 8 1 64 "$linputs" --decode nvdec
: >"$work/mem.txt"
while kill -0 "$pid" 2>/dev/null; do
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null)
    proc=$(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader,nounits 2>/dev/null |
        awk -F', *' -v p="$pid" '$1 == p { print $2 }')
    echo "${rss:-0} ${proc:-0} $(gpu_used)" >>"$work/mem.txt"
    sleep 0.2
done
mem=$(awk -v base="${base:-0}" '
    { r[NR] = $1 / 1024; if ($2 > d) d = $2; if ($3 - base > g) g = $3 - base }
    END {
        for (i = 1; i <= NR; i++) if (i <= NR / 2) { if (r[i] > a) a = r[i] } else if (r[i] > b) b = r[i]
        printf ", \"samples\": %d, \"rss_first_half_mb\": %.0f, \"max_rss_mb\": %.0f, \"max_device_mb\": %.0f, \"device_used_delta_mb\": %.0f", NR, a, (a > b ? a : b), d, g
    }' "$work/mem.txt")
if finish mem-8-b64 8 1 64 "$mem"; then
    echo "mem-8-b64 memory: $(echo "$mem" | tr -d '"' | sed 's/^, //')"
    echo "    (max_device_mb: nvidia-smi's figure for infer's pid, 0 when it lists none; device_used_delta_mb: the GPU's used memory above $base MB before the run)"
fi

# the annotated MP4 against a plain ffmpeg transcode, same encoder and settings
if [ $have_ffmpeg = 1 ]; then
    codec=libx264
    ffmpeg -v error -nostdin -f lavfi -i testsrc2=s=256x256:d=0.2 -c:v h264_nvenc -f null - >/dev/null 2>&1 && codec=h264_nvenc
    b=$(cd "$(dirname "$infer")" && pwd)
    for a in 0 1; do
        name=annotated$([ $a = 1 ] && echo -async)
        echo "## $name: perf/bench_video.sh (CPU decode, annotated MP4, $codec)"
        if STRIX_CUDA_ASYNC=$a CODEC=$codec IMGSZ=640 MODEL="$yaml" SCALE="$scale" WEIGHTS="$weights" DEVICE=cuda \
            BATCH=32 INFER_ARGS="--half" NOTE="gpu_video.sh $name" sh "$(dirname "$0")/bench_video.sh" "$b" "$long" \
            >"$work/$name.txt" 2>&1; then
            sed 's/^/    /' "$work/$name.txt"
            ff=$(sed -n 's/^ffmpeg transcode: .*, \([0-9.]*\) fps.*/\1/p' "$work/$name.txt")
            line=$(grep '^infer imgsz' "$work/$name.txt")
            fr=$(echo "$line" | sed -n 's/^infer imgsz [0-9]*: \([0-9]*\) frames.*/\1/p')
            fps=$(echo "$line" | sed -n 's/.*, \([0-9.]*\) fps, .*/\1/p')
            ratio=$(echo "$line" | sed -n 's/.*fps, \([0-9.]*\) x ffmpeg.*/\1/p')
            echo "$name: $fps frames/s against ffmpeg's $ff: $ratio x ($codec)"
            printf '{"kind": "video-annotated", "name": "%s", "frames": %s, "fps": %s, "ffmpeg_fps": %s, "ratio": %s, "encoder": "%s", "async": %d}\n' \
                "$name" "${fr:-0}" "${fps:-0}" "${ff:-0}" "${ratio:-0}" "$codec" "$a" >>"$rows"
        else
            echo "FAIL $name: perf/bench_video.sh failed: $(tail -n 3 "$work/$name.txt")"
            bad=1
        fi
    done
else
    echo "SKIP annotated: no ffmpeg/ffprobe program on this machine (the plain transcode needs one)"
fi
exit $bad
