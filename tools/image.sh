#!/bin/sh
# image.sh — what `make image` runs: OCI images of the `make dist` tarballs,
# built from Debian packages and the tarball alone, pulling from no registry:
#
#   dist/strix-VERSION-linux-ARCH[-cudaN].oci.tar   an OCI image layout in a tar
#                                                   (skopeo's oci-archive:, podman load)
#     layer 1  Debian bookworm's libc6 with its dependencies (libgcc-s1,
#              gcc-12-base) and base-files (/etc/os-release; with mawk, its
#              pre-dependency), unpacked by mmdebstrap --variant=extract from
#              the .debs `sh tools/image.sh fetch` (tools/deps.sh) downloaded,
#              plus a dpkg status file naming them (for image scanners);
#              nothing else: no shell, no dpkg, no apt
#     layer 2  CUDA images only: cuBLAS (libcublas.so.N, libcublasLt.so.N)
#              copied unmodified from the CUDA toolkit the tarball was built
#              with, and NVIDIA's licence beside them in
#              /usr/share/doc/nvidia-cublas (docs/run-anywhere.md "Container image": why
#              not Debian's packages)
#     layer 3  the tarball, unpacked as /opt/strix
#     config   PATH=/opt/strix/bin:/usr/bin:/bin, no entrypoint and the
#              command `infer --help` (deploy/'s job definitions give the
#              command, `infer ...`); CUDA images also set
#              NVIDIA_VISIBLE_DEVICES=all and
#              NVIDIA_DRIVER_CAPABILITIES=compute,utility,video, which the
#              NVIDIA container toolkit reads to mount the driver's libraries
#              (CUDA, NVML, NVDEC/NVENC) into the container
#
#   sh tools/image.sh fetch        downloads the layer-1 packages (network;
#                                  once per package list) into build/image/debs-DEBARCH
#   sh tools/image.sh [TARBALL...] the images of the given tarballs; none
#                                  given: `make dist` with CUDA=0, and with
#                                  CUDA=1 too when CUDA is 1 (default: 1 when
#                                  nvcc is found and CC targets this machine;
#                                  CC=aarch64-linux-gnu-gcc: an arm64 image),
#                                  then their images
#
# Everything the layout holds is reproducible: owners are 0, tar entries are
# sorted, gzip stores no name or time, and times are fixed: 1970-01-01 in
# the base and cuBLAS layers (a new commit leaves them, and what nodes have
# pulled, unchanged), the commit's time (SOURCE_DATE_EPOCH if set) as the
# upper bound in the strix layer and the config.  The same inputs give the
# same digests.  Each layer is cached in build/image/layers/ under a key of
# its inputs (the package index, the cuBLAS files, the tarball's contents
# less BUILD's `built:` line, the time, this script), so a second
# `make image` re-packs only what changed; layers that no image's last build
# used are removed.  The unpacked size (the sum of the layer tars) is
# checked against the goals of docs/run-anywhere.md "Container image": at most 100 MB
# without CUDA, 1000 MB with cuBLAS (exit 1 above them).  Prints each
# archive's path on a line of its own, last.
set -eu
cd "$(dirname "$0")/.."
top=build/image
suite=bookworm
pkgs="libc6 base-files"
mirror=http://deb.debian.org/debian
# every layer's key ends in this script's digest: a change here rebuilds them
self=$(sha256sum tools/image.sh | cut -c1-16)

debarch() {
    case "$1" in
    x86_64) echo amd64 ;;
    aarch64) echo arm64 ;;
    *) echo "image: no Debian architecture for $1" >&2; exit 2 ;;
    esac
}

sha() { sha256sum "$@" | cut -c1-64; }

