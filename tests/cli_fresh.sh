#!/bin/sh
# cli_fresh.sh — the README's set-up on a fresh machine: tools/deps.sh run in
# a minimal Debian bookworm root (mmdebstrap --variant=minbase, plus git and
# ca-certificates, which a user who cloned the repository has), then one
# build of each kind in that root and the programs the tests call.  This is
# the check that a package missing from deps.sh fails CI: CI runs on a
# machine where packages installed by hand stay, so the suite's other tests
# cannot see a missing install step (issue 32: libc6-dev-arm64-cross, only a
# Recommends of gcc-aarch64-linux-gnu, broke the aarch64 build on a fresh
# machine while every CI run passed).
#
#   sh tests/cli_fresh.sh BUILD
#
# Lines: cli_fresh_deps (deps.sh exits 0 in the root), cli_fresh_demo (the
# README's first command, `sh tools/deps.sh && make demo`: the CPU-only build,
# no nvcc in the root, and infer on the demo's synthetic clip),
# cli_fresh_dist (make dist), cli_fresh_aarch64 (make dist
# CC=aarch64-linux-gnu-gcc, and its inspect run under qemu-aarch64-static),
# cli_fresh_tools (every program the tests start, clang's libFuzzer link, an
# x264 encode, the live tests' RTSP server and SRT), cli_fresh_embed (make install, examples/detect.c built with
# pkg-config and run, pip install ./python in a venv and a detection from
# numpy).  The two dist builds are -O0: they prove headers and
# libraries, not speed.
#
# Caches under build/fresh/ (none of them installs anything into the root):
# the base root as a tarball keyed by its configuration, apt's downloaded
# .debs (apt checks their hashes; deps.sh still has to name every package),
# and the build caches deps.sh would otherwise download again or that `make
# dist` would rebuild (Debian's FFmpeg source, the arm64 .debs of
# tools/debroot.sh, the static FFmpeg builds of tests/cli_dist.sh, which runs
# before this script).  Cold (first run, downloads): about 6 minutes;
# warm: about 4.  The root lives in a private mount namespace (unshare), so
# no mount outlives the script, however it ends.
# STRIX_FRESH=0 skips the whole script.
NAME=cli_fresh
. "$(dirname "$0")/lib_cli.sh"

if [ "${STRIX_FRESH:-1}" = 0 ]; then
    skip all "STRIX_FRESH=0"
    exit 0
fi
if grep -q __asan_init "$B/infer" 2>/dev/null; then
    skip all "the fresh root is built once, with the plain build (this is the sanitizer build)"
    exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
    skip all "needs root (a chroot, apt-get inside it)"
    exit 0
fi
for p in mmdebstrap unshare chroot; do
    command -v $p >/dev/null 2>&1 || { skip all "no $p (sh tools/deps.sh installs mmdebstrap)"; exit 0; }
done

cd "$ROOT" || exit 1
cache=$ROOT/build/fresh
mkdir -p "$cache/archives/partial"
suite=bookworm
mirror=http://deb.debian.org/debian
extra="git,ca-certificates"
key=$(printf '%s\n' "$suite" minbase "$extra" "$(mmdebstrap --version)" | sha256sum | cut -c1-16)
base=$cache/base-$key.tar
if [ ! -f "$base" ]; then
    rm -f "$cache"/base-*.tar "$cache/new.tar"
    if ! mmdebstrap --quiet --variant=minbase --include="$extra" "$suite" "$cache/new.tar" \
        "deb $mirror $suite main" "deb $mirror $suite-updates main" \
        "deb http://deb.debian.org/debian-security $suite-security main" >"$T/base.log" 2>&1; then
        rm -f "$cache/new.tar"
        fail deps "mmdebstrap could not make the base root: $(grep -E '^E:|error' "$T/base.log" | head -n 3 | tr '\n' ' ')"
        exit 1
    fi
    mv "$cache/new.tar" "$base"
fi

R=$T/root
mkdir -p "$R" && tar -C "$R" -xf "$base" || { fail deps "cannot unpack $base"; exit 1; }
# the checkout's files as a clone has them (tracked, and new files not ignored),
# at the same path as here: the FFmpeg build caches are keyed by their
# configure line, which names the aarch64 sysroot's absolute path
S=$R$ROOT
mkdir -p "$S"
{ git ls-files; git ls-files --others --exclude-standard; } | sort -u |
    while read -r f; do [ -e "$f" ] && echo "$f"; done | tar -cf - -T - | tar -C "$S" -xf - ||
    { fail deps "cannot copy the checkout into the root"; exit 1; }
mkdir -p "$S/build/ffmpeg" "$S/build/debroot"
[ -d build/ffmpeg/dl ] && cp -a build/ffmpeg/dl "$S/build/ffmpeg/"
[ -d build/debroot/debs ] && cp -a build/debroot/debs "$S/build/debroot/"
for d in build/ffmpeg/x86_64-* build/ffmpeg/aarch64-*; do
    [ -d "$d" ] && cp -a "$d" "$S/build/ffmpeg/"
done
# services are not started in a root (as in a container)
printf '#!/bin/sh\nexit 101\n' >"$R/usr/sbin/policy-rc.d" && chmod +x "$R/usr/sbin/policy-rc.d"
cp /etc/resolv.conf "$R/etc/resolv.conf" 2>/dev/null

