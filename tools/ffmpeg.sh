#!/bin/sh
# ffmpeg.sh — the minimal static FFmpeg that `make dist` links into infer:
# Debian bookworm's ffmpeg source package (5.1.x) configured with only what
# strix reads and writes.
#
#   sh tools/ffmpeg.sh fetch             downloads the source package into
#                                        build/ffmpeg/dl (network; tools/deps.sh
#                                        calls it, nothing else needs a network)
#   sh tools/ffmpeg.sh prefix ARCH       prints the install prefix of the
#                                        configuration for ARCH (x86_64, aarch64)
#   sh tools/ffmpeg.sh flags ARCH        prints its configure line
#   sh tools/ffmpeg.sh build ARCH        configures, builds and installs it
#                                        there unless that prefix is complete
#
# The prefix is build/ffmpeg/<ARCH>-<key>, key = a hash of the configure
# line, the source version and the compiler's version: the same configuration
# is built once, a changed one beside it.  build/ffmpeg/<...>/build-seconds
# records the first build's wall time (nice'd make -j$(nproc)).
#
# The source comes through apt from a sources file of the build's own
# (build/ffmpeg/apt/sources.list: deb-src for bookworm, bookworm-updates and
# bookworm-security), so the machine's apt configuration is not touched and
# no root is needed; apt checks the Sources index signatures and the files'
# hashes, and dpkg-source applies Debian's patches.
#
# What is in it (the rest is --disable-everything):
#   demuxers   mov/mp4, matroska/webm, avi, mpegts, flv, image2, raw h264/hevc/
#              mjpeg, hls, rtsp; wav, mp3, aac for audio-only side inputs
#   decoders   h264, hevc, mpeg4, msmpeg4 v1-3 (OpenCV's vtest.avi), h263,
#              mpeg1/2, vp8, vp9, av1 (through NVDEC only: 5.1's native AV1
#              decoder is hardware-only and Debian ships no static libdav1d),
#              mjpeg, cinepak, flv1, png, bmp, gif, tiff, webp; audio: aac,
#              mp3, mp2, ac3, eac3, opus, vorbis, flac, alac, common PCM
#   parsers    for all of those (audio stream copy needs them to packetise)
#   bsfs       aac_adtstoasc (ADTS AAC copied from TS/FLV into MP4), the
#              annex-B/extradata filters the muxer and NVDEC use
#   encoders   libx264 (Debian's static libx264.a), aac, mpeg4 and
#              h264/hevc_nvenc (driver loaded at run time)
#   muxers     mp4 (mov); segment and mpegts for `infer --segment`'s rolling
#              fragmented-MP4 or MPEG-TS pieces (live sources)
#   protocols  file, pipe, http, https (tls), tcp, udp, rtp, hls's crypto
#   TLS        mbedTLS: Debian ships static archives (libmbedtls-dev), it is
#              small (~0.5 MB linked) and needs no further libraries; OpenSSL's
#              libcrypto is several MB and GnuTLS drags nettle, gmp, p11-kit.
#              Apache-2.0 makes FFmpeg --enable-version3 (GPLv3 with libx264).
#   hwaccel    CUDA + NVDEC (ffnvcodec headers from libffmpeg-nvenc-dev; libcuda
#              and libnvcuvid are dlopen()ed when a GPU run asks for them);
#              x86_64 only (an aarch64 tarball is CPU-only; Jetsons decode
#              through V4L2, not NVDEC)
# Cross builds (ARCH other than this machine's: aarch64-linux-gnu-gcc) take
# x264, mbedTLS and zlib from Debian's arm64 packages unpacked by
# tools/debroot.sh into build/debroot/sysroot-ARCH.
#   zlib       for PNG and compressed Matroska headers (static libz.a)
set -eu
cd "$(dirname "$0")/.."
root=$(pwd)
top=build/ffmpeg
dl=$top/dl

cross_prefix() { # ARCH -> compiler prefix ("" for this machine's arch)
    if [ "$1" = "$(uname -m)" ]; then echo ""; else echo "$1-linux-gnu-"; fi
}

flags() { # ARCH -> the configure line (without --prefix)
    arch=$1
    cp=$(cross_prefix "$arch")
    echo "--disable-everything --disable-autodetect --disable-programs --disable-doc --disable-debug"
    echo "--disable-shared --enable-static --enable-pic --disable-avdevice --disable-avfilter --disable-postproc"
    echo "--enable-swscale --enable-swresample --enable-network --enable-pthreads --enable-zlib"
    echo "--enable-gpl --enable-version3 --enable-libx264 --enable-mbedtls"
    if [ -z "$cp" ]; then
        echo "--enable-ffnvcodec --enable-cuda --enable-nvdec --enable-nvenc"
        echo "--enable-hwaccel=h264_nvdec,hevc_nvdec,mpeg1_nvdec,mpeg2_nvdec,mpeg4_nvdec,vp8_nvdec,vp9_nvdec,av1_nvdec,mjpeg_nvdec"
        echo "--enable-encoder=h264_nvenc,hevc_nvenc"
    else
        # the arm64 -dev packages unpacked by tools/debroot.sh sysroot
        sr=$root/$(sysroot "$arch")
        echo "--enable-cross-compile --arch=$arch --target-os=linux --cross-prefix=$cp --pkg-config=pkg-config --pkg-config-flags=--static"
        echo "--extra-cflags=-I$sr/usr/include --extra-cflags=-I$sr/usr/include/$arch-linux-gnu"
        echo "--extra-ldflags=-L$sr/usr/lib/$arch-linux-gnu"
    fi
    echo "--enable-demuxer=mov,matroska,avi,mpegts,flv,image2,h264,hevc,mjpeg,hls,rtsp,wav,mp3,aac"
    echo "--enable-decoder=h264,hevc,mpeg4,msmpeg4v1,msmpeg4v2,msmpeg4v3,h263,mpeg1video,mpeg2video,vp8,vp9,av1"
    echo "--enable-decoder=mjpeg,cinepak,flv,png,bmp,gif,tiff,webp"
    echo "--enable-decoder=aac,aac_latm,mp3float,mp2float,ac3,eac3,opus,vorbis,flac,alac"
    echo "--enable-decoder=pcm_s16le,pcm_s16be,pcm_s24le,pcm_s32le,pcm_f32le,pcm_u8,pcm_alaw,pcm_mulaw"
    echo "--enable-parser=h264,hevc,mpeg4video,mpegvideo,h263,vp8,vp9,av1,mjpeg,png,bmp,gif,webp"
    echo "--enable-parser=aac,aac_latm,mpegaudio,ac3,opus,vorbis,flac"
    echo "--enable-bsf=aac_adtstoasc,h264_mp4toannexb,hevc_mp4toannexb,extract_extradata,vp9_superframe_split,av1_frame_split"
    echo "--enable-encoder=libx264,aac,mpeg4"
    echo "--enable-muxer=mp4,segment,mpegts"
    echo "--enable-protocol=file,pipe,http,https,tls,tcp,udp,rtp,crypto"
}

