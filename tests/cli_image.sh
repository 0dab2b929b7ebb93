#!/bin/sh
# cli_image.sh — `make image` and its OCI images (tools/image.sh).
#   sh tests/cli_image.sh BUILD
# Builds the images with BUILD's CUDA setting (the CPU-only one always, the
# CUDA one in CUDA builds; tools/image.sh checks each unpacked size against
# the goals: 100 MB, 1000 MB), then for each image:
#   layout      the archive is an OCI image layout: oci-layout, index.json
#               naming one manifest, every blob's name is its sha256, the
#               manifest's sizes are the blobs', the config's diff_ids are the
#               digests of the uncompressed layers; skopeo (Debian's) reads it
#   root        the layers unpacked in order make a root file system holding
#               only Debian's libc6 and base-files besides /opt/strix (and
#               cuBLAS in the CUDA image), entered with unshare -r chroot
#               (plain chroot as root); there infer runs on
#               ../shared/data/dog.jpg (a synthetic JPEG without the
#               samples) and its detections equal BUILD's
#               infer's byte for byte; the CUDA image's loader resolves
#               libcublas.so.N and everything it needs, and `--device cuda`
#               without a GPU stops with one line (exit 9)
#   podman      the archive loaded into a private podman store (Debian's
#               podman, with runc where crun cannot run here: a cgroup v1/v2
#               hybrid without CAP_SYS_RESOURCE) and run with the image's own
#               configuration (PATH, command), the data bind-mounted: the
#               same detections
# then the aarch64 image (`make image CC=aarch64-linux-gnu-gcc`, the tarball
# tests/cli_dist.sh cross-builds): an arm64 image whose infer, run on its own
# root under qemu-user-static, finds detections on dog.jpg
# (STRIX_DIST_ARM=0 skips it, as in tests/cli_dist.sh);
# and reports the cold start to the first detection written (process start
# to detections.json, yolov8n on dog.jpg, median of 5, chroot and podman);
# timings pass or fail nothing (perf/results has the measured runs).
# SKIPs with the reason where mmdebstrap, the fetched Debian packages (sh
# tools/deps.sh downloads them; it needs deb.debian.org), chroot or podman
# cannot be had.  STRIX_IMAGE=0 skips the script, and so does STRIX_DIST=0
# (README "Run anywhere": the first `make dist` builds FFmpeg).
NAME=cli_image
. "$(dirname "$0")/lib_cli.sh"

if [ "${STRIX_IMAGE:-1}" = 0 ] || [ "${STRIX_DIST:-1}" = 0 ]; then
    skip all "STRIX_IMAGE=0 or STRIX_DIST=0 (the images pack the make dist tarballs)"
    exit 0
fi
if grep -q __asan_init "$B/infer" 2>/dev/null; then
    skip all "the images are checked once, against the plain build (this is the sanitizer build)"
    exit 0
fi
B=$(cd "$B" && pwd)
if [ ! -x "$B/infer" ] || [ ! -x "$B/mkweights" ]; then
    skip all "$B/infer or $B/mkweights is not built"
    exit 0
fi
command -v mmdebstrap >/dev/null 2>&1 || { skip all "mmdebstrap not installed (sh tools/deps.sh)"; exit 0; }
a=amd64
[ "$(uname -m)" = aarch64 ] && a=arm64
if [ ! -f "$ROOT/build/image/debs-$a/.complete" ]; then
    skip all "the base packages were not downloaded (sh tools/deps.sh runs tools/image.sh fetch; it needs deb.debian.org)"
    exit 0
fi
[ -f "$DATA/dog.jpg" ] || command -v ffmpeg >/dev/null 2>&1 ||
    { skip all "no $DATA/dog.jpg and no ffmpeg to make a stand-in"; exit 0; }
cuda=0
grep -q STRIX_WITH_CUDA "$B/config.stamp" 2>/dev/null && cuda=1
enter=""
if unshare -r chroot / true 2>/dev/null; then
    enter="unshare -r chroot"
