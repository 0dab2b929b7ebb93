#!/bin/sh
# cli_dist.sh — `make dist` and its tarball where nothing else is installed.
#   sh tests/cli_dist.sh BUILD
# Builds the tarball with the same CUDA setting as BUILD (tools/dist.sh
# checks its packed size against the README's limits and that the programs
# need only glibc), then unpacks it into a root file system holding nothing
# but Debian's libc6 (tools/debroot.sh bare), enters it with unshare -r
# chroot (plain chroot as root when user namespaces are off) and runs infer
# there on ../shared/data/vtest.avi and on two clips with audio (AAC in MP4:
# copied; PCM in AVI: re-encoded to AAC).  Each run's JSON Lines must equal
# BUILD's infer's byte for byte, and its MP4 must hold the same streams;
# --segment's pieces (fragmented MP4 and MPEG-TS) must be those BUILD writes,
# and an HTTP MPEG-TS stream served from outside is read.
# Then the aarch64 tarball (CC=aarch64-linux-gnu-gcc, CPU-only) and its
# checks under qemu-user-static: the CPU test programs of the same build (the
# whole-network ones only with STRIX_DIST_ARM=full) and one infer run.
#
# The first run builds FFmpeg twice (x86_64 and aarch64; about 2.5 and 3
# minutes each on 2 quiet cores, cached under build/ffmpeg/ afterwards).
# STRIX_DIST=0 skips the whole script, STRIX_DIST_ARM=0 the aarch64 part
# (README "Run anywhere"); both run by default, CI included.
NAME=cli_dist
. "$(dirname "$0")/lib_cli.sh"

if [ "${STRIX_DIST:-1}" = 0 ]; then
    skip all "STRIX_DIST=0"
    exit 0
fi
if grep -q __asan_init "$B/infer" 2>/dev/null; then
    skip all "the tarball is checked once, against the plain build (this is the sanitizer build)"
    exit 0
fi

B=$(cd "$B" && pwd)
cuda=0
grep -q STRIX_WITH_CUDA "$B/config.stamp" 2>/dev/null && cuda=1
enter=""
if unshare -r chroot / true 2>/dev/null; then
    enter="unshare -r chroot"
elif [ "$(id -u)" -eq 0 ] && chroot / true 2>/dev/null; then
    enter="chroot"
fi

# make_dist LABEL MAKEARGS...: sets $tarball, or fails LABEL
make_dist() {
    label=$1
    shift
    tarball=""
    if (cd "$ROOT" && make -s dist "$@") >"$T/dist.out" 2>&1; then
        tarball=$ROOT/$(tail -n 1 "$T/dist.out")
        pass "$label ($(grep 'MB packed' "$T/dist.out" | sed 's/^dist: [^:]*: //'))"
    else
        fail "$label" "make dist $* failed: $(tail -n 5 "$T/dist.out" | tr '\n' ' ')"
    fi
}

# --- this machine's architecture (x86_64) -------------------------------------
host=$(uname -m)
make_dist "dist_$host" CUDA=$cuda
if [ -n "$tarball" ]; then
    top=$(tar tzf "$tarball" | head -n 1 | cut -d/ -f1)
    missing=""
    for f in bin/infer bin/inspect bin/mkweights bin/moteval bin/bench weights/yolov8.yaml README LICENSE BUILD \
        licences/README licences/GPL-3 licences/x264.copyright licences/ffmpeg-LICENSE.md; do
        tar tzf "$tarball" "$top/$f" >/dev/null 2>&1 || missing="$missing $f"
    done
    [ $cuda = 1 ] && for f in bin/gpu_bench bin/test_cuda_ops licences/CUDA-runtime.txt; do
        tar tzf "$tarball" "$top/$f" >/dev/null 2>&1 || missing="$missing $f"
    done
    if [ -n "$missing" ]; then
        fail contents "$tarball lacks$missing"
    elif ! tar xzf "$tarball" -O "$top/README" | grep -q "GPL version 3"; then
        fail contents "$top/README does not say the binaries are under the GPL"
    else
        pass contents
    fi
fi

R=$T/root
streams() { ffprobe -v error -show_entries stream=codec_type,codec_name,nb_frames -of csv=p=0 "$1" | tr '\n' ' '; }
if [ -z "$tarball" ]; then
    skip bare_root "no tarball"
elif [ -z "$enter" ]; then
    skip bare_root "neither user namespaces (unshare -r) nor root for chroot here"