sysroot() { # ARCH -> where tools/debroot.sh unpacks its -dev packages (cross builds)
    echo "build/debroot/sysroot-$1"
}

version() { # the source package version in dl/, or nothing
    ls "$dl"/ffmpeg_*.dsc 2>/dev/null | sed -n 's|.*/ffmpeg_\(.*\)\.dsc$|\1|p' | tail -n 1
}

prefix() { # ARCH -> build/ffmpeg/ARCH-KEY
    arch=$1
    cc="$(cross_prefix "$arch")gcc"
    key=$({ flags "$arch"; version; "$cc" --version 2>/dev/null | head -n 1; nasm -v 2>/dev/null || true; } |
        sha256sum | cut -c1-12)
    echo "$top/$arch-$key"
}

case "${1:-}" in
fetch)
    [ -n "$(version)" ] && exit 0
    mkdir -p "$top/apt/lists/partial" "$dl"
    cat >"$top/apt/sources.list" <<'EOF'
deb-src http://deb.debian.org/debian bookworm main
deb-src http://deb.debian.org/debian bookworm-updates main
deb-src http://deb.debian.org/debian-security bookworm-security main
EOF
    apt_opts="-q -o Dir::Etc::SourceList=$PWD/$top/apt/sources.list -o Dir::Etc::SourceParts=/dev/null
        -o Dir::State::Lists=$PWD/$top/apt/lists -o Debug::NoLocking=1 -o APT::Sandbox::User=root"
    # shellcheck disable=SC2086 # $apt_opts: words
    apt-get $apt_opts update >/dev/null
    # shellcheck disable=SC2086
    (cd "$dl" && apt-get $apt_opts source --download-only ffmpeg >/dev/null)
    echo "ffmpeg: fetched the source package ffmpeg $(version) into $dl"
    ;;
prefix)
    prefix "${2:?usage: ffmpeg.sh prefix ARCH}"
    ;;
flags)
    flags "${2:?usage: ffmpeg.sh flags ARCH}"
    ;;
build)
    arch=${2:?usage: ffmpeg.sh build ARCH}
    p=$(prefix "$arch")
    [ -f "$p/.complete" ] && exit 0
    v=$(version)
    [ -n "$v" ] || { echo "ffmpeg: no FFmpeg source in $dl: run 'sh tools/deps.sh' (it downloads Debian's ffmpeg source package once)" >&2; exit 1; }
    src=$top/src-$v
    if [ ! -f "$src/configure" ]; then
        rm -rf "$src"
        dpkg-source --no-check -x "$dl/ffmpeg_$v.dsc" "$src" >/dev/null
        # dpkg-source leaves a copy of the upstream tarball beside the tree
        rm -f "$top"/ffmpeg_*.orig.tar.*
    fi
    rm -rf "$p"
    mkdir -p "$p/obj"
    start=$(date +%s)
    echo "ffmpeg: building FFmpeg $v for $arch into $p (first time only; log $p/build.log)"
    cross=$(cross_prefix "$arch")
    pcdir="" sr=""
    if [ -n "$cross" ]; then
        sh tools/debroot.sh sysroot "$arch" "$(sysroot "$arch")"
        sr=$root/$(sysroot "$arch")
        pcdir=$sr/usr/lib/$arch-linux-gnu/pkgconfig
    fi
    # shellcheck disable=SC2046 # the flags are words
    if ! (cd "$p/obj" && env ${pcdir:+PKG_CONFIG_LIBDIR=$pcdir} ${sr:+PKG_CONFIG_SYSROOT_DIR=$sr} \
            "$root/$src/configure" --prefix="$root/$p" $(flags "$arch") &&
          nice make -j"$(nproc 2>/dev/null || echo 2)" && make install) >"$p/build.log" 2>&1; then
        echo "ffmpeg: the FFmpeg build failed: see $p/build.log" >&2
        exit 1
    fi
    rm -rf "$p/obj"
    echo $(($(date +%s) - start)) >"$p/build-seconds"
    touch "$p/.complete"
    echo "ffmpeg: built in $(cat "$p/build-seconds") s"
    ;;
*)
    echo "usage: sh tools/ffmpeg.sh fetch | prefix ARCH | flags ARCH | build ARCH" >&2
    exit 2
    ;;
esac