# fetch DEBARCH: the packages and their dependencies as apt resolves them,
# from bookworm with its updates and security updates, into a flat
# repository (the .debs and a Packages index) that `make image` hands
# mmdebstrap with no network.  apt checks the index signatures and the
# packages' hashes while downloading.
fetch() {
    a=$1
    d=$top/debs-$a
    want="$suite $pkgs"
    [ -f "$d/.complete" ] && [ "$(cat "$d/.complete")" = "$want" ] && return 0
    tmp=$top/fetch-$a
    rm -rf "$tmp" "$d"
    mkdir -p "$top"
    if ! mmdebstrap --quiet --variant=extract --architectures="$a" --include="$(echo $pkgs | tr ' ' ,)" \
        --skip=cleanup/apt/cache "$suite" "$tmp" "deb $mirror $suite main" "deb $mirror $suite-updates main" \
        "deb http://deb.debian.org/debian-security $suite-security main" >"$top/fetch-$a.log" 2>&1; then
        rm -rf "$tmp"
        echo "image: mmdebstrap could not download $pkgs ($a) from $mirror: $(grep '^E:' "$top/fetch-$a.log" | head -n 2 | tr '\n' ' ')(log $top/fetch-$a.log)" >&2
        return 1
    fi
    mkdir -p "$d"
    mv "$tmp"/var/cache/apt/archives/*.deb "$d/"
    rm -rf "$tmp"
    (cd "$d" && dpkg-scanpackages -m . /dev/null >Packages 2>/dev/null)
    echo "$want" >"$d/.complete"
    echo "image: downloaded $(ls "$d"/*.deb | wc -l) packages ($a) into $d"
}

# layer KEY DIR EPOCH: build/image/layers/KEY.tar.gz and KEY.diffid (the
# digest of the uncompressed tar), made once per KEY, times clamped to EPOCH
# (part of KEY where it varies); sets $layer to the prefix.
layer() {
    layer=$top/layers/$1
    [ -f "$layer.done" ] && return 0
    mkdir -p "$top/layers"
    # top-level entries sorted; tar sorts below them (no leading "./")
    (cd "$2" && find . -mindepth 1 -maxdepth 1 -printf '%P\n' | LC_ALL=C sort) >"$layer.list"
    tar -C "$2" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@"$3" --clamp-mtime \
        --format=posix --pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime \
        -cf "$layer.tar" -T "$layer.list"
    sha "$layer.tar" >"$layer.diffid"
    wc -c <"$layer.tar" >"$layer.bytes"
    gzip -6n <"$layer.tar" >"$layer.tar.gz"
    rm -f "$layer.tar" "$layer.list"
    touch "$layer.done"
}

# blob FILE: moves FILE into the layout's blobs under its digest; sets $digest, $size.
blob() {
    digest=$(sha "$1")
    size=$(wc -c <"$1")
    mv "$1" "$oci/blobs/sha256/$digest"
}

# image TARBALL: dist/NAME.oci.tar
image() {
    tarball=$1
    name=$(basename "$tarball" .tar.gz)
    arch=$(echo "$name" | sed -n 's/^strix-[^-]*-linux-\([a-z0-9_]*\).*/\1/p')
    version=$(echo "$name" | sed -n 's/^strix-\([^-]*\)-.*/\1/p')
    a=$(debarch "$arch")
    major=$(echo "$name" | sed -n 's/.*-cuda\([0-9]*\)$/\1/p')
    d=$top/debs-$a
    [ -f "$d/.complete" ] || { echo "image: no Debian packages for $a in $d: run 'sh tools/deps.sh' (it downloads them once)" >&2; exit 1; }
    work=$top/work-$name
    rm -rf "$work"
    mkdir -p "$work"

    # layer 1: the base root
    base_key=base-$a-$(cat "$d/Packages" | sha | cut -c1-16)-$self
    if [ ! -f "$top/layers/$base_key.done" ]; then
        root=$work/base
        if ! mmdebstrap --quiet --variant=extract --architectures="$a" --include="$(echo $pkgs | tr ' ' ,)" \
            --aptopt='Acquire::Languages "none"' "$suite" "$root" "deb [trusted=yes] copy://$PWD/$d ./" \
            >"$work/mmdebstrap.log" 2>&1; then
            echo "image: mmdebstrap failed to build the base root: $(grep '^E:' "$work/mmdebstrap.log" | head -n 2 | tr '\n' ' ')(log $work/mmdebstrap.log)" >&2
            exit 1
        fi
        # What a container engine provides (device nodes, resolv.conf,
        # hostname, hosts, fstab) and what only apt would use goes; the
        # dpkg status file stays, listing what is unpacked, with a Status
        # line after each Package line as dpkg writes it.
        rm -rf "${root:?}"/dev/* "$root"/etc/resolv.conf "$root"/etc/hostname "$root"/etc/hosts "$root"/etc/fstab "$root"/etc/apt \
            "$root"/var/cache/apt "$root"/var/lib/apt "$root"/var/log/apt
        for deb in "$d"/*.deb; do
            dpkg-deb -f "$deb" | awk 'NR == 1 { print; print "Status: install ok installed"; next } { print }'
            echo
        done >"$root/var/lib/dpkg/status"
        layer "$base_key" "$root" 0
        rm -rf "$root"
    fi
    layers=$top/layers/$base_key
    history="Debian $suite: $(cd "$d" && ls *.deb | sed 's/_[^_]*$//' | tr '\n' ' ')(mmdebstrap --variant=extract)"

    # layer 2: cuBLAS of the toolkit that built the tarball
    if [ -n "$major" ]; then
        nvcc=$(command -v nvcc) || { echo "image: $name needs cuBLAS $major from a CUDA toolkit: nvcc is not on PATH" >&2; exit 1; }
        cuda_home=${CUDA_HOME:-$(dirname "$(dirname "$nvcc")")}
        have=$(nvcc --version | sed -n 's/.*release \([0-9]*\)\..*/\1/p')
        [ "$have" = "$major" ] || { echo "image: $name was built with CUDA $major, but nvcc here is CUDA $have: its cuBLAS does not fit" >&2; exit 1; }
        lib=$cuda_home/lib64
        licence=$(ls "$cuda_home"/dist-info/nvidia_cublas-*/licenses/License.txt "$cuda_home"/EULA.txt 2>/dev/null | head -n 1 || true)
        [ -n "$licence" ] || { echo "image: no NVIDIA licence text in $cuda_home (dist-info/nvidia_cublas-*/licenses/License.txt or EULA.txt): cuBLAS is not shipped without it" >&2; exit 1; }
        cu=$work/cuda
        mkdir -p "$cu/usr/lib/$arch-linux-gnu" "$cu/usr/share/doc/nvidia-cublas"
        for so in libcublas.so.$major libcublasLt.so.$major; do
            [ -e "$lib/$so" ] || { echo "image: $lib/$so not found (cuBLAS of CUDA $major)" >&2; exit 1; }
            real=$(readlink -f "$lib/$so")
            cp -p "$real" "$cu/usr/lib/$arch-linux-gnu/"
            [ "$(basename "$real")" = "$so" ] || ln -s "$(basename "$real")" "$cu/usr/lib/$arch-linux-gnu/$so"
        done
        cp -p "$licence" "$cu/usr/share/doc/nvidia-cublas/License.txt"
        cublas_version=$(ls -d "$cuda_home"/dist-info/nvidia_cublas-* 2>/dev/null | sed -n 's/.*nvidia_cublas-\(.*\)\.dist-info/\1/p' | head -n 1)
        {
            echo "cuBLAS ${cublas_version:-of CUDA $major} (libcublas.so.$major, libcublasLt.so.$major), copied unmodified"
            echo "from the CUDA toolkit in $cuda_home, which built /opt/strix."
            echo "NVIDIA software under the licence in License.txt here, whose Attachment A lists"
            echo "libcublas.so and libcublasLt.so among the components that may be redistributed"
            echo "with an application.  strix opens libcublas.so.$major at run time (/opt/strix/BUILD)."
        } >"$cu/usr/share/doc/nvidia-cublas/README"
        cuda_key=cublas-$a-$(cd "$cu" && find . -type f -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha | cut -c1-16)-$self
        layer "$cuda_key" "$cu" 0
        rm -rf "$cu"
        layers="$layers $top/layers/$cuda_key"
        history="$history
cuBLAS ${cublas_version:-$major} from $cuda_home/lib64 (unmodified) and NVIDIA's licence"
    fi

    # layer 3: the tarball as /opt/strix
    s=$work/strix
    mkdir -p "$s/opt"
    tar xzf "$tarball" -C "$s/opt"
    mv "$s/opt/$name" "$s/opt/strix"
    strix_key=strix-$(cd "$s/opt/strix" && { find . -type f ! -name BUILD -print0 | LC_ALL=C sort -z | xargs -0 sha256sum;
        grep -v '^built: ' BUILD; echo "$epoch"; } | sha | cut -c1-16)-$self
    layer "$strix_key" "$s" "$epoch"
    commit=$(sed -n 's/^commit: //p' "$s/opt/strix/BUILD" | cut -d' ' -f1)
    rm -rf "$s"
    layers="$layers $top/layers/$strix_key"
    history="$history
$name (make dist) as /opt/strix"

    # the layout: blobs (layers, config, manifest), index.json, oci-layout
    oci=$work/oci
    mkdir -p "$oci/blobs/sha256"
    created=$(date -u -d @"$epoch" +%Y-%m-%dT%H:%M:%SZ)
    env='"PATH=/opt/strix/bin:/usr/bin:/bin"'
    [ -n "$major" ] && env="$env, \"NVIDIA_VISIBLE_DEVICES=all\", \"NVIDIA_DRIVER_CAPABILITIES=compute,utility,video\""
    tag=$version${major:+-cuda$major}
    diffids="" mlayers="" hist="" bytes=0 packed=0
    for l in $layers; do
        cp "$l.tar.gz" "$work/layer"
        blob "$work/layer"
        diffids="$diffids${diffids:+, }\"sha256:$(cat "$l.diffid")\""
        mlayers="$mlayers${mlayers:+,
    }{\"mediaType\": \"application/vnd.oci.image.layer.v1.tar+gzip\", \"digest\": \"sha256:$digest\", \"size\": $size}"
        bytes=$((bytes + $(cat "$l.bytes")))
        packed=$((packed + size))
    done
    hist=$(echo "$history" | sed 's/\\/\\\\/g; s/"/\\"/g' |
        awk -v t="$created" '{ printf "%s{\"created\": \"%s\", \"created_by\": \"tools/image.sh: %s\"}", (NR > 1 ? ",\n    " : ""), t, $0 }')
    cat >"$work/config" <<EOF
{
  "created": "$created",
  "architecture": "$a",
  "os": "linux",
  "config": {
    "Env": [$env],
    "Cmd": ["infer", "--help"],
    "WorkingDir": "/",
    "Labels": {
      "org.opencontainers.image.title": "strix",
      "org.opencontainers.image.version": "$tag",
      "org.opencontainers.image.revision": "$commit",
      "org.opencontainers.image.description": "$name: YOLO detection on videos and images (make image); licences in /opt/strix/licences and /usr/share/doc"
    }
  },
  "rootfs": {"type": "layers", "diff_ids": [$diffids]},
  "history": [
    $hist
  ]
}
EOF
    blob "$work/config"
    cat >"$work/manifest" <<EOF
{
  "schemaVersion": 2,
  "mediaType": "application/vnd.oci.image.manifest.v1+json",
  "config": {"mediaType": "application/vnd.oci.image.config.v1+json", "digest": "sha256:$digest", "size": $size},
  "layers": [
    $mlayers
  ]
}
EOF
    blob "$work/manifest"
    cat >"$oci/index.json" <<EOF
{
  "schemaVersion": 2,
  "mediaType": "application/vnd.oci.image.index.v1+json",
  "manifests": [
    {"mediaType": "application/vnd.oci.image.manifest.v1+json", "digest": "sha256:$digest", "size": $size,
     "annotations": {"org.opencontainers.image.ref.name": "strix:$tag"}}
  ]
}
EOF
    echo '{"imageLayoutVersion": "1.0.0"}' >"$oci/oci-layout"
    out=dist/$name.oci.tar
    mkdir -p dist
    tar -C "$oci" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@"$epoch" --clamp-mtime \
        -cf "$out.tmp" oci-layout index.json blobs
    mv "$out.tmp" "$out"
    rm -rf "$work"
    echo "$layers" >"$top/$name.layers"

    limit_mb=100
    [ -n "$major" ] && limit_mb=1000
    mb() { awk -v b="$1" 'BEGIN { printf "%.1f", b / 1e6 }'; }
    echo "image: $out: $(mb "$bytes") MB unpacked (limit $limit_mb MB), $(mb "$packed") MB in $(echo $layers | wc -w) gzip layers, manifest sha256:$digest"
    if [ "$bytes" -gt $((limit_mb * 1000000)) ]; then
        echo "image: $out unpacks to $(mb "$bytes") MB, over the $limit_mb MB goal (docs/run-anywhere.md \"Container image\")" >&2
        exit 1
    fi
    outs="$outs $out"
}