elif [ ! -f "$DATA/vtest.avi" ]; then
    skip bare_root "no $DATA/vtest.avi"
elif ! sh "$ROOT/tools/debroot.sh" bare "$host" "$R" 2>"$T/err"; then
    fail bare_root "$(cat "$T/err")"
else
    tar xzf "$tarball" -C "$R"
    D=/$top
    mkdir -p "$R/work"
    cp "$DATA/vtest.avi" "$R/work/"
    ffmpeg -v error -nostdin -f lavfi -i testsrc2=size=320x240:rate=25 -f lavfi -i sine=frequency=440:sample_rate=44100 \
        -t 3 -c:v libx264 -preset ultrafast -c:a aac -shortest "$R/work/aac.mp4" &&
    ffmpeg -v error -nostdin -f lavfi -i testsrc2=size=320x240:rate=25 -f lavfi -i sine=frequency=660:sample_rate=48000 \
        -t 3 -c:v mpeg4 -c:a pcm_s16le -shortest "$R/work/pcm.avi" || fail clips "ffmpeg could not make the clips"
    cp "$B/infer" "$R/work/infer-normal"
    # the root holds glibc and nothing else: the normal build cannot start there
    if $enter "$R" /work/infer-normal --version >/dev/null 2>&1; then
        fail bare_root_is_bare "BUILD's infer (shared FFmpeg) started inside the root"
    else
        pass bare_root_is_bare
    fi
    if $enter "$R" "$D/bin/mkweights" --model "$D/weights/yolov8.yaml" --scale n --seed 7 \
        --out /work/w.safetensors >"$T/out" 2>"$T/err"; then
        pass bare_mkweights
    else
        fail bare_mkweights "$(head -c 300 "$T/err")"
    fi
    # Same relative paths inside (cwd /) and outside (cwd $R): the JSON Lines
    # headers name the input as given.
    for clip in vtest.avi aac.mp4 pcm.avi; do
        stem=${clip%.*}
        args="--model work/yolov8.yaml --scale n --weights work/w.safetensors --conf 0.1 --imgsz 320 --preset ultrafast"
        [ $clip = vtest.avi ] && args="$args --vid-stride 10"
        cp "$ROOT/weights/yolov8.yaml" "$R/work/"
        # shellcheck disable=SC2086 # $args: words
        if ! $enter "$R" "$D/bin/infer" --device cpu $args --out work/dist "work/$clip" >"$T/out" 2>"$T/err"; then
            fail "bare_infer_$stem" "in the bare root: $(head -c 400 "$T/err")"
            continue
        fi
        # shellcheck disable=SC2086
        if ! (cd "$R" && "$B/infer" --device cpu $args --out work/normal "work/$clip") >"$T/out" 2>"$T/err"; then
            fail "bare_infer_$stem" "BUILD's infer: $(head -c 400 "$T/err")"
            continue
        fi
        if ! cmp -s "$R/work/dist/$stem.jsonl" "$R/work/normal/$stem.jsonl"; then
            fail "bare_infer_$stem" "JSON Lines differ from BUILD's infer ($R/work/{dist,normal}/$stem.jsonl)"
        elif [ "$(streams "$R/work/dist/$stem.mp4")" != "$(streams "$R/work/normal/$stem.mp4")" ]; then
            fail "bare_infer_$stem" "MP4 streams differ: $(streams "$R/work/dist/$stem.mp4")vs $(streams "$R/work/normal/$stem.mp4")"
        elif [ $clip != vtest.avi ] && ! streams "$R/work/dist/$stem.mp4" | grep -q 'aac,audio'; then
            fail "bare_infer_$stem" "no AAC audio in the MP4: $(streams "$R/work/dist/$stem.mp4")"
        else
            pass "bare_infer_$stem ($(streams "$R/work/dist/$stem.mp4"))"
        fi
    done
    # --segment (live sources' rolling output) needs the static FFmpeg's
    # segment and mpegts muxers: 1 s pieces of the 3 s clip with its audio,
    # as fragmented MP4 and as MPEG-TS, the same pieces as BUILD's infer writes
    for fmt in mp4 ts; do
        args="--model work/yolov8.yaml --scale n --weights work/w.safetensors --conf 0.1 --imgsz 320 --preset ultrafast"
        args="$args --segment 1s --segment-format $fmt"
        # shellcheck disable=SC2086 # $args: words
        if ! $enter "$R" "$D/bin/infer" --device cpu $args --out "work/seg-dist-$fmt" work/aac.mp4 >"$T/out" 2>"$T/err"; then
            fail "bare_segment_$fmt" "in the bare root: $(head -c 400 "$T/err")"
            continue
        fi
        # shellcheck disable=SC2086
        (cd "$R" && "$B/infer" --device cpu $args --out "work/seg-normal-$fmt" work/aac.mp4) >"$T/out" 2>"$T/err" ||
            fail "bare_segment_$fmt" "BUILD's infer: $(head -c 400 "$T/err")"
        pieces=$(cd "$R/work/seg-dist-$fmt" && ls aac-*."$fmt" 2>/dev/null | tr '\n' ' ')
        want=$(cd "$R/work/seg-normal-$fmt" && ls aac-*."$fmt" 2>/dev/null | tr '\n' ' ')
        bad=""
        for p in $pieces; do
            streams "$R/work/seg-dist-$fmt/$p" | grep -q 'h264,video' && streams "$R/work/seg-dist-$fmt/$p" | grep -q 'aac,audio' ||
                bad="$bad $p"
        done
        if [ -z "$pieces" ] || [ "$pieces" != "$want" ]; then
            fail "bare_segment_$fmt" "pieces '$pieces', BUILD's infer wrote '$want'"
        elif [ -n "$bad" ]; then
            fail "bare_segment_$fmt" "without H.264 video and AAC audio:$bad"
        elif ! cmp -s "$R/work/seg-dist-$fmt/aac.jsonl" "$R/work/seg-normal-$fmt/aac.jsonl"; then
            fail "bare_segment_$fmt" "JSON Lines differ from BUILD's infer"
        else
            pass "bare_segment_$fmt ($pieces)"
        fi
    done
    # a live network source through the static FFmpeg's http protocol and
    # mpegts demuxer: 2 s of stream served here by ffmpeg, read to its end
    port=$((20000 + $$ % 20000))
    ffmpeg -v error -nostdin -re -f lavfi -i testsrc=size=160x120:rate=25 -t 2 -c:v libx264 -preset ultrafast \
        -g 25 -pix_fmt yuv420p -f mpegts -listen 1 "http://127.0.0.1:$port/live.ts" >"$T/srv.log" 2>&1 &
    srv=$!
    sleep 0.5
    if ! $enter "$R" "$D/bin/infer" --device cpu --model work/yolov8.yaml --scale n --weights work/w.safetensors \
        --imgsz 64 --no-reconnect --out work/http "http://127.0.0.1:$port/live.ts" >"$T/out" 2>"$T/err"; then
        fail bare_http_stream "in the bare root: $(head -c 400 "$T/err")"
    elif [ "$(grep -c '"frame"' "$R/work/http/live.jsonl")" -lt 25 ]; then
        fail bare_http_stream "$(grep -c '"frame"' "$R/work/http/live.jsonl") frames of 50 read"
    else
        pass "bare_http_stream ($(grep -c '"frame"' "$R/work/http/live.jsonl") frames)"
    fi
    kill "$srv" 2>/dev/null
    wait "$srv" 2>/dev/null
