#!/bin/sh
# deps.sh — installs the Debian packages strix needs, only those missing
# (non-interactive, idempotent).  Called by `make deps`, `make test`, `make demo`.
# The core library needs a C compiler, libyaml, libjpeg-turbo and stb; `infer` reads and
# writes video through FFmpeg's libraries (found with pkg-config); the ffmpeg
# and ffprobe programs make and check the test clips and run the benchmark;
# JPEGs are decoded with libjpeg-turbo (libjpeg62-turbo-dev, which OpenCV uses);
# clang and its libFuzzer runtime (libclang-rt-dev) build the fuzz targets.
set -e
need=""
for p in make gcc libc6-dev libyaml-dev libstb-dev libjpeg62-turbo-dev pkg-config clang libclang-rt-dev \
    libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev ffmpeg; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need="$need $p"
done
[ -z "$need" ] && exit 0
echo "deps: installing$need"
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
# shellcheck disable=SC2086 # $need is a list of package names
$SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need
