#!/bin/sh
# cli_live_rtsp.sh — infer on RTSP from a real local server this script
# starts and always kills (tests/rtsp_server.pl: GStreamer's
# gst-rtsp-server serving a live H.264 test pattern over TCP only, or UDP
# only, so a client on the other transport is refused): --rtsp-transport
# udp against the TCP-only server is an input that never came up (exit 3);
# over TCP with --track, the server killed and restarted mid-stream: a
# reconnect event, frame numbers going on 0, 1, 2, ..., and the gap short
# against --track-buffer 90, so the tracks of the frame before it go on
# after it (their ids again, "tracks_ended": false); over UDP with
# --track-buffer 5, the same restart (found by --stall-timeout 3) is a long
# gap: every track ended ("tracks_ended": true) and the ids after it all
# new.  Each run ends when its reconnects are used up (exit 3, outputs
# kept).  About 30 s.
#   sh tests/cli_live_rtsp.sh BUILD_DIR      (from the repository root)
NAME=cli_live_rtsp
. "$(dirname "$0")/lib_cli.sh"
M="--weights $ROOT/tests/loaders/v8_f16.pt --imgsz 64 --threads 1 --device cpu --no-audio"

for c in ffmpeg ffprobe jq perl; do
    command -v $c >/dev/null 2>&1 || { skip all "$c not installed (sh tools/deps.sh)"; exit 0; }
done
if ! perl -e 'use Glib::Object::Introspection; Glib::Object::Introspection->setup(basename => "GstRtspServer",
        version => "1.0", package => "GstRtspServer")' 2>/dev/null; then
    skip all "Perl's Glib::Object::Introspection or gst-rtsp-server's introspection data missing (sh tools/deps.sh)"
    exit 0
fi
. "$ROOT/tests/lib_live.sh"

PORT=$((20000 + ($$ + 9973) % 20000))
URL=rtsp://127.0.0.1:$PORT/live
PIDS=""
trap 'kill_all; rm -rf "$T"' EXIT

# rtsp_up TRANSPORT: the server on PORT for TRANSPORT (tcp or udp), waited
# for (up to 10 s); its pid in SRV
rtsp_up() {
    : >"$T/rtsp.log"
    perl "$ROOT/tests/rtsp_server.pl" "$PORT" "$1" >"$T/rtsp.log" 2>&1 &
    SRV=$!
    PIDS="$PIDS $SRV"
    i=0
    while [ $i -lt 100 ] && ! grep -q ready "$T/rtsp.log"; do
        sleep 0.1
        i=$((i + 1))
    done
}

# gap_ids FILE: "BEFORE AFTER MAX_BEFORE TRACKS_ENDED": the track ids of the
# last frame before the first reconnect event, those of the 5 frames after
# it (comma-separated, "" when none), the highest id before it, and the
# event's tracks_ended
gap_ids() {
    jq -rs '(map(has("event")) | index(true)) as $e
        | [.[1:$e][] | select(has("frame"))] as $pre
        | ($pre | last | [.detections[] | .track_id // -1 | select(. >= 0)] | unique) as $before
        | ([$pre[] | .detections[] | .track_id // -1] | max) as $max
        | ([.[$e + 1:$e + 6][] | .detections[] | .track_id // -1 | select(. >= 0)] | unique) as $after
        | "\($before | join(",")) \($after | join(",")) \($max) \(.[$e].event.tracks_ended)"' "$1"
}

# restart_run DIR TRANSPORT UP ARGS...: infer on the server over
# TRANSPORT; the server killed after UP s, back 1 s later, killed for good
# UP s after that
restart_run() {
    dir=$1 tr=$2 up=$3
    shift 3
    # BoT-SORT: its tracks start from 0.25 and are confirmed on their second frame, so the synthetic weights'
    # boxes on the test pattern are tracked (the default, TrackTrack, starts none below 0.7)
    infer_bg --out "$dir" --rtsp-transport "$tr" --track --tracker botsort --max-reconnects 3 "$@" "$URL"
    sleep "$up"
    stop $SRV
    sleep 1
    rtsp_up "$tr"
    sleep "$up"
    stop $SRV
    finish 30
}

# 1. a transport the server refuses: never up (exit 3)
rtsp_up tcp
run udp_refused 3 $M --out "$T/n" --rtsp-transport udp --stall-timeout 3 "$URL" &&
    if [ -e "$T/n/live.jsonl" ]; then fail udp_refused "live.jsonl written"
    elif ! grep -q "cannot open" "$T/err"; then fail udp_refused "$(cat "$T/err")"
    else pass udp_refused; fi

# 2. TCP: a server restart, a short gap: the tracks go on
restart_run "$T/tcp" tcp 3 --track-buffer 90 --stall-timeout 2
if [ $RC -ne 3 ]; then fail tcp "exit $RC, want 3 (reconnects used up): $(head -c 400 "$T/err")"
elif ! c=$(check "$T/tcp/live.jsonl" 1); then fail tcp "$c"
elif [ "$(frames_of "$c")" -lt 75 ]; then fail tcp "too few frames in 6 s of 25 fps: $c"
elif ! ffprobe -v error "$T/tcp/live.mp4"; then fail tcp "live.mp4 does not play"
else
    pass tcp
    set -- $(gap_ids "$T/tcp/live.jsonl")
    kept=""
    for id in $(echo "$1" | tr , ' '); do
        case ",$2," in *",$id,"*) kept="$kept $id" ;; esac
    done
    if [ "${4:-}" != false ]; then fail tracks_short_gap "tracks_ended is ${4:-missing}, want false"
    elif [ -z "$kept" ]; then fail tracks_short_gap "no track of the frame before the gap ($1) after it (${2:-none})"
    else pass tracks_short_gap; fi
fi

# 3. UDP: the same restart, found by the stall timeout (3 s: over UDP this
# server pauses about 1.5 s after the first second of a session); --track-buffer 5
# makes it a long gap: every track ends, the ids after it are new
rtsp_up udp
restart_run "$T/udp" udp 5 --track-buffer 5 --stall-timeout 3
if [ $RC -ne 3 ]; then fail udp "exit $RC, want 3 (reconnects used up): $(head -c 400 "$T/err")"
elif ! c=$(check "$T/udp/live.jsonl" 1); then fail udp "$c"
elif [ "$(frames_of "$c")" -lt 75 ]; then fail udp "too few frames in 10 s of 25 fps: $c"
else
    pass udp
    set -- $(gap_ids "$T/udp/live.jsonl")
    old=""
    for id in $(echo "$2" | tr , ' '); do [ "$id" -le "$3" ] && old="$old $id"; done
    if [ "${4:-}" != true ]; then fail tracks_long_gap "tracks_ended is ${4:-missing}, want true"
    elif [ -z "$2" ]; then fail tracks_long_gap "no track in the 5 frames after the gap"
    elif [ -n "$old" ]; then fail tracks_long_gap "ids from before the gap (up to $3) after it:$old"
    else pass tracks_long_gap; fi
fi

exit $FAILED
