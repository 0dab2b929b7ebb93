#!/bin/sh
# check-layout.sh — the include rule of docs/ARCHITECTURE.md, enforced: each
# folder's files may include only the folders (or single headers) its rule
# lists.  Every `#include "..."` of every C, CUDA and header file under
# engine/, kernels/, loaders/, tools/, tests/ and perf/ is resolved as the
# compiler does (the including file's folder, then the Makefile's -I folders)
# and checked.  Prints one PASS line, or one FAIL line per include that
# breaks the rule or resolves to no file of the tree.  Exit 1 on a failure.
#   sh tools/check-layout.sh
set -u
cd "$(dirname "$0")/.." || exit 1

# FOLDER: what its files may include (a folder: the headers directly in it).
# A folder without a line of its own takes its parent's rule.
rules='
engine: engine engine/cpu engine/cuda kernels/kernels.h loaders/model_yaml.h loaders/safetensors.h loaders/fileread.h loaders/checkpoint.h
engine/cpu: engine/cpu engine
engine/cuda: engine/cuda engine kernels/kernels.h
kernels: kernels engine/ops.h engine/tensor.h
loaders: loaders engine/strix.h engine/util.h engine/tensor.h
engine/analytics: engine/analytics engine/strix.h engine/util.h engine/tensor.h engine/tasks.h
engine/eval: engine/eval engine engine/cpu engine/analytics loaders/safetensors.h loaders/fileread.h
tools: tools tools/infer engine/strix.h engine/util.h engine/tasks.h engine/analytics engine/eval loaders
tests: tests tests/fuzz engine engine/cpu engine/cuda engine/analytics engine/eval kernels loaders tools tools/infer
perf: perf perf/cuda engine engine/cpu engine/cuda engine/analytics engine/eval kernels loaders tools
'
# the compiler's search path after the including file's own folder (Makefile)
search='engine engine/analytics engine/eval loaders . tests tests/fuzz tools/infer'

files=$(find engine kernels loaders tools tests perf -type f \
    \( -name '*.c' -o -name '*.h' -o -name '*.cu' -o -name '*.cuh' \) | sort)
# shellcheck disable=SC2086
printf '%s\n' $files | awk -v rules="$rules" -v search="$search" '
function exists(p,   r) { r = (getline line < p); if (r >= 0) close(p); return r >= 0 }
function norm(p,   n, i, parts, out, k) {
    n = split(p, parts, "/"); k = 0
    for (i = 1; i <= n; i++) {
        if (parts[i] == "." || parts[i] == "") continue
        if (parts[i] == "..") { if (k) k--; continue }
        out[++k] = parts[i]
    }
    p = ""
    for (i = 1; i <= k; i++) p = p (i > 1 ? "/" : "") out[i]
    return p
}
function dir(p) { return p ~ /\// ? substr(p, 1, match(p, /\/[^\/]*$/) - 1) : "." }
function rule_for(d) {
    while (!(d in allow)) { if (d !~ /\//) return ""; d = dir(d) }
    return d
}
BEGIN {
    n = split(rules, lines, "\n")
    for (i = 1; i <= n; i++) {
        if (lines[i] !~ /:/) continue
        k = substr(lines[i], 1, index(lines[i], ":") - 1)
        allow[k] = " " substr(lines[i], index(lines[i], ":") + 2) " "
    }
    ns = split(search, sp, " ")
    bad = 0; checked = 0
}
{
    f = $0; fd = dir(f); r = rule_for(fd)
    ln = 0
    while ((getline line < f) > 0) {
        ln++
        if (line !~ /^[ \t]*#[ \t]*include[ \t]*"/) continue
        inc = line; sub(/^[^"]*"/, "", inc); sub(/".*$/, "", inc)
        target = ""
        if (exists(fd "/" inc)) target = norm(fd "/" inc)
        for (i = 1; i <= ns && target == ""; i++)
            if (exists(sp[i] "/" inc)) target = norm(sp[i] "/" inc)
        if (target == "") {
            printf "FAIL layout: %s:%d includes \"%s\", which is no file of the tree\n", f, ln, inc
            bad++; continue
        }
        checked++
        if (r == "") {
            printf "FAIL layout: %s:%d: folder %s has no rule in tools/check-layout.sh\n", f, ln, fd
            bad++; continue
        }
        td = dir(target)
        if (index(allow[r], " " td " ") || index(allow[r], " " target " ")) continue
        printf "FAIL layout: %s:%d includes %s; %s/ may include only:%s(docs/ARCHITECTURE.md)\n", f, ln, target, r, allow[r]
        bad++
    }
    close(f)
}
END {
    if (!bad) printf "PASS layout: %d includes of %d files follow the include rule\n", checked, NR
    exit bad ? 1 : 0
}'