fi

# --- aarch64 (cross-built, run under qemu-user-static) -------------------------
A=$T/root-arm64
if [ "${STRIX_DIST_ARM:-1}" = 0 ]; then
    skip aarch64 "STRIX_DIST_ARM=0"
elif [ "$host" != x86_64 ]; then
    skip aarch64 "the cross build and qemu check run on x86_64 hosts"
elif ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-aarch64-static >/dev/null 2>&1; then
    skip aarch64 "no aarch64-linux-gnu-gcc or qemu-aarch64-static (sh tools/deps.sh installs them)"
else
    make_dist dist_aarch64 CC=aarch64-linux-gnu-gcc DIST_TARGETS=tests
    if [ -n "$tarball" ] && sh "$ROOT/tools/debroot.sh" bare aarch64 "$A" 2>"$T/err"; then
        top=$(tar tzf "$tarball" | head -n 1 | cut -d/ -f1)
        tar xzf "$tarball" -C "$T"
        AB=$ROOT/build/dist-aarch64
        Q="qemu-aarch64-static -L $A"
        # the CPU test programs of the same build, from the repository (they
        # read weights/ and tests/golden/ there); test_cuda_ops is CUDA-only.
        # The whole-network ones (test_golden, test_model, test_track) take
        # over 10 minutes each under qemu on 2 cores: STRIX_DIST_ARM=full only.
        for t in "$AB"/tests/test_*; do
            tn=$(basename "$t")
            only=""
            case "$tn" in
            *.d | test_cuda_ops) continue ;;
            test_golden | test_model | test_track)
                if [ "${STRIX_DIST_ARM:-1}" != full ]; then
                    skip "qemu_$tn" "whole networks under qemu take over 10 minutes (STRIX_DIST_ARM=full runs it)"
                    continue
                fi
                ;;
            test_int8) # its per-op checks (int8: C and NEON SDOT; bf16: C and NEON BFDOT, qemu's default CPU
                # has FEAT_BF16); its drift and precision tests run yolov8n whole
                if [ "${STRIX_DIST_ARM:-1}" != full ]; then
                    only=paths
                    skip qemu_test_int8_drift "whole networks under qemu (int8: 14 passes, over 10 minutes; bf16: 8, 491 s) (STRIX_DIST_ARM=full runs them)"
                fi
                ;;
            esac
            # shellcheck disable=SC2086 # $only: one word or none
            (cd "$ROOT" && $Q "$t" $only) >"$T/out" 2>&1
            rc=$?
            np=$(grep -c '^PASS' "$T/out")
            if [ $rc -ne 0 ] || grep -q '^FAIL' "$T/out"; then
                fail "qemu_$tn" "exit $rc: $(grep '^FAIL' "$T/out" | head -n 3 | tr '\n' ' ')$(tail -n 2 "$T/out" | tr '\n' ' ')"
            else
                pass "qemu_$tn ($np passed, $(grep -c '^SKIP' "$T/out") skipped)"
            fi
        done
        # one infer run: a short clip with AAC audio, weights from BUILD's
        # mkweights (the emulated one takes minutes).  The JSON Lines are not
        # byte-identical to x86_64's (FFmpeg's swscale and libm differ per
        # architecture in the last bits, so near-threshold synthetic boxes
        # differ): the same frames must be there, with detections.
        D=$T/$top
        ffmpeg -v error -nostdin -f lavfi -i testsrc2=size=320x240:rate=25 -f lavfi -i sine=frequency=440:sample_rate=44100 \
            -t 2 -c:v libx264 -preset ultrafast -c:a aac -shortest "$T/clip.mp4" || fail clips "ffmpeg could not make the clip"
        args="--device cpu --model $D/weights/yolov8.yaml --scale n --weights wa.safetensors --conf 0.1 --imgsz 160 --vid-stride 10 --preset ultrafast"
        frames() { grep -c '"frame"' "$1"; }
        if ! "$B/mkweights" --model "$D/weights/yolov8.yaml" --scale n --seed 7 --out "$T/wa.safetensors" \
            >"$T/out" 2>"$T/err"; then
            fail qemu_infer "BUILD's mkweights: $(head -c 300 "$T/err")"
        # shellcheck disable=SC2086 # $args: words
        elif ! (cd "$T" && $Q "$D/bin/infer" $args --out arm clip.mp4) >"$T/out" 2>"$T/err"; then
            fail qemu_infer "infer: $(head -c 400 "$T/err")"
        # shellcheck disable=SC2086
        elif ! (cd "$T" && "$B/infer" $args --out x86 clip.mp4) >"$T/out" 2>"$T/err"; then
            fail qemu_infer "BUILD's infer: $(head -c 400 "$T/err")"
        elif [ "$(streams "$T/arm/clip.mp4")" != "$(streams "$T/x86/clip.mp4")" ]; then
            fail qemu_infer "MP4 streams: $(streams "$T/arm/clip.mp4")vs $(streams "$T/x86/clip.mp4")"
        elif [ "$(frames "$T/arm/clip.jsonl")" != "$(frames "$T/x86/clip.jsonl")" ] || ! grep -q '"box"' "$T/arm/clip.jsonl"; then
            fail qemu_infer "JSON Lines: $(frames "$T/arm/clip.jsonl") frames vs x86_64's $(frames "$T/x86/clip.jsonl"), or no detections"
        else
            pass "qemu_infer ($(frames "$T/arm/clip.jsonl") frames as on x86_64; $(streams "$T/arm/clip.mp4"))"
        fi
    elif [ -n "$tarball" ]; then
        fail aarch64 "$(cat "$T/err")"
    fi
fi

exit $FAILED
