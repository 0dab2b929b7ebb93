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
#   strix-gpu/build/tests/test_cuda_ops, build/perf/gpu_bench, build/mkweights,
#                                     build/perf/cuda/{conv,pool,resize,letterbox}_lab
#   strix-gpu/build/infer, perf/gpu_video.sh, perf/bench_video.sh, clips/720p.mp4
#                                     the video step: infer as `make dist` links it
#                                     (the minimal static FFmpeg, NVDEC included) and
#                                     a 4 s 1280x720 H.264 clip made here by ffmpeg;
#                                     left out, with a line saying why, when the
#                                     static FFmpeg cannot be built or ffmpeg is missing
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
labs="$obj/perf/cuda/conv_lab $obj/perf/cuda/pool_lab $obj/perf/cuda/resize_lab $obj/perf/cuda/letterbox_lab"
progs="$obj/tests/test_cuda_ops $obj/perf/gpu_bench $labs $obj/mkweights"
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
# shellcheck disable=SC2086 # $labs: words
cp -p $labs "$dst/build/perf/cuda/"
cp -p "$obj/mkweights" "$dst/build/"
# the video step's infer and clip (optional: the check SKIPs the step without them)
video="left out"
if ! command -v ffmpeg >/dev/null 2>&1; then
    video="left out: no ffmpeg program here to make the clip"
elif ! sh tools/ffmpeg.sh build x86_64 >>"$build/gpu-bundle.log" 2>&1; then
    video="left out: the static FFmpeg did not build (see $build/gpu-bundle.log)"
elif ! make -j"$(nproc 2>/dev/null || echo 2)" DIST=1 CUDA=1 BUILD="$obj-dist" ${archs:+CUDA_ARCHS="$archs"} \
    "$obj-dist/infer" >>"$build/gpu-bundle.log" 2>&1; then
    video="left out: infer did not build with the static FFmpeg (see $build/gpu-bundle.log)"
elif ! mkdir -p "$dst/clips" || ! ffmpeg -v error -nostdin -y -f lavfi -i testsrc2=s=1280x720:r=30:d=4 \
    -c:v libx264 -preset veryfast -pix_fmt yuv420p -g 60 "$dst/clips/720p.mp4" >>"$build/gpu-bundle.log" 2>&1; then
    video="left out: ffmpeg could not make the clip"
else
    cp -p "$obj-dist/infer" "$dst/build/" && cp -p perf/gpu_video.sh perf/bench_video.sh "$dst/perf/" && video="included"
fi
echo "gpu-bundle: video step $video"
skip='^(linux-vdso|ld-linux|libc\.|libm\.|libdl\.|libpthread\.|librt\.|libutil\.|libresolv\.|libcuda\.|libnvidia-|libcudart|libcublas|libcublasLt)'
for p in $progs $([ -f "$dst/build/infer" ] && echo "$dst/build/infer"); do
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
    echo "video step: $video"
    echo "contents:"
    (cd "$stage" && find strix-gpu -type f | sort)
} >"$dst/BUNDLE"
tar czf "$build/strix-gpu-bundle.tar.gz" -C "$stage" strix-gpu
rm -rf "$stage"
echo "gpu-bundle: $build/strix-gpu-bundle.tar.gz ($(du -k "$build/strix-gpu-bundle.tar.gz" | cut -f1) KiB):"
tar tzvf "$build/strix-gpu-bundle.tar.gz" | awk '{ printf "  %10s  %s\n", $3, $6 }'
