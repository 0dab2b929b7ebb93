#!/bin/sh
# live.sh — infer on live sources, measured (issue 34): memory over a long
# stream, reconnect time after server restarts, latency with and without
# --realtime.  Raw logs into OUTDIR; asserts nothing.
#
#   sh perf/live.sh BUILD OUTDIR
#
#   rss.log        "SECONDS RSS_KB FRAMES" every 2 s of infer --live --track
#                  --segment 60s on HOURS (default 2) of a 30 fps 64x48 H.264
#                  stream written into a FIFO as fast as ffmpeg makes it
#                  (hours of stream in minutes), --imgsz 32; rss.out its output
#   reconnect-http.jsonl, reconnect-rtsp.jsonl, reconnect-*.err
#                  RESTARTS (default 5) restarts of an `ffmpeg -listen 1` HTTP
#                  MPEG-TS server and of tests/rtsp_server.pl (RTSP over TCP),
#                  each down RESTART_DOWN s (default 0.3), 4 s apart: infer's
#                  JSON Lines, slim (below; the reconnect events' gap_s: from the drop seen
#                  to the source reopened) and stderr
#   latency-*.out, latency-*.jsonl (slim)
#                  a 20 s 25 fps 160x120 HTTP stream through a slow model
#                  (--imgsz 1280, about 3 frame times a frame on a 2-core CPU) with
#                  and without --realtime, and --imgsz 320 with it: summaries and
#                  per-frame latency_s
#   lscpu.txt, summary.txt (the figures, computed with jq and awk from the logs;
#                  ONLY=summary sh perf/live.sh BUILD OUTDIR recomputes it alone)
set -u
cd "$(dirname "$0")/.."
B=${1:?usage: sh perf/live.sh BUILD OUTDIR}
OUT=${2:?usage: sh perf/live.sh BUILD OUTDIR}
HOURS=${HOURS:-2}
RESTARTS=${RESTARTS:-5}
RESTART_DOWN=${RESTART_DOWN:-0.3}
mkdir -p "$OUT"
T=$(mktemp -d "${TMPDIR:-/tmp}/strix_live_perf.XXXXXX")
PIDS=""
trap 'kill -KILL $PIDS 2>/dev/null; rm -rf "$T"' EXIT
M="--weights tests/loaders/v8_f16.pt --threads 1 --device cpu --no-audio"
PORT=$((20000 + $$ % 20000))
if [ "${ONLY:-}" != summary ]; then
lscpu >"$OUT/lscpu.txt"

# 1. memory over HOURS of stream
frames=$((HOURS * 3600 * 30))
mkfifo "$T/long.ts"
ffmpeg -v error -nostdin -y -f lavfi -i testsrc=size=64x48:rate=30 -frames:v $frames -c:v libx264 -preset ultrafast \
    -g 30 -pix_fmt yuv420p -f mpegts "$T/long.ts" 2>"$OUT/rss-ffmpeg.err" &
PIDS="$PIDS $!"
"$B/infer" $M --imgsz 32 --max-det 1 --track --live --segment 60s --out "$T/long" "$T/long.ts" \
    >"$OUT/rss.out" 2>&1 &
