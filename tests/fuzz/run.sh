#!/bin/sh
# run.sh — runs the libFuzzer targets built by `make fuzz-build`, one after
# the other, each on one core (nice), printing one PASS/FAIL/SKIP line per
# check.
#   sh tests/fuzz/run.sh FUZZ_BUILD SECONDS [smoke]
# For each target NAME (FUZZ_BUILD/bin/NAME):
#   fuzz_NAME_corpus  replays every file in tests/fuzz/corpus/NAME and those
#                     FUZZ_BUILD/bin/seeds_NAME writes, when it exists (the
#                     seeds and the inputs of past crashes: regression tests)
#   fuzz_NAME         fuzzes for SECONDS, starting from that corpus; a crash,
#                     leak, UB report or a 10 s input fails it, and the input
#                     is kept as FUZZ_BUILD/crashes/NAME-*.
# New inputs go to FUZZ_BUILD/corpus/NAME (kept between runs), or to a
# temporary directory with `smoke`, so tests/fuzz/corpus only changes by hand.
set -u
B=${1:?usage: sh tests/fuzz/run.sh FUZZ_BUILD SECONDS [smoke]}
secs=${2:?usage: sh tests/fuzz/run.sh FUZZ_BUILD SECONDS [smoke]}
mode=${3:-}
cd "$(dirname "$0")/../.." || exit 1
FAILED=0
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

if ! why=$(sh tests/fuzz/check.sh); then
    echo "SKIP fuzz: $why"
    exit 0
fi
for src in tests/fuzz/fuzz_*.c; do
    name=$(basename "$src" .c)
    t=${name#fuzz_}
    bin=$B/bin/$name
    if [ ! -x "$bin" ]; then
        echo "SKIP $name: $bin not built (make fuzz-build)"
        continue
    fi
    seeds=$tmp/seeds-$t
    mkdir -p "$B/crashes" "$seeds"
    [ -d tests/fuzz/corpus/$t ] && cp tests/fuzz/corpus/$t/* "$seeds/"
    if [ -x "$B/bin/seeds_$t" ] && ! "$B/bin/seeds_$t" "$seeds"; then
        echo "FAIL ${name}_corpus: $B/bin/seeds_$t could not write its seeds"
        FAILED=1
    elif [ -z "$(ls "$seeds" 2>/dev/null)" ]; then
        echo "FAIL ${name}_corpus: no seeds in tests/fuzz/corpus/$t or from seeds_$t (every target needs seeds)"
        FAILED=1
    elif nice "$bin" -timeout=10 "$seeds"/* >"$tmp/log" 2>&1; then
        echo "PASS ${name}_corpus ($(ls "$seeds" | wc -l) inputs)"
    else
        echo "FAIL ${name}_corpus: $(grep -m1 -E 'ERROR|runtime error|ALARM' "$tmp/log")"
        sed 's/^/    /' "$tmp/log" | tail -n 30
        FAILED=1
    fi
    if [ "$mode" = smoke ]; then work=$tmp/corpus-$t; else work=$B/corpus/$t; fi
    mkdir -p "$work"
    if nice "$bin" -max_total_time="$secs" -timeout=10 -print_final_stats=1 \
        -artifact_prefix="$B/crashes/$t-" "$work" "$seeds" >"$tmp/log" 2>&1; then
        runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/log")
        cov=$(grep -E '^#[0-9]+' "$tmp/log" | tail -n 1 | grep -oE 'cov: [0-9]+ ft: [0-9]+')
        echo "PASS $name ($runs runs in ${secs} s, $cov)"
    else
        echo "FAIL $name: $(grep -m1 -E 'ERROR|runtime error|ALARM' "$tmp/log"); input kept in $B/crashes/"
        sed 's/^/    /' "$tmp/log" | grep -v '^    #' | tail -n 40
        FAILED=1
    fi
done
exit $FAILED
