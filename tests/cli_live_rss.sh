#!/bin/sh
# cli_live_rss.sh — memory stays flat on a long live stream: an hour of a
# 30 fps stream (108,000 frames of a 64x48 H.264 test pattern, made by
# ffmpeg as fast as it can into a FIFO, so the hour passes in about 40 s)
# read by infer --live with --track at --imgsz 32, its RSS sampled from
# /proc every second.  The bound: once a tenth of the frames are done, RSS
# never rises more than 4 MB above what it was then (measured: a 60 kB
# spread over 2 hours with rolling pieces,
# perf/results/2026-11-29-amd-epyc-2c-live/).  The run's JSON Lines cover
# every frame.  SKIPs, with the reason, without ffmpeg, mkfifo or /proc,
# and under the sanitizer build.
#   sh tests/cli_live_rss.sh BUILD_DIR      (from the repository root)
NAME=cli_live_rss
. "$(dirname "$0")/lib_cli.sh"

FRAMES=108000
for c in ffmpeg mkfifo; do
    command -v $c >/dev/null 2>&1 || { skip flat "$c not installed (sh tools/deps.sh)"; exit 0; }
done
[ -r /proc/self/status ] || { skip flat "no /proc here to read RSS from"; exit 0; }
if grep -q __asan_init "$B/infer" 2>/dev/null; then
    skip flat "RSS is measured against the optimised build (AddressSanitizer's quarantine holds freed memory)"
    exit 0
fi
mkfifo "$T/live.ts" || { skip flat "cannot make a FIFO in $T"; exit 0; }
SRV="" RUN=""
trap 'kill -KILL $SRV $RUN 2>/dev/null; rm -rf "$T"' EXIT

ffmpeg -v error -nostdin -y -f lavfi -i testsrc=size=64x48:rate=30 -frames:v $FRAMES -c:v libx264 -preset ultrafast \
    -g 30 -pix_fmt yuv420p -f mpegts "$T/live.ts" 2>"$T/srv.log" &
SRV=$!
"$B/infer" --weights "$ROOT/tests/loaders/v8_f16.pt" --imgsz 32 --max-det 1 --track --threads 1 --device cpu \
    --no-save --live --out "$T/o" "$T/live.ts" >"$T/out" 2>"$T/err" &
RUN=$!
# "SECONDS_SINCE_START RSS_KB" once a second while infer runs
: >"$T/rss"
i=0
while kill -0 $RUN 2>/dev/null; do
    kb=$(sed -n 's/^VmRSS:[^0-9]*\([0-9]*\).*/\1/p' /proc/$RUN/status 2>/dev/null)
    [ -n "$kb" ] && echo "$i $kb" >>"$T/rss"
    sleep 1
    i=$((i + 1))
    [ $i -lt 300 ] || { kill -KILL $RUN; break; }
done
wait $RUN
rc=$?
wait $SRV
lines=$(grep -c '"frame"' "$T/o/live.jsonl" 2>/dev/null)
if [ $rc -ne 0 ]; then fail flat "exit $rc: $(head -c 400 "$T/err")"
elif [ "$lines" != $FRAMES ]; then fail flat "$lines frame lines in the JSON Lines, want $FRAMES"
else
    # the sample a tenth of the way through, and the highest after it
    verdict=$(awk -v n="$(wc -l <"$T/rss")" 'NR == int(n / 10) + 1 { base = $2 }
        NR > int(n / 10) + 1 && $2 > max { max = $2 }
        END { printf "%s %d kB at 10%%, at most %d kB after (%d samples)\n", (max - base <= 4096 ? "ok" : "grew"),
              base, max, n }' "$T/rss")
    case "$verdict" in
    ok*) pass flat ;;
    *) fail flat "RSS $verdict: $(tr '\n' ' ' <"$T/rss" | head -c 600)" ;;
    esac
fi
exit $FAILED
