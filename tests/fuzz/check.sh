#!/bin/sh
# check.sh — exits 0 when clang can build libFuzzer targets with ASan and
# UBSan here; otherwise prints why on one line and exits 1.
#   sh tests/fuzz/check.sh [CC]        (CC default: clang)
cc=${1:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
    echo "$cc not found (make deps installs clang and libclang-rt-dev)"
    exit 1
fi
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return 0; }\n' >"$tmp/t.c"
if ! "$cc" -fsanitize=fuzzer,address,undefined "$tmp/t.c" -o "$tmp/t" >"$tmp/log" 2>&1; then
    echo "$cc cannot link -fsanitize=fuzzer,address,undefined (the libFuzzer runtime, libclang-rt-dev, is missing?): $(head -c 200 "$tmp/log" | tr '\n' ' ')"
    exit 1
fi
exit 0
