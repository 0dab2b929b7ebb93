#!/bin/sh
# rss_long.sh — resident memory of `infer` over a long synthetic video with
# tracking, a counting line, trails and highlights on: whatever a run keeps
# per frame shows as steady growth.  Samples VmRSS from /proc every
# INTERVAL seconds into a raw log; prints the spread after warm-up.  A
# measurement, not a test: it asserts nothing (the verdict line says
# whether the spread after warm-up is within LIMIT_KB).
#
#   sh perf/rss_long.sh [BUILD] > log
#
# Environment:
#   FRAMES=100000     frames of lavfi testsrc2 (30 fps), made here with libx264
#   SIZE=96x64        clip size;  IMGSZ=32  model input size
#   SAVE=0            1: also write the annotated MP4 (see below)
#   STRIDE=10         --vid-stride: detect on every 10th frame (the model is most of
#                     the time); every frame still goes through the tracker's
#                     identities, the counter, the highlight log and the JSON Lines
#   INTERVAL=2        seconds between samples
#   WARMUP=0.1        share of the frames counted as warm-up
#   LIMIT_KB=2048     the spread after warm-up the verdict compares with
#   REPLAY=0          1: replay synthetic detections (--detections) instead of the
#                     model: tracks come and go all the time (the model's random
#                     weights start few), so the counter and highlights see churn
#   NOTE="..."        a line for the log header
# infer runs niced.  The model has synthetic weights (scale n, seed 7) on
# one CPU thread; conf 0.01 makes it report boxes on every frame, but its
# random scores start few tracks: REPLAY=1 is the run that loads tracking,
# counting and highlights (every detection tracked and logged).
# With SAVE=1 RSS grows by about 0.1 kB a frame: FFmpeg's MP4 muxer keeps an
# index entry per frame until the file is finished (the index goes in the
# moov box, written at the end and moved to the front for +faststart); a
# fragmented MP4 (movflags +frag_keyframe+empty_moov) stays flat.
set -eu
cd "$(dirname "$0")/.."
B=${1:-build}
FRAMES=${FRAMES:-100000}
SIZE=${SIZE:-96x64}
IMGSZ=${IMGSZ:-32}
SAVE=${SAVE:-0}
STRIDE=${STRIDE:-10}
REPLAY=${REPLAY:-0}
INTERVAL=${INTERVAL:-2}
WARMUP=${WARMUP:-0.1}
LIMIT_KB=${LIMIT_KB:-2048}
T=$(mktemp -d "${TMPDIR:-/tmp}/strix_rss_long.XXXXXX")
PID=
cleanup() {
    [ -n "$PID" ] && kill "$PID" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT INT TERM

ffmpeg -v error -nostdin -f lavfi -i "testsrc2=size=$SIZE:rate=30" -frames:v "$FRAMES" -c:v libx264 \
    -preset ultrafast -pix_fmt yuv420p "$T/long.mp4"
save=
[ "$SAVE" = 1 ] || save=--no-save
if [ "$REPLAY" = 1 ]; then
    # objects (person, dog alternately) appear every 40 frames, live 120 frames,
    # drift right and down: about 3 at a time, 2500 tracks per 100k frames
    awk -v n="$FRAMES" 'BEGIN { for (f = 0; f < n; f++) { d = ""
        for (k = int(f / 40) - 2; k <= int(f / 40); k++) { age = f - 40 * k
            if (k < 0 || age >= 120) continue
            x = (k * 17) % 60 + age / 4; y = (k * 11) % 40 + age / 8
            d = d (d == "" ? "" : ", ") sprintf("{\"class_id\": %d, \"class_name\": \"%s\", \"score\": 0.9, " \
                "\"box\": [%.2f, %.2f, %.2f, %.2f]}", k % 2 ? 16 : 0, k % 2 ? "dog" : "person", x, y, x + 12, y + 12) }
        printf("{\"frame\": %d, \"pts\": %.6f, \"inferred\": true, \"detections\": [%s]}\n", f, f / 30, d) } }' \
        >"$T/dets.jsonl"
    set -- --detections "$T/dets.jsonl" --highlights 0,16
    what="replayed detections (3 objects at a time, a new one every 40 frames)"
