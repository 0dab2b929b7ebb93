#!/bin/sh
# bench_video.sh — `infer`'s end-to-end speed on a long clip (decode,
# detect, annotate, encode) next to a plain `ffmpeg -i CLIP -c:v libx264`
# transcode with the same encoder settings, as a ratio: how much detection
# adds to what encoding alone costs.  Prints a log; measures, asserts nothing.
#
#   sh perf/bench_video.sh [BUILD] [CLIP] > log
#
# BUILD defaults to build; CLIP to ../shared/data/vtest.avi (795 frames,
# 768x576), else a synthetic 60 s 1280x720 testsrc2 clip.  Environment:
#   IMGSZ="640 320"   model input sizes to measure (one infer run each)
#   SCALE=n           model scale (synthetic weights, seed 7, unless WEIGHTS=file
#                     with MODEL=yaml)
#   PRESET=medium CRF=23   encoder settings, the same for ffmpeg and infer
#   CODEC=libx264     the encoder of both (h264_nvenc: CRF goes to its -cq,
#                     as infer's --crf does)
#   THREADS=0 BATCH=1 STRIDE=1 DEVICE=cpu   passed to infer
#   INFER_ARGS="..."  more infer arguments (words), e.g. "--half"; the
#                     environment reaches infer too (STRIX_CUDA_ASYNC=1)
#   NOTE="..."        a line for the log header (where and why it was measured)
# Audio is left out of both runs (--no-audio / -an): the comparison is video.
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
CLIP=${2:-../shared/data/vtest.avi}
IMGSZ=${IMGSZ:-640 320}
SCALE=${SCALE:-n}
PRESET=${PRESET:-medium}
CRF=${CRF:-23}
THREADS=${THREADS:-0}
BATCH=${BATCH:-1}
STRIDE=${STRIDE:-1}
DEVICE=${DEVICE:-cpu}
CODEC=${CODEC:-libx264}
INFER_ARGS=${INFER_ARGS:-}
case $CODEC in *nvenc*) QOPT=-cq ;; *) QOPT=-crf ;; esac
MODEL=${MODEL:-weights/yolov8.yaml}
T=$(mktemp -d "${TMPDIR:-/tmp}/strix_bench_video.XXXXXX")
trap 'rm -rf "$T"' EXIT

now() { date +%s.%N; }
if [ ! -f "$CLIP" ]; then
    CLIP=$T/synthetic.mp4
    ffmpeg -v error -nostdin -f lavfi -i testsrc2=size=1280x720:rate=30 -t 60 -c:v libx264 -preset ultrafast \
        -crf 18 "$CLIP"
fi
if [ -z "${WEIGHTS:-}" ]; then
    WEIGHTS=$T/w.safetensors
    "$B/mkweights" --model "$MODEL" --scale "$SCALE" --seed 7 --out "$WEIGHTS" >/dev/null
    wdesc="synthetic (mkweights --seed 7)"
else
    wdesc=$WEIGHTS
fi
frames=$(ffprobe -v error -count_packets -select_streams v:0 -show_entries stream=nb_read_packets -of csv=p=0 "$CLIP")
size=$(ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=s=x:p=0 "$CLIP")

echo "# bench_video.sh $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(hostname)"
echo "# cpu: $(grep -m 1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(nproc) cores;" \
     "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# gpu: $(command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1 || echo none)"
echo "# clip: $CLIP ($size, $frames frames)"
echo "# model: $MODEL scale $SCALE, weights $wdesc; device $DEVICE, threads $THREADS, batch $BATCH, vid-stride $STRIDE"
echo "# encoder: $CODEC -preset $PRESET $QOPT $CRF, no audio; $(ffmpeg -version | head -n 1)"
[ -z "$INFER_ARGS" ] || echo "# infer arguments added: $INFER_ARGS"
[ -n "${NOTE:-}" ] && echo "# note: $NOTE"
echo

t0=$(now)
ffmpeg -v error -nostdin -y -i "$CLIP" -map 0:v:0 -an -c:v "$CODEC" -preset "$PRESET" "$QOPT" "$CRF" "$T/ffmpeg.mp4"
t1=$(now)
ff_fps=$(echo "$frames $t0 $t1" | awk '{ printf "%.1f", $1 / ($3 - $2) }')
echo "ffmpeg transcode: $frames frames in $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }') s, $ff_fps fps" \
     "(load average after: $(cut -d' ' -f1 /proc/loadavg))"

for sz in $IMGSZ; do
    t0=$(now)
    # shellcheck disable=SC2086 # $INFER_ARGS: words
    "$B/infer" --model "$MODEL" --scale "$SCALE" --weights "$WEIGHTS" --imgsz "$sz" --threads "$THREADS" \
        --batch "$BATCH" --vid-stride "$STRIDE" --device "$DEVICE" --codec "$CODEC" --preset "$PRESET" --crf "$CRF" \
        --no-audio --overwrite --out "$T/infer" $INFER_ARGS "$CLIP" >"$T/out" 2>"$T/err" || { cat "$T/err"; exit 1; }
    t1=$(now)
    fps=$(echo "$frames $t0 $t1" | awk '{ printf "%.1f", $1 / ($3 - $2) }')
    echo "infer imgsz $sz: $frames frames in $(echo "$t0 $t1" | awk '{ printf "%.2f", $2 - $1 }') s" \
         "(model load included), $fps fps, $(echo "$fps $ff_fps" | awk '{ printf "%.3f", $1 / $2 }') x ffmpeg" \
         "(load average after: $(cut -d' ' -f1 /proc/loadavg))"
    echo "  $(cat "$T/out")"
    # notices (an encoder falling back, say): the comparison is only fair without one
    grep -v ' frames, .* fps, ETA ' "$T/err" | sed 's/^/  stderr: /' || true
done
