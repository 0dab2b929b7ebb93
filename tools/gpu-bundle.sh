#!/bin/sh
# gpu-bundle.sh — what `make gpu-bundle` runs: builds the GPU check's programs
# with CUDA (libstrix linked statically into each) and packs them, with what
# they read, into BUILD/strix-gpu-bundle.tar.gz for a machine that has only
# the NVIDIA driver and the CUDA toolkit (no -dev packages, no network):
#
#   strix-gpu/BUNDLE                  commit, build settings, this list
#   strix-gpu/tools/gpu-check.sh      the one command (sees BUNDLE: builds nothing)
#   strix-gpu/perf/gpu_report.sh      its report (sh + awk)
#   strix-gpu/tools/reference/gpu_peers.py, make_goldens.py   the optional peers
#   strix-gpu/weights/*.yaml          the model YAMLs the programs read
#   strix-gpu/build/tests/test_cuda_ops, build/perf/gpu_bench, build/perf/cuda/conv_lab,
#                                     build/mkweights
#   strix-gpu/lib/                    the shared libraries they need that such a
#                                     machine may lack (libyaml, libstb, libgomp,
#                                     libstdc++, ...); not glibc's, not the
#                                     driver's (libcuda), not the toolkit's
#                                     (libcudart, libcublas: same major version
#                                     there, and too large to carry)
#
#   sh tools/gpu-bundle.sh [BUILD]     (default build; CUDA_ARCHS as for make)
# On the GPU machine: tar xzf strix-gpu-bundle.tar.gz && strix-gpu/tools/gpu-check.sh
# Exit 9 without nvcc here (one line); 1 when the build fails.
set -eu
cd "$(dirname "$0")/.."
build=${1:-build}
command -v nvcc >/dev/null 2>&1 || { echo "gpu-bundle: nvcc not found: building the bundle needs the CUDA toolkit on this machine" >&2; exit 9; }
obj=$build/gpu-bundle
mkdir -p "$build"
progs="$obj/tests/test_cuda_ops $obj/perf/gpu_bench $obj/perf/cuda/conv_lab $obj/mkweights"
archs=${CUDA_ARCHS:-}
# shellcheck disable=SC2086 # $progs: words
make -j"$(nproc 2>/dev/null || echo 2)" CUDA=1 BUILD="$obj" ${archs:+CUDA_ARCHS="$archs"} $progs >"$build/gpu-bundle.log" 2>&1 ||
    { echo "gpu-bundle: the CUDA build failed: see $build/gpu-bundle.log" >&2; exit 1; }

stage=$build/gpu-bundle-stage
rm -rf "$stage"
dst=$stage/strix-gpu
mkdir -p "$dst/tools/reference" "$dst/perf" "$dst/weights" "$dst/build/tests" "$dst/build/perf/cuda" "$dst/lib"
cp -p tools/gpu-check.sh "$dst/tools/"
cp -p perf/gpu_report.sh "$dst/perf/"
cp -p tools/reference/gpu_peers.py tools/reference/make_goldens.py "$dst/tools/reference/"
cp -p weights/*.yaml "$dst/weights/"
cp -p "$obj/tests/test_cuda_ops" "$dst/build/tests/"
cp -p "$obj/perf/gpu_bench" "$dst/build/perf/"
cp -p "$obj/perf/cuda/conv_lab" "$dst/build/perf/cuda/"
cp -p "$obj/mkweights" "$dst/build/"
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libutil\.|libresolv\.|libcuda\.|libnvidia-|libcudart|libcublas|libcublasLt)'
for p in $progs; do
    ldd "$p" | awk '/=> \// { print $1, $3 }'
done | sort -u | while read -r name path; do
    if ! printf '%s\n' "$name" | grep -Eq "$skip"; then cp -pL "$path" "$dst/lib/$name"; fi
done
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit (with uncommitted changes)"
{
    echo "strix GPU bundle: run tools/gpu-check.sh from this directory (see perf/README.md of the repository)"
    echo "commit: $commit"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm), $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/CUDA \1/p'), archs ${archs:-Makefile default}"
    echo "needs there: the NVIDIA driver, the CUDA toolkit's libcudart/libcublas (same major version) and compute-sanitizer"
    echo "contents:"
    (cd "$stage" && find strix-gpu -type f | sort)
} >"$dst/BUNDLE"
tar czf "$build/strix-gpu-bundle.tar.gz" -C "$stage" strix-gpu
rm -rf "$stage"
echo "gpu-bundle: $build/strix-gpu-bundle.tar.gz ($(du -k "$build/strix-gpu-bundle.tar.gz" | cut -f1) KiB):"
tar tzvf "$build/strix-gpu-bundle.tar.gz" | awk '{ printf "  %10s  %s\n", $3, $6 }'
