#!/bin/sh
# cli_live_v4l2.sh — infer on a V4L2 camera: the first /dev/video* there
# is, else a v4l2loopback device fed by ffmpeg where the module can be
# loaded here (root, modprobe, a module for the running kernel; unloaded at
# the end); else a SKIP that says which.  infer reads the device for 3 s
# (a live source: JSON Lines flushed per frame), is stopped with SIGTERM
# (exit 130) and has written frames 0, 1, 2, ...
#   sh tests/cli_live_v4l2.sh BUILD_DIR      (from the repository root)
NAME=cli_live_v4l2
. "$(dirname "$0")/lib_cli.sh"
M="--weights $ROOT/tests/loaders/v8_f16.pt --imgsz 64 --threads 1 --device cpu --no-audio"

command -v jq >/dev/null 2>&1 || { skip camera "jq not installed (sh tools/deps.sh)"; exit 0; }
. "$ROOT/tests/lib_live.sh"
PIDS="" LOADED=0
trap 'kill_all; [ $LOADED = 1 ] && modprobe -r v4l2loopback; rm -rf "$T"' EXIT

DEV=""
for d in /dev/video*; do
    [ -c "$d" ] && { DEV=$d; break; }
done
if [ -z "$DEV" ]; then
    why=""
    if [ "$(id -u)" -ne 0 ]; then why="not root"
    elif ! command -v modprobe >/dev/null 2>&1; then why="no modprobe"
    elif ! modprobe v4l2loopback exclusive_caps=1 2>"$T/mod"; then why="modprobe v4l2loopback: $(head -c 200 "$T/mod")"
    fi
    if [ -n "$why" ]; then
        skip camera "no /dev/video* here and the v4l2loopback module cannot be loaded ($why; kernel $(uname -r))"
        exit 0
    fi
    LOADED=1
    sleep 0.5
    for d in /dev/video*; do [ -c "$d" ] && DEV=$d; done
    ffmpeg -v error -nostdin -re -f lavfi -i testsrc=size=160x120:rate=25 -t 30 -pix_fmt yuv420p -f v4l2 "$DEV" \
        >>"$T/srv.log" 2>&1 &
    SRV=$!
    PIDS="$PIDS $SRV"
    sleep 1
fi

infer_bg --out "$T/c" "$DEV"
sleep 3
kill -TERM $RUN 2>/dev/null
finish 15
stem=$(basename "$DEV")
if [ $RC -ne 130 ]; then fail camera "$DEV: exit $RC, want 130 (stopped): $(head -c 400 "$T/err")"
elif ! c=$(check "$T/c/$stem.jsonl"); then fail camera "$DEV: $c"
elif [ "$(frames_of "$c")" -lt 1 ]; then fail camera "$DEV: no frame in 3 s: $c"
else pass camera; fi
exit $FAILED
