#!/bin/sh
# dist.sh — what `make dist` runs: the tools built with everything but glibc
# linked in (Makefile DIST=1: minimal static FFmpeg of tools/ffmpeg.sh,
# static libyaml/libjpeg/stb/libgomp, static CUDA runtime, cuBLAS opened at
# run time) and packed into
#
#   dist/strix-VERSION-linux-ARCH[-cudaMAJOR].tar.gz
#     bin/infer inspect mkweights moteval   the tools (with CUDA: infer only;
#                                           the others are the CPU-only build's)
#     bin/bench                             the model benchmark (perf/bench.c)
#     bin/gpu_bench test_cuda_ops           GPU timings and the GPU op tests (CUDA builds)
#                                           kernels: sm_75, sm_80, sm_90 code + compute_90 PTX (dist_archs)
#     weights/*.yaml                        the model YAMLs
#     README  LICENSE  licences/            how to run it; MIT + what is linked in (GPL-3 as a whole)
#     BUILD                                 commit, compiler, CUDA, FFmpeg configuration, sizes
#
# Environment: CC (CC=aarch64-linux-gnu-gcc for an aarch64 tarball), CUDA=0/1
# (default: 1 when nvcc is found and CC targets this machine), OPENMP,
# DIST_TARGETS (more targets of the same build, e.g. tests: not packed).
# The packed size is checked here: at most 25 MB with CUDA, 10 MB without
# (exit 1 above it, so a test of `make dist` catches growth).  Prints the
# tarball's path on its last line.
set -eu
cd "$(dirname "$0")/.."
cc=${CC:-cc}
arch=$($cc -dumpmachine | cut -d- -f1)
native=0
[ "$arch" = "$(uname -m)" ] && native=1
if [ -z "${CUDA:-}" ]; then
    CUDA=0
    [ $native = 1 ] && command -v nvcc >/dev/null 2>&1 && CUDA=1
fi
if [ "$CUDA" = 1 ] && [ $native = 0 ]; then
    echo "dist: CUDA=1 with a cross compiler ($cc): an $arch tarball is CPU-only here (CUDA=0)" >&2
    exit 2
