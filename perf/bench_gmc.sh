#!/bin/sh
# bench_gmc.sh — strix's camera-motion compensation beside its peer, same
# machine, same clip: perf/bench_track (strix: "gmc alone" for each
# instruction-set build this CPU runs, BoT-SORT + GMC, the trackers) and
# tools/reference/gmc_peer.py (Ultralytics' GMC(method="sparseOptFlow") on
# OpenCV, cv2.setNumThreads(1)), alternately, REPS times per size (strix
# first in odd repetitions, the peer first in even ones, so that load from
# elsewhere falls on both alike).  Raw logs in OUT: strix_WxH.log and
# peer_WxH.log (each run's command and `uptime` before and after);
# the first repetition also writes each frame's transform of both
# (strix_H_WxH.txt from the widest build, peer_H_WxH.txt) and the peer
# compares them (its "transforms, strix vs OpenCV" line).  The summary (per
# size and configuration, the median of the per-run medians of CPU ms/frame,
# each run's median, and the wall-time median) goes to stdout and
# OUT/summary.txt.
#   sh perf/bench_gmc.sh OUT [REPS [SIZES...]]     (defaults: 3, "1920x1080 1280x720")
# Environment: BUILD (default build: needs BUILD/perf/bench_track), PYTHON
# (default /opt/strix-ref/bin/python: needs ultralytics and cv2, perf/setup.sh),
# FRAMES (default 300) and RUNS (default 5): both programs' --frames, --runs.
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: sh perf/bench_gmc.sh OUT [REPS [SIZES...]]" >&2; exit 2; }
out=$1
reps=${2:-3}
if [ $# -ge 2 ]; then shift 2; else shift $#; fi
sizes=${*:-1920x1080 1280x720}
B=${BUILD:-build}
py=${PYTHON:-/opt/strix-ref/bin/python}
frames=${FRAMES:-300}
runs=${RUNS:-5}
[ -x "$B/perf/bench_track" ] ||
    { echo "bench_gmc: $B/perf/bench_track missing: build it (make $B/perf/bench_track) or set BUILD" >&2; exit 3; }
"$py" -c "import cv2, ultralytics" 2>/dev/null ||
    { echo "bench_gmc: $py cannot import cv2 and ultralytics: run sh perf/setup.sh or set PYTHON" >&2; exit 3; }
mkdir -p "$out"
# run LOG COMMAND...: the command and its output, between two uptime lines
run() {
    log=$1
    shift
    { echo "\$ $*"; echo "uptime before: $(uptime)"; } >>"$log"
    rc=0
    "$@" >>"$log" 2>&1 || rc=$?
    { echo "uptime after: $(uptime)"; echo; } >>"$log"
    [ "$rc" = 0 ] || { echo "bench_gmc: $* exited with status $rc (its output: $log)" >&2; exit 1; }
}
for s in $sizes; do
    w=${s%x*}
    h=${s#*x}
    r=1
    while [ "$r" -le "$reps" ]; do
        set -- --width "$w" --height "$h" --frames "$frames" --runs "$runs"
        st="$B/perf/bench_track"
        pe="tools/reference/gmc_peer.py"
        if [ "$r" = 1 ]; then
            run "$out/strix_$s.log" "$st" "$@" --transforms "$out/strix_H_$s.txt"
            run "$out/peer_$s.log" "$py" "$pe" "$@" --transforms "$out/peer_H_$s.txt" --compare "$out/strix_H_$s.txt"
        elif [ $((r % 2)) = 0 ]; then
            run "$out/peer_$s.log" "$py" "$pe" "$@"
            run "$out/strix_$s.log" "$st" "$@"
        else
            run "$out/strix_$s.log" "$st" "$@"
            run "$out/peer_$s.log" "$py" "$pe" "$@"
        fi
        r=$((r + 1))
    done
done
# summary: every "NAME ms/frame wall: median W ...;  cpu: median C ..." line
# of the logs, grouped by size and NAME in the order first seen
for s in $sizes; do
    for f in "$out/strix_$s.log" "$out/peer_$s.log"; do sed "s/^/$s	/" "$f"; done
done | awk -F'\t' '
function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
$2 ~ / ms\/frame wall: median / {
    name = $2; sub(/ +ms\/frame wall:.*/, "", name)
    k = $1 SUBSEP name
    if (!(k in n)) order[++nk] = k
    n[k]++
    split($2, a, "wall: median "); wall[k, n[k]] = a[2] + 0
    split($2, a, "cpu: median "); cpu[k, n[k]] = a[2] + 0
}
$2 ~ /^transforms, strix vs OpenCV/ { tr[++nt] = $1 ": " $2 }
END {
    print "| size | configuration | CPU ms/frame, median of the runs'"'"' medians | each run'"'"'s CPU median " \
          "| wall ms/frame, median of medians |"
    print "|---|---|---|---|---|"
    for (i = 1; i <= nk; i++) {
        k = order[i]; split(k, p, SUBSEP); runs = ""
        for (j = 1; j <= n[k]; j++) {
            c[j] = cpu[k, j]; x[j] = wall[k, j]; runs = runs (j > 1 ? " / " : "") sprintf("%.3f", cpu[k, j])
        }
        printf "| %s | %s | %.3f | %s | %.3f |\n", p[1], p[2], median(c, n[k]), runs, median(x, n[k])
    }
    for (i = 1; i <= nt; i++) print tr[i]
}' | tee "$out/summary.txt"
