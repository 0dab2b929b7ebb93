# lib_cli.sh — shared set-up of the infer CLI test scripts, sourced (not run:
# tests/run.sh runs only tests/cli_*.sh).  Before sourcing, set NAME (the
# test-name prefix, e.g. cli_video) and pass the script's arguments; it sets
# B (build dir), ROOT, DATA (sample media), YAML, a temporary directory T
# removed on exit, FAILED, and pass/fail/skip printing one line per test.
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