run=$!
PIDS="$PIDS $run"
: >"$OUT/rss.log"
i=0
while kill -0 $run 2>/dev/null; do
    kb=$(sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' /proc/$run/status 2>/dev/null)
    n=$(wc -l <"$T/long/long.jsonl" 2>/dev/null)
    [ -n "$kb" ] && echo "$((i * 2)) $kb $((${n:-1} - 1))" >>"$OUT/rss.log"
    sleep 2
    i=$((i + 1))
done
wait $run
echo "rss: exit $?" >>"$OUT/rss.out"
ls -l "$T/long" | head -5 >>"$OUT/rss.out"
rm -rf "$T/long"

# slim JSONL: infer's JSON Lines less the detections (the header and event
# lines whole; of a frame line its frame, pts and latency_s): what the
# figures read, without megabytes of boxes
slim() { jq -c 'if has("frame") then {frame, pts, latency_s} else . end' "$1"; }

# 2. reconnects: a server killed and restarted RESTARTS times
# restarts KIND URL START_CMD...: infer on URL, the server (START_CMD) restarted
restarts() {
    kind=$1 url=$2
    shift 2
    "$@" &
    srv=$!
    PIDS="$PIDS $srv"
    sleep 1
    "$B/infer" $M --imgsz 64 --max-reconnects 3 --out "$T/$kind" "$url" >"$OUT/reconnect-$kind.out" \
        2>"$OUT/reconnect-$kind.err" &
    run=$!
    PIDS="$PIDS $run"
    k=0
    while [ $k -lt "$RESTARTS" ]; do
        sleep 4
        kill -KILL $srv
        wait $srv 2>/dev/null
        sleep "$RESTART_DOWN"
        "$@" &
        srv=$!
        PIDS="$PIDS $srv"
        k=$((k + 1))
    done
    sleep 4
    kill -KILL $srv
    wait $run
    slim "$T/$kind"/*.jsonl >"$OUT/reconnect-$kind.jsonl"
}
restarts http "http://127.0.0.1:$PORT/live.ts" ffmpeg -v error -nostdin -re -f lavfi -i testsrc=size=160x120:rate=25 \
    -t 60 -c:v libx264 -preset ultrafast -g 25 -pix_fmt yuv420p -f mpegts -listen 1 "http://127.0.0.1:$PORT/live.ts"
restarts rtsp "rtsp://127.0.0.1:$((PORT + 1))/live" perl tests/rtsp_server.pl $((PORT + 1)) tcp

# 3. latency at --realtime
# latency NAME ARGS...: infer on a fresh 20 s stream with ARGS
latency() {
    name=$1
    shift
    ffmpeg -v error -nostdin -re -f lavfi -i testsrc=size=160x120:rate=25 -t 20 -c:v libx264 -preset ultrafast \
        -g 25 -pix_fmt yuv420p -f mpegts -listen 1 "http://127.0.0.1:$PORT/live.ts" 2>/dev/null &
    PIDS="$PIDS $!"
    sleep 0.5
    "$B/infer" $M "$@" --no-reconnect --out "$T/$name" "http://127.0.0.1:$PORT/live.ts" >"$OUT/latency-$name.out" 2>&1
    slim "$T/$name/live.jsonl" >"$OUT/latency-$name.jsonl"
}
latency realtime-1280 --imgsz 1280 --realtime
latency queued-1280 --imgsz 1280
latency realtime-320 --imgsz 320 --realtime
fi

{
    echo "CPU: $(sed -n 's/^Model name: *//p' "$OUT/lscpu.txt"), $(sed -n 's/^CPU(s): *//p' "$OUT/lscpu.txt") vCPUs"
    echo "rss: $(awk 'NR == 1 { first = $2 } { last = $2; if ($2 > max) max = $2; n = NR; f = $3 }
        END { printf "%d samples, first %d kB, last %d kB, max %d kB, %d frames at the last sample", n, first, last, max, f }' "$OUT/rss.log")"
    echo "rss after the first tenth: $(awk -v n="$(wc -l <"$OUT/rss.log")" 'NR > n / 10 { if (!min || $2 < min) min = $2; if ($2 > max) max = $2 }
        END { printf "min %d kB, max %d kB, spread %d kB", min, max, max - min }' "$OUT/rss.log")"
    for k in http rtsp; do
        echo "reconnect $k: gap_s $(jq -r 'select(.event) | .event.gap_s' "$OUT/reconnect-$k.jsonl" | tr '\n' ' ')"
    done
    for n in realtime-1280 queued-1280 realtime-320; do
        echo "latency $n: $(jq -s -r '[.[1:][] | .latency_s] | sort | "\(length) frames, p50 \(.[length / 2 | floor]) s, p99 \(.[length * 99 / 100 | floor]) s, max \(.[-1]) s"' "$OUT/latency-$n.jsonl"); $(grep -o '[0-9]* frames* dropped[a-z (-]*)*' "$OUT/latency-$n.out" | head -1)"
    done
} >"$OUT/summary.txt"
cat "$OUT/summary.txt"
