# lib_live.sh — what the live-source test scripts share, sourced after
# lib_cli.sh (not run: tests/run.sh runs only tests/cli_*.sh): local stream
# servers they start and always kill, infer in the background with a time
# limit, and the JSON Lines checks (jq; nothing at test time needs Python).
# The caller sets M (the model options) and PIDS=""; its EXIT trap kills
# $PIDS (kill_all).

# kill_all: every server and infer this script started (stopped ones first woken)
kill_all() {
    # shellcheck disable=SC2086
    kill -CONT $PIDS 2>/dev/null
    # shellcheck disable=SC2086
    kill -KILL $PIDS 2>/dev/null
}

# serve SECONDS TARGET: a 160x120 25 fps H.264 MPEG-TS stream in real time
# to TARGET (an http:// URL it listens on, or a udp:// one it sends to) in
# the background; its pid in SRV
serve() {
    if [ "${2#http}" != "$2" ]; then listen="-listen 1"; else listen=""; fi
    # shellcheck disable=SC2086
    ffmpeg -v error -nostdin -re -f lavfi -i testsrc=size=160x120:rate=25 -t "$1" -c:v libx264 -preset ultrafast \
        -g 25 -pix_fmt yuv420p -f mpegts $listen "$2" >>"$T/srv.log" 2>&1 &
    SRV=$!
    PIDS="$PIDS $SRV"
}

# stop PID: a server ended (it may wait for a client that never comes)
stop() {
    kill -CONT "$1" 2>/dev/null
    kill -KILL "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}

# infer_bg ARGS...: infer in the background, stdout/stderr in $T/out, $T/err; its pid in RUN
infer_bg() {
    # shellcheck disable=SC2086
    "$B/infer" $M "$@" >"$T/out" 2>"$T/err" &
    RUN=$!
    PIDS="$PIDS $RUN"
}

# finish SECONDS: wait up to SECONDS for infer to end; its exit status in
# RC (124 and killed when it did not)
finish() {
    i=0
    while [ $i -lt $(($1 * 10)) ] && kill -0 $RUN 2>/dev/null; do
        sleep 0.1
        i=$((i + 1))
    done
    if kill -0 $RUN 2>/dev/null; then
        kill -KILL $RUN 2>/dev/null
        wait $RUN 2>/dev/null
        RC=124
    else
        wait $RUN
        RC=$?
    fi
}

# check FILE [EVENTS [HOLES]]: every line of FILE whole JSON, the file
# ending in a newline; the header first; frames 0, 1, 2, ... (HOLES=1:
# increasing, --realtime drops some) with increasing pts; at least EVENTS
# reconnect events (default 0), each naming the frame after it.  Prints
# "frames=N events=N reasons=..." or the problem (and fails).
check() {
    if [ ! -s "$1" ]; then echo "$1: missing or empty"; return 1; fi
    if [ "$(tail -c 1 "$1" | od -An -c | tr -d ' ')" != '\n' ]; then
        echo "$1 does not end in a newline (a torn line): $(tail -c 80 "$1")"
        return 1
    fi
    jq -rs --argjson want "${2:-0}" --argjson holes "${3:-0}" '
        if (.[0] | type) != "object" or (.[0] | has("header") | not) then error("no header line first") else . end
        | reduce .[1:][] as $r ({n: 0, ev: 0, why: [], pts: -1, last: -1, next: null, err: null};
            if .err then .
            elif .next != null and ($r | has("frame")) and $r.frame != .next then
                .err = "the event names frame \(.next), frame \($r.frame) follows"
            elif ($r | has("event")) then
                if $r.event.type != "reconnect" or $r.event.next_frame <= .last
                   or ($holes == 0 and $r.event.next_frame != .last + 1)
                   or ($r.event.lost_at | length) == 0 or ($r.event.back_at | length) == 0
                then .err = "bad event \($r.event | tojson) after frame \(.last)"
                else .ev += 1 | .why += [$r.event.reason] | .next = $r.event.next_frame end
            elif ($r.frame <= .last) or ($holes == 0 and $r.frame != .last + 1) then
                .err = "frame \($r.frame) after frame \(.last)"
            elif $r.pts <= .pts then .err = "frame \($r.frame): pts \($r.pts) not after \(.pts)"
            else .n += 1 | .last = $r.frame | .pts = $r.pts | .next = null end)
        | if .err then error(.err)
          elif .ev < $want then error("\(.ev) reconnect events, want \($want)")
          else "frames=\(.n) events=\(.ev) reasons=\(.why | join(","))" end' "$1" 2>&1
}

# frames_of CHECK_OUTPUT: the N of frames=N
frames_of() { echo "$1" | sed -n 's/^frames=\([0-9]*\).*/\1/p'; }

# frames_in FILE: the frames ffprobe decodes from FILE ("" when it cannot
# read it; an MPEG-TS lists its streams under its program too: the first)
frames_in() {
    ffprobe -v error -count_frames -select_streams v:0 -show_entries stream=nb_read_frames -of csv=p=0 "$1" \
        2>/dev/null | sed -n 1p | tr -d '[:space:]'
}
