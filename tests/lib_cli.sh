# lib_cli.sh — shared set-up of the infer CLI test scripts, sourced (not run:
# tests/run.sh runs only tests/cli_*.sh).  Before sourcing, set NAME (the
# test-name prefix, e.g. cli_video) and pass the script's arguments; it sets
# B (build dir), ROOT, DATA (sample media), YAML, a temporary directory T
# removed on exit, FAILED, pass/fail/skip printing one line per test,
# skip_all, and run (below).
set -u
B=${1:?usage: sh tests/$NAME.sh BUILD_DIR}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${STRIX_DATA:-$ROOT/../shared/data}
YAML=$ROOT/weights/yolov8.yaml
T=$(mktemp -d "${TMPDIR:-/tmp}/strix_$NAME.XXXXXX") || exit 1
trap 'rm -rf "$T"' EXIT
trap 'exit 130' INT TERM
FAILED=0

pass() { echo "PASS ${NAME}_$1"; }
fail() { echo "FAIL ${NAME}_$1: $2"; FAILED=1; }
skip() { echo "SKIP ${NAME}_$1: $2"; }
# skip_all REASON: every test the script names in ALL skipped for REASON, and
# the script ends (a missing tool or fixture that all of them need)
skip_all() {
    for t in $ALL; do skip "$t" "$1"; done
    exit 0
}

# run NAME WANT_RC ARGS...: infer with stdout/stderr in $T/out, $T/err; a
# failure of test NAME when the exit status is not WANT_RC.
run() {
    name=$1
    want=$2
    shift 2
    "$B/infer" "$@" >"$T/out" 2>"$T/err"
    rc=$?
    if [ "$rc" -ne "$want" ]; then
        # a short stderr whole; a long one (progress lines first) by its start and its end
        if [ "$(wc -c <"$T/err")" -le 800 ]; then
            fail "$name" "exit status $rc, want $want; stderr: $(cat "$T/err")"
        else
            fail "$name" "exit status $rc, want $want; stderr: $(head -c 300 "$T/err") ... $(tail -c 500 "$T/err")"
        fi
        return 1
    fi
    return 0
}