else
    "$B/mkweights" --model weights/yolov8.yaml --scale n --seed 7 --out "$T/w.safetensors" >/dev/null
    set -- --model weights/yolov8.yaml --scale n --weights "$T/w.safetensors" --imgsz "$IMGSZ" --device cpu \
        --threads 1 --conf 0.01 --vid-stride "$STRIDE" --track-thresh 0.01 --highlights "$(seq -s, 0 79)"
    what="model (synthetic weights, imgsz $IMGSZ, cpu, 1 thread, vid-stride $STRIDE, conf 0.01, track-thresh 0.01)"
fi

echo "# rss_long: $(date -u +%Y-%m-%dT%H:%M:%SZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) CPUs"
echo "# commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')$(git diff --quiet 2>/dev/null || echo ' (modified)')"
echo "# clip: testsrc2 $SIZE 30 fps, $FRAMES frames, H.264; save=$SAVE"
echo "# detections: $what"
echo "# infer $* --track --trail 5 --line 0,32,96,32 --hl-score 0 $save" | sed "s|$T/||g"
[ -n "${NOTE:-}" ] && echo "# $NOTE"
echo "# columns: seconds since start, VmRSS kB, frames done (from infer's last progress line)"
# shellcheck disable=SC2086 # $save is one flag or nothing
nice -n 10 "$B/infer" "$@" --track --trail 5 --line 0,32,96,32 --hl-score 0 $save --out "$T/out" "$T/long.mp4" \
    >"$T/out.txt" 2>"$T/err.txt" &
PID=$!
start=$(date +%s.%N)
while [ -r "/proc/$PID/status" ]; do
    rss=$(awk '/^VmRSS:/ { print $2 }' "/proc/$PID/status" 2>/dev/null || true)
    done_=$(grep -o '[0-9]*/[0-9?]* frames' "$T/err.txt" 2>/dev/null | tail -n 1 | cut -d/ -f1)
    [ -n "$rss" ] && echo "$(awk -v a="$(date +%s.%N)" -v b="$start" 'BEGIN { printf "%.1f", a - b }') $rss ${done_:-0}"
    sleep "$INTERVAL"
done >"$T/samples.txt"
wait "$PID" && rc=0 || rc=$?
PID=
cat "$T/samples.txt"
echo "# infer exit $rc"
sed 's/^/# stdout: /' "$T/out.txt"
grep -v ' frames, .* fps, ETA ' "$T/err.txt" | sed 's/^/# stderr: /' || true
# the main pass: after warm-up, before the last progress line (after it come
# the end of the run: the highlight reel, the segment lists)
awk -v frames="$FRAMES" -v warm="$WARMUP" -v lim="$LIMIT_KB" '
    NR == FNR { if ($3 > last) last = $3; next }
    $3 >= frames * warm && $3 < last { n++; if (!min || $2 < min) min = $2; if ($2 > max) max = $2
        if (n == 1) { f0 = $3; r0 = $2 } f1 = $3; r1 = $2 }
    END { if (!n) { print "# no samples after warm-up"; exit }
        verdict = max - min <= lim ? "flat (within " lim " kB)" : "NOT flat (limit " lim " kB)"
        per = f1 > f0 ? (r1 - r0) / (f1 - f0) : 0
        printf "# after warm-up (%d samples, frames %d..%d): VmRSS %d..%d kB, spread %d kB, ", n, f0, f1, min, max, max - min
        printf "end - start %+d kB (%.4f kB/frame): %s\n", r1 - r0, per, verdict }' "$T/samples.txt" "$T/samples.txt"