fi
cross=""
[ $native = 1 ] || cross="$arch-linux-gnu-"
version=$(sed -n 's/^#define STRIX_VERSION "\(.*\)"/\1/p' engine/strix.h)
name=strix-$version-linux-$arch
limit_mb=10
# The tarball's CUDA programs carry machine code for sm_75, sm_80 and sm_90
# (and the Makefile's compute_90 PTX), not every architecture the Makefile
# builds: a cubin runs on every GPU of its major version with an equal or
# higher minor, so sm_86 and sm_89 cards (A10, L4, RTX 30/40) run the sm_80
# code (no kernel has code for sm_86 or sm_89 alone; sm_87 is Jetson, an
# aarch64 GPU).  Their own cubins would only re-schedule the same kernels,
# at several MB in each CUDA program.
dist_archs="75 80 90"
if [ "$CUDA" = 1 ]; then
    major=$(nvcc --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
    name=$name-cuda$major
    limit_mb=25
fi
# Every CUDA program carries all kernels for every target (~13 MB each):
# only infer and the GPU programs are CUDA builds; inspect, mkweights,
# moteval and bench come from the CPU-only build (build/dist-ARCH).
build=build/dist-${name#strix-"$version"-linux-}
cpu_build=build/dist-$arch
cpu_progs="$cpu_build/inspect $cpu_build/mkweights $cpu_build/moteval $cpu_build/perf/bench"
progs="$build/infer"
[ "$CUDA" = 1 ] && progs="$progs $build/perf/gpu_bench $build/tests/test_cuda_ops"

sysroot=""
if [ $native = 0 ]; then
    sysroot=$PWD/build/debroot/sysroot-$arch
    sh tools/debroot.sh sysroot "$arch" "$sysroot"
fi
sh tools/ffmpeg.sh build "$arch"
make_progs() { # BUILD CUDA TARGETS...
    b=$1 c=$2
    shift 2
    echo "dist: building $* (log $b.log)"
    if ! make -j"$(nproc 2>/dev/null || echo 2)" DIST=1 CC="$cc" CUDA="$c" CUDA_ARCHS="$dist_archs" ${OPENMP:+OPENMP=$OPENMP} \
            ${sysroot:+SYSROOT="$sysroot"} BUILD="$b" "$@" >"$b.log" 2>&1; then
        tail -n 20 "$b.log" >&2
        echo "dist: the build failed: see $b.log" >&2
        exit 1
    fi
}
# shellcheck disable=SC2086 # $progs, $cpu_progs: words
if [ "$CUDA" = 1 ]; then
    make_progs "$build" 1 $progs ${DIST_TARGETS:-}
    make_progs "$cpu_build" 0 $cpu_progs
else
    make_progs "$build" 0 $progs $cpu_progs ${DIST_TARGETS:-}
fi
progs="$progs $cpu_progs"

# Nothing but glibc (and the driver, opened at run time) may be needed.
for p in $progs; do
    extra=$(${cross}readelf -d "$p" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p' |
        grep -Ev '^(libc|libm|libdl|libpthread|librt|ld-linux[-a-z0-9_]*)\.so' || true)
    [ -z "$extra" ] || { echo "dist: $p needs $(echo $extra): it must link only glibc dynamically" >&2; exit 1; }
done

stage=$build/stage
rm -rf "$stage"
dst=$stage/$name
mkdir -p "$dst/bin" "$dst/weights" "$dst/licences"
for p in $progs; do ${cross}strip -o "$dst/bin/$(basename "$p")" "$p"; done
cp -p weights/*.yaml "$dst/weights/"
cp -p LICENSE "$dst/"
cp -p licences/* "$dst/licences/"
ffprefix=$(sh tools/ffmpeg.sh prefix "$arch")
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
[ -z "$(git status --porcelain --untracked-files=no 2>/dev/null)" ] || commit="$commit (with uncommitted changes)"
{
    echo "$name"
    echo "commit: $commit"
    echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -srm) with $($cc --version | head -n 1)"
    echo "glibc: $(ldd --version 2>/dev/null | head -n 1 | sed 's/.* //') or newer needed"
    if [ "$CUDA" = 1 ]; then
        archs=$(make -s --no-print-directory CUDA=1 CUDA_ARCHS="$dist_archs" print-cuda-archs | sed 's/ /, sm_/g')
        echo "CUDA: $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), kernels for sm_$archs;" \
             "needs an NVIDIA driver for CUDA $major and libcublas.so.$major (CUDA $major.x toolkit) at run time"
    fi
    echo "FFmpeg: $(ls build/ffmpeg/dl/*.dsc | sed 's|.*/ffmpeg_\(.*\)\.dsc|\1|'), configured with:"
    sh tools/ffmpeg.sh flags "$arch" | sed 's/^/  /'
    echo "FFmpeg first build: $(cat "$ffprefix/build-seconds" 2>/dev/null || echo '?') s on $(nproc) cores"
} >"$dst/BUILD"
sed "s/@NAME@/$name/g; s/@ARCH@/$arch/g" tools/dist/README.in >"$dst/README"

mkdir -p dist
out=dist/$name.tar.gz
tar cf - -C "$stage" --owner=0 --group=0 --sort=name "$name" | gzip -9n >"$out.tmp"
mv "$out.tmp" "$out"
rm -rf "$stage"
bytes=$(wc -c <"$out")
unpacked=$(tar xzf "$out" -O | wc -c)
mb=$(awk -v b="$bytes" 'BEGIN { printf "%.1f", b / 1e6 }')
echo "dist: $out: $mb MB packed (limit $limit_mb MB), $(awk -v b="$unpacked" 'BEGIN { printf "%.1f", b / 1e6 }') MB unpacked"
tar tzvf "$out" | awk '$3 > 100000 { printf "  %10d  %s\n", $3, $6 }'
if [ "$bytes" -gt $((limit_mb * 1000000)) ]; then
    echo "dist: $out is $mb MB, over the $limit_mb MB limit (README \"Run anywhere\")" >&2
    exit 1
fi
echo "$out"
