#!/bin/sh
# cli_prometheus.sh — the worker's metrics read by a real Prometheus
# (Debian's prometheus, installed by tools/deps.sh): the test starts
# Prometheus on localhost with a generated configuration scraping the
# worker's --metrics-port every second, runs a worker over a clip, and reads
# strix_frames_done_total back through Prometheus' HTTP query API (a value
# in 1..the stream's frames; the item is a live MPEG-TS stream in a FIFO,
# read with --live, so the worker runs for the stream's 6 s however fast
# the machine), and the count of the live latency histogram
# strix_frame_latency_seconds likewise; the --metrics-file written beside
# it ends with every frame and item counted, every frame in the histogram.
# SKIPs, with the reason, where Prometheus or curl is not installed or
# Prometheus cannot start here.
#   sh tests/cli_prometheus.sh BUILD_DIR
NAME=cli_prometheus
. "$(dirname "$0")/lib_cli.sh"

t=scrape_frames
PD=$T/prom
cleanup() {
    [ -n "${prom:-}" ] && kill "$prom" 2>/dev/null && wait "$prom" 2>/dev/null
    [ -n "${wpid:-}" ] && kill "$wpid" 2>/dev/null && wait "$wpid" 2>/dev/null
    [ -n "${ffpid:-}" ] && kill "$ffpid" 2>/dev/null
    rm -rf "$T"
}
trap cleanup EXIT

for c in prometheus curl ffmpeg; do
    command -v $c >/dev/null 2>&1 || { skip $t "$c not installed (sh tools/deps.sh)"; exit 0; }
done
[ -x "$B/infer" ] && [ -x "$B/mkweights" ] || { skip $t "$B/infer or $B/mkweights is not built"; exit 0; }
W=$T/w.safetensors
"$B/mkweights" --model "$YAML" --scale n --seed 7 --out "$W" >/dev/null 2>&1 || { skip $t "mkweights failed"; exit 0; }
# the item is a live stream: MPEG-TS written in real time (-re) into a FIFO,
# so the worker runs for its 6 s whatever the machine's speed
command -v mkfifo >/dev/null 2>&1 || { skip $t "mkfifo not installed"; exit 0; }
FRAMES=30
mkfifo "$T/live.ts" || { skip $t "cannot make a FIFO in $T"; exit 0; }
echo "$T/live.ts" >"$T/m.txt"

# Prometheus first, scraping the port the worker will take (random ports: another run may hold some)
mkdir -p "$PD"
ready=0
for try in 1 2 3; do
    pport=$((20000 + ($$ * 13 + $(date +%s) * 11 + try * 211) % 40000))
    mport=$((pport + 1))
    cat >"$PD/prometheus.yml" <<EOF
global:
  scrape_interval: 1s
  scrape_timeout: 1s
scrape_configs:
  - job_name: strix
    static_configs:
      - targets: ["127.0.0.1:$mport"]
EOF
    prometheus --config.file="$PD/prometheus.yml" --storage.tsdb.path="$PD/data" \
        --web.listen-address="127.0.0.1:$pport" >"$PD/log" 2>&1 &
    prom=$!
    n=0
    while [ $n -lt 100 ] && kill -0 $prom 2>/dev/null && ! curl -sf "http://127.0.0.1:$pport/-/ready" >/dev/null 2>&1; do
        sleep 0.2
        n=$((n + 1))
    done
    if curl -sf "http://127.0.0.1:$pport/-/ready" >/dev/null 2>&1; then
        ready=1
        break
    fi
    kill $prom 2>/dev/null
    wait $prom 2>/dev/null
    prom=""
done
if [ $ready = 0 ]; then
    skip $t "Prometheus did not become ready here: $(tail -n 2 "$PD/log" | tr '\n' ' ' | head -c 300)"
    exit 0
fi

ffmpeg -v error -nostdin -y -re -f lavfi -i "testsrc2=size=128x96:rate=5" -frames:v $FRAMES -c:v libx264 \
    -preset ultrafast -tune zerolatency -f mpegts "$T/live.ts" 2>"$T/fferr" &
ffpid=$!
"$B/infer" --model "$YAML" --scale n --weights "$W" --imgsz 64 --threads 1 --device cpu --preset ultrafast \
    --live --manifest "$T/m.txt" --out "$T/out" --metrics-port $mport --metrics-file "$T/out/strix.prom" \
    >"$T/out.txt" 2>"$T/err" &
wpid=$!
got="" lat=""
# query NAME: the value Prometheus has for NAME now ("" when none)
query() {
    curl -s "http://127.0.0.1:$pport/api/v1/query?query=$1" | sed -n 's/.*"value":\[[0-9.]*,"\([0-9]*\)"\].*/\1/p'
}
n=0 # until Prometheus has a sample with frames in it, and one of the live latency histogram
while [ $n -lt 300 ]; do
    got=$(query strix_frames_done_total)
    lat=$(query strix_frame_latency_seconds_count)
    [ -n "$got" ] && [ "$got" -gt 0 ] && [ -n "$lat" ] && [ "$lat" -gt 0 ] && break
    kill -0 $wpid 2>/dev/null || break
    sleep 0.2
    n=$((n + 1))
done
wait $wpid
rc=$?
wpid=""
wait $ffpid
if [ $rc -ne 0 ]; then fail $t "the worker exited with $rc: $(head -c 300 "$T/err")"
elif [ -z "$got" ] || [ "$got" -lt 1 ] || [ "$got" -gt $FRAMES ]; then
    fail $t "Prometheus' query API gave strix_frames_done_total '$got' (want 1..$FRAMES; the worker ended first?)"
elif [ -z "$lat" ] || [ "$lat" -lt 1 ] || [ "$lat" -gt $FRAMES ]; then
    fail $t "Prometheus' query API gave strix_frame_latency_seconds_count '$lat' (want 1..$FRAMES)"
elif ! grep -q "^strix_frame_latency_seconds_count $FRAMES\$" "$T/out/strix.prom"; then
    fail $t "the metrics file's latency histogram does not count the $FRAMES frames: $(grep latency_seconds_count "$T/out/strix.prom")"
elif ! grep -q "^strix_frames_done_total $FRAMES\$" "$T/out/strix.prom" || ! grep -q "^strix_items_done_total 1\$" "$T/out/strix.prom"; then
    fail $t "the metrics file does not end with $FRAMES frames and 1 item: $(grep -E '^strix_(frames|items)_done' "$T/out/strix.prom" | tr '\n' ' ')"
else pass $t; fi
exit $FAILED