elif [ "$(id -u)" -eq 0 ] && chroot / true 2>/dev/null; then
    enter="chroot"
fi

if ! (cd "$ROOT" && make -s image CUDA=$cuda) >"$T/image.out" 2>&1; then
    fail make_image "make image CUDA=$cuda failed: $(tail -n 5 "$T/image.out" | tr '\n' ' ')"
    exit 1
fi
archives=$(grep '\.oci\.tar$' "$T/image.out")
n=$(echo "$archives" | wc -w)
if [ "$n" -ne $((1 + cuda)) ]; then
    fail make_image "$n archives, want $((1 + cuda)): $(tr '\n' ' ' <"$T/image.out")"
    exit 1
fi
pass "make_image ($(grep '^image: ' "$T/image.out" | sed 's/^image: dist\///; s/, manifest .*//' | tr '\n' ';'))"

W=$T/work/w.safetensors
mkdir -p "$T/work"
# the sample photo, or a synthetic 640x480 JPEG under its name where the
# samples are absent (the checks compare detections, whatever the picture)
if [ -f "$DATA/dog.jpg" ]; then cp "$DATA/dog.jpg" "$T/work/"
elif ! ffmpeg -v error -nostdin -y -f lavfi -i testsrc2=s=640x480 -frames:v 1 "$T/work/dog.jpg"; then
    fail input "ffmpeg could not make a stand-in JPEG"; exit 1
fi
"$B/mkweights" --model "$YAML" --scale n --seed 7 --out "$W" >/dev/null 2>&1 || { fail weights "mkweights failed"; exit 1; }
cp "$YAML" "$T/work/"
# Paths relative to / inside (chroot and the image start there) and to
# $T/ref outside: detections.json names the input as given.
ARGS="--device cpu --model work/yolov8.yaml --scale n --weights work/w.safetensors --conf 0.1 --threads 2 --no-save --quiet"
mkdir -p "$T/ref"
ln -s "$T/work" "$T/ref/work"
# shellcheck disable=SC2086 # $ARGS: words
if ! (cd "$T/ref" && "$B/infer" $ARGS --out work/ref work/dog.jpg) >"$T/out" 2>"$T/err"; then
    fail reference "BUILD's infer on dog.jpg: $(head -c 300 "$T/err")"
    exit 1
fi
REF=$T/work/ref/detections.json
grep -q '"box"' "$REF" || { fail reference "no detections in BUILD's $REF"; exit 1; }

median() { tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { printf "%.3f", v[int((NR + 1) / 2)] }'; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.3f", b - a }'; }

