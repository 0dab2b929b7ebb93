#!/bin/sh
# rss_streams.sh — peak resident memory of `infer` running S videos at once
# (--jobs S) at one --batch, for each S: the frame pools of the pipeline
# (tools/infer/pipeline.c) are most of it, and this shows whether they grow
# with the batch or with batch x videos.  Each video is a synthetic 1080p
# clip (lavfi testsrc2, libx264 ultrafast, made here), long enough to fill
# the pools; the model (synthetic weights, scale n, imgsz 160, no annotated
# video) is slower than the decoders, so every reader runs ahead until its
# pool is full.  A measurement, not a test: it asserts nothing; it also
# compares each run's JSON Lines with the first binary's, byte for byte.
#
#   sh perf/rss_streams.sh OUTDIR [INFER...]     # default INFER: build/infer
#
# Environment: BATCH=64, STREAMS="1 2 4 8", FRAMES=360, SIZE=1920x1080.
# OUTDIR gets one raw log per binary and S (infer's own summary lines, whose
# "peak memory" is getrusage's maximum RSS) and summary.txt.
set -eu
cd "$(dirname "$0")/.."
OUT=${1:?usage: sh perf/rss_streams.sh OUTDIR [INFER...]}
shift
[ $# -gt 0 ] || set -- build/infer
BATCH=${BATCH:-64}
STREAMS=${STREAMS:-1 2 4 8}
FRAMES=${FRAMES:-360}
SIZE=${SIZE:-1920x1080}
mkdir -p "$OUT"
W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
ff() { ffmpeg -v error -nostdin -y "$@"; }
build/mkweights --model weights/yolov8.yaml --scale n --seed 7 --out "$W/n.safetensors" >/dev/null
ff -f lavfi -i "testsrc2=size=$SIZE:rate=30" -frames:v "$FRAMES" -c:v libx264 -preset ultrafast "$W/clip.mp4"
max=0
for s in $STREAMS; do [ "$s" -gt "$max" ] && max=$s; done
i=1
while [ $i -le "$max" ]; do
    ln -s "$W/clip.mp4" "$W/v$i.mp4"
    i=$((i + 1))
done
{
    echo "# rss_streams.sh $(date -u +%FT%TZ): $SIZE, $FRAMES frames a video, --batch $BATCH, imgsz 160, --no-save"
    echo "# $(uname -m), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
    echo "# binary | videos at once | peak memory MB (infer's summary) | JSON Lines as the first binary's"
} >"$OUT/summary.txt"
b=0
for bin in "$@"; do
    b=$((b + 1))
    for s in $STREAMS; do
        ins=""
        i=1
        while [ $i -le "$s" ]; do
            ins="$ins $W/v$i.mp4"
            i=$((i + 1))
        done
        rm -rf "$W/out$b-$s"
        log="$OUT/infer$b-streams$s.log"
        echo "# $bin --batch $BATCH --jobs $s, $s videos" >"$log"
        # shellcheck disable=SC2086
        "$bin" --model weights/yolov8.yaml --scale n --weights "$W/n.safetensors" --imgsz 160 --batch "$BATCH" \
            --jobs "$s" --no-save --out "$W/out$b-$s" $ins >>"$log" 2>&1
        peak=$(sed -n 's/.*peak memory \([0-9]*\) MB.*/\1/p' "$log" | sort -n | tail -1)
        same=first
        if [ $b -gt 1 ]; then
            same=yes
            for f in "$W/out1-$s"/*.jsonl; do cmp -s "$f" "$W/out$b-$s/$(basename "$f")" || same=no; done
        fi
        echo "$bin | $s | $peak | $same" >>"$OUT/summary.txt"
    done
done
cat "$OUT/summary.txt"
