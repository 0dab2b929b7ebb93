#!/bin/sh
# run.sh — runs the whole suite and prints one closing line
# "N passed, N failed, N skipped".
#   sh tests/run.sh BUILD [SAN_BUILD]
# First the source checks (tools/check-layout.sh: the include rule).
# BUILD: every C test program in BUILD/tests and every tests/cli_*.sh against
# BUILD's tools.  SAN_BUILD (AddressSanitizer + UBSan): the C test programs
# again, and the CLI scripts against its tools.  Each test prints one line
# PASS/FAIL/SKIP; a program that dies without printing its lines counts as a
# failure.  Then the fuzz targets' smoke run (tests/fuzz/run.sh).  Exits 1
# if anything failed.
set -u
cd "$(dirname "$0")/.." || exit 1
log=$(mktemp)
trap 'rm -f "$log"' EXIT

run() { # label command...
    label=$1
    shift
    out=$(mktemp)
    start=$(date +%s)
    "$@" >"$out" 2>&1
    rc=$?
    sed "s/^/[$label] /" "$out" | tee -a "$log" | grep -E '^\[[^]]*\] (PASS|FAIL|SKIP|  )' || true
    if [ $rc -ne 0 ] && ! grep -q '^FAIL' "$out"; then
        echo "[$label] FAIL $label: exited with status $rc without reporting a failure; its output:" | tee -a "$log"
        tail -n 20 "$out" | sed 's/^/    /'
    fi
    echo "[$label] ($(($(date +%s) - start)) s)"
    rm -f "$out"
}

# source checks, once: the include rule of docs/ARCHITECTURE.md
run layout sh tools/check-layout.sh

for build in "$@"; do
    san=""
    [ "$build" != "$1" ] && san=" asan"
    for t in "$build"/tests/*; do
        [ -x "$t" ] || continue
        case "$t" in *.d) continue ;; esac
        ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1 \
            run "$(basename "$t")$san" "$t"
    done
    for s in tests/cli_*.sh; do
        [ -f "$s" ] || continue
        ASAN_OPTIONS=detect_leaks=1 run "$(basename "$s" .sh)$san" sh "$s" "$build"
    done
done

# The fuzz targets (built by `make fuzz-build` into BUILD/fuzz): each replays
# its corpus and fuzzes briefly, once (SKIP without clang).
run fuzz sh tests/fuzz/run.sh "$1/fuzz" "${FUZZ_SMOKE_SECONDS:-8}" smoke

pass=$(grep -c '^\[[^]]*\] PASS' "$log")
fail=$(grep -c '^\[[^]]*\] FAIL' "$log")
skip=$(grep -c '^\[[^]]*\] SKIP' "$log")
if [ "$fail" -gt 0 ]; then
    echo
    echo "failures:"
    grep '^\[[^]]*\] FAIL' "$log"
fi
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