case "${1:-}" in
fetch)
    fetch "$(debarch "$(uname -m)")"
    [ "$(uname -m)" = aarch64 ] || fetch arm64
    exit 0
    ;;
-*)
    echo "usage: sh tools/image.sh fetch | sh tools/image.sh [TARBALL...]" >&2
    exit 2
    ;;
esac

# The strix layer's and the config's time: the commit's.
epoch=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || echo 0)}
if [ $# = 0 ]; then
    if [ -z "${CUDA:-}" ]; then
        CUDA=0
        [ "$(${CC:-cc} -dumpmachine | cut -d- -f1)" = "$(uname -m)" ] && command -v nvcc >/dev/null 2>&1 && CUDA=1
    fi
    for c in 0 $([ "$CUDA" = 1 ] && echo 1); do
        mkdir -p $top
        CUDA=$c sh tools/dist.sh >"$top/dist-$c.log" 2>&1 || {
            cat "$top/dist-$c.log" >&2
            echo "image: make dist CUDA=$c failed" >&2
            exit 1
        }
        grep '^dist: .*MB packed' "$top/dist-$c.log"
        set -- "$@" "$(tail -n 1 "$top/dist-$c.log")"
    done
fi
outs=""
for t in "$@"; do
    [ -f "$t" ] || { echo "image: $t: no such tarball (make dist makes one)" >&2; exit 2; }
    image "$t"
done
# The cache keeps the layers of each image's last build (build/image/NAME.layers).
for l in "$top"/layers/*.done; do
    [ -e "$l" ] || continue
    cat "$top"/*.layers 2>/dev/null | tr ' ' '\n' | grep -qx "${l%.done}" || rm -f "${l%.done}".*
done
for o in $outs; do echo "$o"; done
