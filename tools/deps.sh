#!/bin/sh
# deps.sh — installs the Debian packages strix needs, only those missing
# (non-interactive, idempotent), then fetches Debian's FFmpeg source package
# once for `make dist` (tools/ffmpeg.sh fetch) and the Debian packages its
# tests unpack (tools/debroot.sh fetch: libc6 for the bare root, arm64
# archives for the aarch64 build).  Called by `make deps`,
# `make test`, `make demo`; the only step that uses the network.
# The core library needs a C compiler, libyaml, libjpeg-turbo and stb; `infer` reads and
# writes video through FFmpeg's libraries (found with pkg-config; libavdevice
# for V4L2 cameras); the ffmpeg
# and ffprobe programs make and check the test clips and run the benchmark;
# JPEGs are decoded with libjpeg-turbo (libjpeg62-turbo-dev, which OpenCV uses);
# clang and its libFuzzer runtime (libclang-rt-dev) build the fuzz targets.
# `make dist` (tools/dist.sh) links static archives: libx264-dev, libmbedtls-dev
# and zlib1g-dev for the minimal FFmpeg, nasm for its x86 assembly,
# libffmpeg-nvenc-dev for its NVDEC/NVENC headers, dpkg-dev to unpack the
# source package; its tests (tests/cli_dist.sh) cross-build for aarch64
# (gcc-aarch64-linux-gnu and its C library libc6-dev-arm64-cross, which is
# only a Recommends of the compiler, with the arm64 libraries below) and run
# that build under qemu-user-static.  The batch-worker tests run real engines on
# localhost: Slurm (slurm-wlm: slurmctld, slurmd, sbatch; tests/cli_slurm.sh)
# and Prometheus (prometheus, queried with curl; tests/cli_prometheus.sh).
# The live-source tests read their JSON Lines with jq and serve RTSP with
# GStreamer's gst-rtsp-server driven from Perl (tests/rtsp_server.pl:
# libglib-object-introspection-perl, gir1.2-gst-rtsp-server-1.0, with
# videotestsrc from gstreamer1.0-plugins-base, rtph264pay from -good and
# x264enc from -ugly; tests/cli_live_rtsp.sh); busybox's httpd serves the live
# HLS playlist of tests/cli_live.sh (a plain binary: no service is started).
# `make image` (tools/image.sh) builds its base root with mmdebstrap from
# .debs downloaded here once (tools/image.sh fetch); its test
# (tests/cli_image.sh) reads the images with skopeo and runs them with
# podman (runc where crun cannot run: cgroup v1/v2 hybrids).  `make install`
# writes a man page per tool with help2man; the Python package's tests
# (tests/cli_python.sh) use Debian's python3 with python3-numpy and make
# their venv with python3-venv (pip and setuptools come in its wheels).
set -e
cd "$(dirname "$0")/.."
need=""
for p in make gcc libc6-dev libyaml-dev libstb-dev libjpeg62-turbo-dev pkg-config clang libclang-rt-dev \
    libavformat-dev libavcodec-dev libavutil-dev libswscale-dev libswresample-dev libavdevice-dev ffmpeg \
    libx264-dev libmbedtls-dev zlib1g-dev nasm libffmpeg-nvenc-dev dpkg-dev \
    gcc-aarch64-linux-gnu libc6-dev-arm64-cross qemu-user-static slurm-wlm prometheus curl mmdebstrap skopeo podman runc \
    help2man python3 python3-numpy python3-venv jq libglib-object-introspection-perl gir1.2-gst-rtsp-server-1.0 \
    gstreamer1.0-plugins-base gstreamer1.0-plugins-good gstreamer1.0-plugins-ugly busybox; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || need="$need $p"
done
if [ -n "$need" ]; then
    echo "deps: installing$need"
    SUDO=""
    [ "$(id -u)" -ne 0 ] && SUDO="sudo"
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get update -qq
    # shellcheck disable=SC2086 # $need is a list of package names
    $SUDO env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends $need
fi
sh tools/ffmpeg.sh fetch
sh tools/debroot.sh fetch
# not fatal: without them `make image` stops and tests/cli_image.sh skips, each saying why
sh tools/image.sh fetch || echo "deps: the container image's base packages were not downloaded (above): make image needs them"
