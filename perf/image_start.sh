#!/bin/sh
# image_start.sh — cold start of a `make image` image to the first detection
# written: process (or container) start to detections.json, yolov8n
# (synthetic weights, mkweights --seed 7) on ../shared/data/dog.jpg, CPU,
# 2 threads, --no-save.  One raw line per run, then the medians.
#   sh perf/image_start.sh ARCHIVE [RUNS]      (default 11 runs per mode)
# Modes, interleaved run by run so that machine load hits them alike:
#   host        the image's /opt/strix/bin/infer run directly on this machine
#   chroot      the same inside the image's root file system (chroot)
#   chroot-cold chroot after evicting every file of the root from the page
#               cache (dd iflag=nocache count=0 per file: this root only, the
#               rest of the machine keeps its cache): the first start after
#               a pull
#   podman      `podman run --rm` of the loaded image with its own PATH and
#               command (a private store; runc and lowered rlimits where the
#               default runtime cannot run here, as in tests/cli_image.sh)
#   chroot-version, podman-version   `infer --version` the same two ways:
#               what entering the root or starting the container costs alone
# Each raw line: MODE RUN WALL_SECONDS CPU_SECONDS (user + system of infer,
# from GNU time where installed; "-" for podman, whose container is not its
# child).  Needs root (chroot), the image's mkweights for the weights; podman
# mode only where podman is installed.
set -eu
A=${1:?usage: sh perf/image_start.sh ARCHIVE [RUNS]}
RUNS=${2:-11}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DATA=${STRIX_DATA:-$ROOT/../shared/data}
T=$(mktemp -d "${TMPDIR:-/tmp}/strix_image_start.XXXXXX")
P="podman --root $T/podman/root --runroot $T/podman/run"
trap '$P rmi -a -f >/dev/null 2>&1 || true; rm -rf "$T"' EXIT
A=$(cd "$(dirname "$A")" && pwd)/$(basename "$A")

mkdir -p "$T/oci" "$T/root"
tar xf "$A" -C "$T/oci"
manifest=$(sed -n 's/.*"digest": "sha256:\([0-9a-f]*\)".*/\1/p' "$T/oci/index.json")
for l in $(tr '{}' '\n\n' <"$T/oci/blobs/sha256/$manifest" | grep 'layer.v1.tar+gzip' |
    sed -n 's/.*"digest": "sha256:\([0-9a-f]*\)".*/\1/p'); do
    tar xzf "$T/oci/blobs/sha256/$l" -C "$T/root"
done
R=$T/root
mkdir -p "$R/work"
cp "$DATA/dog.jpg" "$ROOT/weights/yolov8.yaml" "$R/work/"
chroot "$R" /opt/strix/bin/mkweights --model /work/yolov8.yaml --scale n --seed 7 --out /work/w.safetensors >/dev/null
ARGS="--device cpu --model /work/yolov8.yaml --scale n --weights /work/w.safetensors --conf 0.1 --threads 2 --no-save --quiet --overwrite"

podman=0
if command -v podman >/dev/null 2>&1 && $P load -q -i "$A" >"$T/load" 2>&1; then
    img=$(sed -n 's/^Loaded image[^:]*: *//p' "$T/load" | head -n 1)
    RUN="run --rm --network=none -v $R/work:/work"
    if $P $RUN "$img" >/dev/null 2>&1; then
        podman=1
    else
        RUN="--runtime runc $RUN --ulimit nofile=1024:1024 --ulimit nproc=1024:1024"
        $P $RUN "$img" >/dev/null 2>&1 && podman=1
    fi
fi

TM=""
[ -x /usr/bin/time ] && TM="/usr/bin/time -f %U+%S -o $T/cpu"
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.4f", b - a }'; }
echo "# $(basename "$A"), $RUNS runs per mode, $(nproc) CPUs, $(uname -r); load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# podman: $([ $podman = 1 ] && echo "$P $RUN $img" || echo "not run (not installed or cannot run here)")"
modes="host chroot chroot-cold chroot-version"
[ $podman = 1 ] && modes="$modes podman podman-version"
i=0
while [ $i -lt "$RUNS" ]; do
    i=$((i + 1))
    for m in $modes; do
        rm -f "$R/work/out/detections.json" "$T/cpu"
        mkdir -p "$R/work/out"
        case $m in
        host)
            start=$(now)
            # shellcheck disable=SC2046,SC2086 # $ARGS: words
            (cd "$R" && $TM ./opt/strix/bin/infer $(echo "$ARGS" | sed 's| /work/| work/|g') --out work/out work/dog.jpg)
            ;;
        chroot)
            start=$(now)
            # shellcheck disable=SC2086
            $TM chroot "$R" /opt/strix/bin/infer $ARGS --out /work/out /work/dog.jpg
            ;;
        chroot-cold)
            find "$R" -path "$R/work" -prune -o -type f -exec dd iflag=nocache count=0 status=none if={} \;
            start=$(now)
            # shellcheck disable=SC2086
            $TM chroot "$R" /opt/strix/bin/infer $ARGS --out /work/out /work/dog.jpg
            ;;
        podman)
            start=$(now)
            # shellcheck disable=SC2086
            $P $RUN "$img" infer $ARGS --out /work/out /work/dog.jpg
            ;;
        chroot-version)
            start=$(now)
            $TM chroot "$R" /opt/strix/bin/infer --version >/dev/null
            ;;
        podman-version)
            start=$(now)
            $P $RUN "$img" infer --version >/dev/null
            ;;
        esac
        s=$(since "$start")
        case $m in
        *-version) ;;
        *) grep -q '"box"' "$R/work/out/detections.json" || { echo "$m: no detections written" >&2; exit 1; } ;;
        esac
        cpu=-
        [ -s "$T/cpu" ] && cpu=$(tail -n 1 "$T/cpu" | awk -F+ '{ printf "%.2f", $1 + $2 }')
        echo "$m $i $s $cpu"
    done
done >"$T/raw"
cat "$T/raw"
for m in $modes; do
    awk -v m="$m" '$1 == m { v[++n] = $3 } END {
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        printf "median %-12s %.3f s  (min %.3f, max %.3f, %d runs)\n", m, v[int((n + 1) / 2)], v[1], v[n], n }' "$T/raw"
    awk -v m="$m" '$1 == m && $4 != "-" { v[++n] = $4 } END { if (n == 0) exit
        for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
        printf "median %-12s %.2f s CPU (user + system)\n", m, v[int((n + 1) / 2)] }' "$T/raw"
done
echo "# load after: $(cut -d' ' -f1-3 /proc/loadavg)"