# The steps inside the root, each logged to /log/STEP.log with its status in
# /log/status.  Later steps run even when one fails, so one run names every
# missing package.
mkdir -p "$R/log"
cat >"$S/.fresh-steps.sh" <<'EOF'
cd "$(dirname "$0")" || exit 1
step() { # NAME COMMAND...
    n=$1
    shift
    "$@" >"/log/$n.log" 2>&1
    echo "$n $?" >>/log/status
}
aarch64() {
    if ! make dist CC=aarch64-linux-gnu-gcc CFLAGS_OPT='-O0 $(ARCH_FLAGS)'; then
        tail -n 20 build/dist-aarch64.log build/ffmpeg/aarch64-*/build.log 2>/dev/null
        return 1
    fi
    qemu-aarch64-static -L /usr/aarch64-linux-gnu build/dist-aarch64/inspect --help
}
tools() {
    for p in make cc pkg-config ffmpeg ffprobe clang qemu-aarch64-static aarch64-linux-gnu-gcc \
        slurmctld slurmd sbatch squeue prometheus curl mmdebstrap skopeo podman runc dpkg-source \
        dpkg-scanpackages nasm jq busybox perl; do
        command -v $p >/dev/null || { echo "missing program: $p"; return 1; }
    done
    # the live tests' servers: gst-rtsp-server through Perl GI with the elements
    # tests/rtsp_server.pl launches, FFmpeg's srt protocol
    perl -MGlib::Object::Introspection -e 'for (["Gst", "Gst"], ["GstRtspServer", "GstRtspServer"]) {
            Glib::Object::Introspection->setup(basename => $_->[0], version => "1.0", package => $_->[1]) }
        Gst::init([]);
        for (qw(videotestsrc x264enc rtph264pay)) { Gst::ElementFactory::find($_) or die "no GStreamer element $_\n" }' &&
        ffmpeg -hide_banner -protocols | grep -qx " *srt" || return 1
    printf 'int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { return d && n > 1 && d[0] == 1; }\n' >/tmp/f.c
    clang -fsanitize=fuzzer,address,undefined /tmp/f.c -o /tmp/f && /tmp/f -runs=10 &&
        ffmpeg -v error -f lavfi -i testsrc=size=64x64:rate=5 -frames:v 3 -c:v libx264 -y /tmp/x.mp4 &&
        ffprobe -v error /tmp/x.mp4
}
# README "Use from C" and "Use from Python": make install (help2man) with an
# example built by pkg-config, and the package in a venv (python3-venv,
# python3-numpy), after the demo's build
embed() {
    make install DESTDIR=/tmp/inst && P=/tmp/inst/usr/local &&
        cc examples/detect.c -o /tmp/detect $(PKG_CONFIG_PATH=$P/lib/pkgconfig pkg-config --define-prefix --cflags --libs strix) &&
        LD_LIBRARY_PATH=$P/lib /tmp/detect tests/loaders/v8_f16.pt perf/demo/vtest-annotated.png >/tmp/dets &&
        head -n 3 /tmp/dets &&
        python3 -m venv --system-site-packages /tmp/venv && /tmp/venv/bin/pip install --no-index ./python &&
        w=$PWD/tests/loaders/v8_f16.pt &&
        (cd /tmp && /tmp/venv/bin/python -c "import strix, numpy; r = strix.Model('$w')(numpy.zeros((64, 96, 3), numpy.uint8)); print(len(r[0]))")
}
# the README's first command as written (MAKEFLAGS only spreads the build
# over the cores); "deps" is its first half, "demo" both
step deps sh tools/deps.sh
step demo env MAKEFLAGS=-j"$(nproc)" sh -c 'sh tools/deps.sh && make demo && test -s runs/demo/synthetic.mp4'
step dist make dist CFLAGS_OPT=-O0
step aarch64 aarch64
step tools tools
step embed embed
EOF
start=$(date +%s)
unshare --mount --propagation private sh -c '
    R=$1
    mount -t proc proc "$R/proc" && mount --rbind /dev "$R/dev" && mount -t sysfs sys "$R/sys" &&
        mount --bind "$2" "$R/var/cache/apt/archives" && chroot "$R" sh "$3/.fresh-steps.sh"' \
    sh "$R" "$cache/archives" "$ROOT" >"$T/chroot.log" 2>&1
rc=$?
took=$(($(date +%s) - start))
if [ ! -f "$R/log/status" ]; then
    fail deps "the root could not be entered (status $rc): $(tail -n 3 "$T/chroot.log" | tr '\n' ' ')"
    exit 1
fi
# keep the logs of a failed run where a person can read them
logs=$cache/logs
rm -rf "$logs" && cp -a "$R/log" "$logs"
what() { # STEP: the most telling lines of its log (a compiler's or linker's first)
    { grep -E 'fatal error|cannot find|unable to|missing program|Unable to locate' "$logs/$1.log" ||
        grep -E 'rror|not found|No such file' "$logs/$1.log"; } | head -n 2 | tr '\n' ' ' | cut -c1-400
}
for s in deps demo dist aarch64 tools embed; do
    st=$(sed -n "s/^$s //p" "$logs/status")
    case "$st" in
    0) pass "$s" ;;
    "") fail "$s" "did not run (log $T/chroot.log)" ;;
    *) fail "$s" "exit status $st in a fresh root after tools/deps.sh: $(what "$s") (log $logs/$s.log)" ;;
    esac
done
echo "  fresh root: $took s for deps.sh and the builds (base root key $key)"
exit $FAILED