for archive in $archives; do
    label=cpu
    case $archive in *-cuda*) label=cuda ;; esac
    A=$ROOT/$archive
    O=$T/oci-$label
    mkdir -p "$O"
    tar xf "$A" -C "$O"

    # --- the layout ---------------------------------------------------------
    why=""
    [ "$(tr -d ' \n' <"$O/oci-layout")" = '{"imageLayoutVersion":"1.0.0"}' ] || why="oci-layout: $(cat "$O/oci-layout")"
    for f in "$O"/blobs/sha256/*; do
        [ "$(sha256sum "$f" | cut -c1-64)" = "$(basename "$f")" ] || why="${why:-blob $(basename "$f") does not match its digest}"
    done
    manifest=$(sed -n 's/.*"digest": "sha256:\([0-9a-f]*\)".*/\1/p' "$O/index.json")
    [ "$(echo "$manifest" | wc -w)" = 1 ] || why="${why:-index.json names $(echo "$manifest" | wc -w) manifests}"
    M=$O/blobs/sha256/$manifest
    [ -f "$M" ] || why="${why:-the manifest blob $manifest is missing}"
    if [ -z "$why" ]; then
        # each descriptor: its digest's blob exists with that size
        for d in $(tr ',{}' '\n\n\n' <"$M" | sed -n 's/.*"digest": "sha256:\([0-9a-f]*\)".*/\1/p'); do
            size=$(tr '{}' '\n\n' <"$M" | grep "sha256:$d" | sed -n 's/.*"size": \([0-9]*\).*/\1/p')
            [ "$(wc -c <"$O/blobs/sha256/$d" 2>/dev/null)" = "$size" ] || why="${why:-blob $d: size $size in the manifest}"
        done
        config=$(tr '{}' '\n\n' <"$M" | grep 'image.config.v1+json' | sed -n 's/.*"digest": "sha256:\([0-9a-f]*\)".*/\1/p')
        layers=$(tr '{}' '\n\n' <"$M" | grep 'image.layer.v1.tar+gzip' | sed -n 's/.*"digest": "sha256:\([0-9a-f]*\)".*/\1/p')
        diffids=$(tr ',' '\n' <"$O/blobs/sha256/$config" | sed -n 's/.*"sha256:\([0-9a-f]*\)".*/\1/p')
        unpacked=""
        for l in $layers; do unpacked="$unpacked $(gzip -dc "$O/blobs/sha256/$l" | sha256sum | cut -c1-64)"; done
        [ "$(echo $diffids)" = "$(echo $unpacked)" ] || why="${why:-the config's diff_ids are not the uncompressed layers' digests}"
    fi
    if [ -n "$why" ]; then
        fail "layout_$label" "$A: $why"
        continue
    fi
    if ! command -v skopeo >/dev/null 2>&1; then
        pass "layout_$label ($(echo "$layers" | wc -w) layers; skopeo not installed)"
    elif ! skopeo inspect "oci-archive:$A" >"$T/inspect" 2>"$T/err"; then
        fail "layout_$label" "skopeo inspect oci-archive:$A: $(head -c 300 "$T/err")"
    elif ! grep -q "\"Architecture\": \"$a\"" "$T/inspect" || ! grep -q '"PATH=/opt/strix/bin:/usr/bin:/bin"' "$T/inspect"; then
        fail "layout_$label" "skopeo inspect: no $a or no PATH: $(tr -d '\n' <"$T/inspect" | head -c 300)"
    else
        pass "layout_$label ($(echo "$layers" | wc -w) layers; skopeo reads it)"
    fi

    # --- the root, entered with chroot --------------------------------------
    R=$T/root-$label
    mkdir -p "$R"
    for l in $layers; do tar xzf "$O/blobs/sha256/$l" -C "$R"; done
    du=$(du -sb "$R" | awk '{ printf "%.1f", $1 / 1e6 }')
    # every file outside /opt/strix and cuBLAS is one of the base packages'
    for deb in "$ROOT/build/image/debs-$a"/*.deb; do dpkg-deb --fsys-tarfile "$deb" | tar t; done |
        sed 's|^\./||' | sort -u >"$T/packaged"
    extra=$(cd "$R" && find . -path ./opt/strix -prune -o -path ./usr/share/doc/nvidia-cublas -prune \
        -o -name 'libcublas*' -prune -o ! -type d -print | sed 's|^\./||' | grep -v '^var/lib/dpkg/' |
        sort | comm -23 - "$T/packaged" | head -n 3 | tr '\n' ' ')
    if [ -z "$enter" ]; then
        skip "root_$label" "neither user namespaces (unshare -r) nor root for chroot here"
    else
        mkdir -p "$R/work"
        (cd "$T/work" && cp dog.jpg yolov8.yaml w.safetensors "$R/work/")
        start=$(now)
        # shellcheck disable=SC2086 # $ARGS: words
        if ! $enter "$R" /opt/strix/bin/infer $ARGS --out work/out work/dog.jpg >"$T/out" 2>"$T/err"; then
            fail "root_$label" "infer in the root: $(head -c 400 "$T/err")"
        elif ! cmp -s "$R/work/out/detections.json" "$REF"; then
            fail "root_$label" "detections differ from BUILD's infer ($R/work/out/detections.json vs $REF)"
        else
            times=$(since "$start")
            for _ in 2 3 4 5; do
                start=$(now)
                # shellcheck disable=SC2086
                $enter "$R" /opt/strix/bin/infer $ARGS --overwrite --out work/out work/dog.jpg >/dev/null 2>&1
                times="$times $(since "$start")"
            done
            pass "root_$label ($du MB; cold start to detections.json: median $(echo "$times" | median) s of $times)"
        fi
        if [ $label = cuda ]; then
            major=$(echo "$archive" | sed -n 's/.*-cuda\([0-9]*\)\.oci\.tar$/\1/p')
            ld=$(cd "$R" && ls lib64/ld-linux-* | head -n 1)
            if ! $enter "$R" "/$ld" --list "/usr/lib/$(uname -m)-linux-gnu/libcublas.so.$major" >"$T/out" 2>&1 ||
                grep -q 'not found' "$T/out"; then
                fail cublas_resolves "libcublas.so.$major in the root: $(tr '\n' ' ' <"$T/out" | head -c 400)"
            else
                pass "cublas_resolves ($(grep -c '=>' "$T/out") libraries, all in the root)"
            fi
            # shellcheck disable=SC2046,SC2086
            $enter "$R" /opt/strix/bin/infer $(echo "$ARGS" | sed 's/--device cpu/--device cuda/') --out work/gpu \
                work/dog.jpg >"$T/out" 2>"$T/err"
            rc=$?
            if [ -e /dev/nvidia0 ]; then
                skip no_gpu_error "this machine has a GPU (/dev/nvidia0); the chroot has no driver libraries either way"
            elif [ $rc -ne 9 ] || [ "$(wc -l <"$T/err")" -ne 1 ]; then
                fail no_gpu_error "--device cuda without a GPU: exit $rc, want 9 and one line: $(head -c 300 "$T/err")"
            else
                pass "no_gpu_error ($(head -c 160 "$T/err"))"
            fi
        fi
    fi
    if [ -n "$extra" ]; then
        fail "root_is_minimal_$label" "files no package of the base or strix put there: $extra"
    else
        pass "root_is_minimal_$label ($(sed -n 's/^Package: //p' "$R/var/lib/dpkg/status" | tr '\n' ' ')+ /opt/strix)"
    fi
    rm -rf "$R"

    # --- podman --------------------------------------------------------------
    if ! command -v podman >/dev/null 2>&1; then
        skip "podman_$label" "podman not installed (sh tools/deps.sh)"
        continue
    fi
    P="podman --root $T/podman/root --runroot $T/podman/run"
    if ! $P load -q -i "$A" >"$T/load" 2>"$T/err"; then
        fail "podman_$label" "podman load -i $A: $(head -c 300 "$T/err")"
        continue
    fi
    img=$(sed -n 's/^Loaded image[^:]*: *//p' "$T/load" | head -n 1)
    # the image's command, then infer with the image's PATH
    mkdir -p "$T/pw-$label"
    (cd "$T/work" && cp dog.jpg yolov8.yaml w.safetensors "$T/pw-$label/")
    RUN="run --rm --network=none -v $T/pw-$label:/work"
    if ! $P $RUN "$img" >"$T/out" 2>"$T/err"; then
        # this sandbox: crun refuses a cgroup v1/v2 hybrid, and without
        # CAP_SYS_RESOURCE the default rlimits cannot be set
        RUN="--runtime runc $RUN --ulimit nofile=1024:1024 --ulimit nproc=1024:1024"
        if ! $P $RUN "$img" >"$T/out" 2>"$T/err2"; then
            skip "podman_$label" "podman cannot run a container here: $(head -c 200 "$T/err") / with runc: $(head -c 200 "$T/err2")"
            continue
        fi
    fi
    if ! grep -q -- '--model' "$T/out"; then
        fail "podman_$label" "the image's command (infer --help) printed: $(head -c 200 "$T/out")"
        continue
    fi
    # shellcheck disable=SC2086
    if ! $P $RUN "$img" infer $ARGS --out work/out work/dog.jpg >"$T/out" 2>"$T/err"; then
        fail "podman_$label" "podman run $img infer: $(head -c 400 "$T/err")"
    elif ! cmp -s "$T/pw-$label/out/detections.json" "$REF"; then
        fail "podman_$label" "detections differ from BUILD's infer"
    else
        times=""
        for _ in 1 2 3 4 5; do
            start=$(now)
            # shellcheck disable=SC2086
            $P $RUN "$img" infer $ARGS --overwrite --out work/out work/dog.jpg >/dev/null 2>&1
            times="$times $(since "$start")"
        done
        pass "podman_$label ($img; podman run to detections.json: median $(echo "$times" | median) s of$times)"
    fi
    $P rmi -a -f >/dev/null 2>&1
