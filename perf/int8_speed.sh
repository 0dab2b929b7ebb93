#!/bin/sh
# int8_speed.sh — strix int8 against strix fp32: same machine, same synthetic
# weights (perf/bench --seed), same inputs, same thread count.  perf/bench runs
# with --precision fp32 and --precision int8 (--calibrate) alternately (fp32,
# int8, fp32, int8, ...), REPS pairs per thread count, so that load from
# elsewhere falls on both alike.  Each run
# appends its JSON line (with "precision") to OUT/int8_speed.jsonl and its
# table to OUT/int8_speed.txt; the summary (median images/s of each, the ratio
# of the medians, every pair's ratio, and the fastest single run of each: on a
# loaded machine the least disturbed) goes to stdout and OUT/int8_summary.txt.
#   sh perf/int8_speed.sh OUT [REPS [THREADS...]]     (defaults: 5, "1 2")
# Environment: BUILD (default build), STRIX_DATA (calibration images: dog and
# horses of ../shared/data), MODEL (default weights/yolov8.yaml), SCALE (n),
# RUNS (timed runs per bench, default 20).
set -eu
cd "$(dirname "$0")/.."
[ $# -ge 1 ] || { echo "usage: sh perf/int8_speed.sh OUT [REPS [THREADS...]]" >&2; exit 2; }
out=$1
reps=${2:-5}
[ $# -ge 2 ] && shift 2 || shift $#
threads=${*:-1 2}
B=${BUILD:-build}
D=${STRIX_DATA:-../shared/data}
model=${MODEL:-weights/yolov8.yaml}
scale=${SCALE:-n}
runs=${RUNS:-20}
calib=$D/dog.jpg,$D/horses.jpg
mkdir -p "$out"
jl=$out/int8_speed.jsonl
for t in $threads; do
    r=1
    while [ "$r" -le "$reps" ]; do
        for p in fp32 int8; do
            set -- "$B/perf/bench" --model "$model" --scale "$scale" --threads "$t" --runs "$runs" --no-roofline \
                --json "$jl" --label "$p pair $r"
            set -- "$@" --precision "$p"
            [ "$p" = int8 ] && set -- "$@" --calibrate "$calib"
            { echo "\$ $*"; echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"; "$@"; echo; } >>"$out/int8_speed.txt" 2>&1
        done
        r=$((r + 1))
    done
done
# summary: per thread count, the median images/s of each precision and the
# ratio of each fp32/int8 pair (lines alternate fp32, int8)
awk '
function num(key,   m) { return match($0, "\"" key "\": [0-9.]+") ? substr($0, RSTART + length(key) + 4, RLENGTH - length(key) - 4) + 0 : -1 }
function str(key) { return match($0, "\"" key "\": \"[^\"]*\"") ? substr($0, RSTART + length(key) + 5, RLENGTH - length(key) - 6) : "" }
function median(a, n,   i, j, t) {
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] > a[j]; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
{
    t = num("threads"); p = str("precision"); v = num("images_per_s"); mn = num("min_ms")
    if (p == "fp32") { nf[t]++; f[t, nf[t]] = v; last[t] = v; if (!(t in bf) || mn < bf[t]) bf[t] = mn }
    else if (p == "int8") { ni[t]++; q[t, ni[t]] = v; if (last[t] > 0) { np[t]++; pr[t, np[t]] = v / last[t] }
                            if (!(t in bi) || mn < bi[t]) bi[t] = mn }
    seen[t] = 1
}
END {
    for (t in seen) {
        for (i = 1; i <= nf[t]; i++) a[i] = f[t, i]; mf = median(a, nf[t])
        for (i = 1; i <= ni[t]; i++) b[i] = q[t, i]; mi = median(b, ni[t])
        s = ""; lo = 1e9; hi = 0
        for (i = 1; i <= np[t]; i++) { c[i] = pr[t, i]; s = s sprintf(" %.2f", pr[t, i]); if (pr[t, i] < lo) lo = pr[t, i]; if (pr[t, i] > hi) hi = pr[t, i] }
        printf "threads %d: fp32 median %.2f images/s (%d benches), int8 median %.2f images/s (%d benches): int8 / fp32 = %.2fx; per pair:%s (median %.2f, range %.2f-%.2f); fastest run fp32 %.1f ms, int8 %.1f ms: %.2fx\n", t, mf, nf[t], mi, ni[t], mi / mf, s, median(c, np[t]), lo, hi, bf[t], bi[t], bf[t] / bi[t]
    }
}' "$jl" | sort | tee "$out/int8_summary.txt"