done

# --- aarch64: the image of the cross-built tarball, run under qemu-user-static
t=aarch64
if [ "${STRIX_DIST_ARM:-1}" = 0 ]; then
    skip $t "STRIX_DIST_ARM=0"
elif [ "$(uname -m)" != x86_64 ]; then
    skip $t "the cross build and qemu check run on x86_64 hosts"
elif ! command -v aarch64-linux-gnu-gcc >/dev/null 2>&1 || ! command -v qemu-aarch64-static >/dev/null 2>&1; then
    skip $t "no aarch64-linux-gnu-gcc or qemu-aarch64-static (sh tools/deps.sh installs them)"
elif [ ! -f "$ROOT/build/image/debs-arm64/.complete" ]; then
    skip $t "the arm64 base packages were not downloaded (sh tools/deps.sh)"
elif ! (cd "$ROOT" && make -s image CC=aarch64-linux-gnu-gcc) >"$T/arm.out" 2>&1; then
    fail $t "make image CC=aarch64-linux-gnu-gcc failed: $(tail -n 5 "$T/arm.out" | tr '\n' ' ')"
else
    A=$ROOT/$(tail -n 1 "$T/arm.out")
    O=$T/oci-arm64
    R=$T/root-arm64
    mkdir -p "$O" "$R/work"
    tar xf "$A" -C "$O"
    manifest=$(sed -n 's/.*"digest": "sha256:\([0-9a-f]*\)".*/\1/p' "$O/index.json")
    for l in $(tr '{}' '\n\n' <"$O/blobs/sha256/$manifest" | grep 'image.layer.v1.tar+gzip' |
        sed -n 's/.*"digest": "sha256:\([0-9a-f]*\)".*/\1/p'); do
        tar xzf "$O/blobs/sha256/$l" -C "$R"
    done
    (cd "$T/work" && cp dog.jpg yolov8.yaml w.safetensors "$R/work/")
    # The detections are not byte-identical to x86_64's (NEON and AVX2 round
    # differently; near-threshold synthetic boxes move): some must be there.
    # shellcheck disable=SC2086 # $ARGS: words
    if command -v skopeo >/dev/null 2>&1 && ! skopeo inspect "oci-archive:$A" 2>&1 | grep -q '"Architecture": "arm64"'; then
        fail $t "skopeo inspect oci-archive:$A: not an arm64 image"
    elif ! readelf -h "$R/opt/strix/bin/infer" 2>/dev/null | grep -q 'Machine:.*AArch64'; then
        fail $t "/opt/strix/bin/infer in the image is not an aarch64 program"
    elif ! (cd "$R" && qemu-aarch64-static -L "$R" ./opt/strix/bin/infer $ARGS --out work/out work/dog.jpg) \
        >"$T/out" 2>"$T/err"; then
        fail $t "infer in the arm64 root under qemu: $(head -c 400 "$T/err")"
    elif ! grep -q '"box"' "$R/work/out/detections.json"; then
        fail $t "no detections from the arm64 image's infer"
    else
        pass "$t ($(grep '^image: ' "$T/arm.out" | sed 's/^image: dist\///; s/, manifest .*//'); infer under qemu: $(grep -o '"box"' "$R/work/out/detections.json" | wc -l) detections)"
    fi
fi
exit $FAILED
