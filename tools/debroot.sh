#!/bin/sh
# debroot.sh — Debian bookworm binary packages for the `make dist` checks,
# downloaded once (network) and unpacked without installing anything:
#
#   sh tools/debroot.sh fetch              downloads the .debs below into
#                                          build/debroot/debs (tools/deps.sh)
#   sh tools/debroot.sh bare ARCH DIR      DIR becomes a root file system with
#                                          only glibc (libc6 of ARCH unpacked):
#                                          where tests/cli_dist.sh runs the tarball
#   sh tools/debroot.sh sysroot ARCH DIR   DIR gets the arm64 -dev packages
#                                          (headers and static archives) that an
#                                          aarch64 `make dist` links (Makefile
#                                          SYSROOT=DIR)
#
# Packages: libc6 for amd64 and arm64; for arm64 libyaml-dev,
# libjpeg62-turbo-dev, libstb-dev, zlib1g-dev, libx264-dev, libmbedtls-dev.
# They come through apt with a configuration of the build's own
# (build/debroot/apt: sources for bookworm, bookworm-updates and
# bookworm-security, architectures amd64 and arm64), so the machine's apt
# setup and dpkg database are untouched (no `dpkg --add-architecture`) and no
# root is needed; apt checks the index signatures and the packages' hashes.
# ARCH is x86_64 or aarch64 (Debian's amd64, arm64).
set -eu
cd "$(dirname "$0")/.."
top=build/debroot
debs=$top/debs
pkgs="libc6:amd64 libc6:arm64 libyaml-dev:arm64 libjpeg62-turbo-dev:arm64 libstb-dev:arm64 zlib1g-dev:arm64
      libx264-dev:arm64 libmbedtls-dev:arm64"

debarch() {
    case "$1" in
    x86_64) echo amd64 ;;
    aarch64) echo arm64 ;;
    *) echo "debroot: no Debian architecture for $1" >&2; exit 2 ;;
    esac
}

deb_of() { # PACKAGE DEBARCH -> the downloaded file
    f=$(ls "$debs/$1"_*_"$2".deb 2>/dev/null | head -n 1)
    [ -n "$f" ] || { echo "debroot: no $1 ($2) in $debs: run 'sh tools/deps.sh' (it downloads them once)" >&2; exit 1; }
    echo "$f"
}

case "${1:-}" in
fetch)
    # shellcheck disable=SC2086 # $pkgs: words
    [ -f "$debs/.complete" ] && [ "$(cat "$debs/.complete")" = "$(echo $pkgs)" ] && exit 0
    mkdir -p "$top/apt/lists/partial" "$top/apt/cache/archives/partial" "$debs"
    cat >"$top/apt/sources.list" <<'EOF'
deb [arch=amd64,arm64] http://deb.debian.org/debian bookworm main
deb [arch=amd64,arm64] http://deb.debian.org/debian bookworm-updates main
deb [arch=amd64,arm64] http://deb.debian.org/debian-security bookworm-security main
EOF
    a=$PWD/$top/apt
    set -- -q -o Dir::Etc::SourceList="$a/sources.list" -o Dir::Etc::SourceParts=/dev/null \
        -o Dir::State::Lists="$a/lists" -o Dir::Cache="$a/cache" -o Debug::NoLocking=1 \
        -o APT::Architectures::=amd64 -o APT::Architectures::=arm64 -o APT::Sandbox::User=root
    apt-get "$@" update >/dev/null
    rm -f "$debs"/*.deb
    # shellcheck disable=SC2086 # $pkgs: words
    (cd "$debs" && apt-get "$@" download $pkgs >/dev/null)
    # shellcheck disable=SC2086
    echo $pkgs >"$debs/.complete"
    echo "debroot: downloaded $(ls "$debs"/*.deb | wc -l) packages into $debs"
    ;;
bare)
    a=$(debarch "${2:?usage: debroot.sh bare ARCH DIR}")
    dir=${3:?usage: debroot.sh bare ARCH DIR}
    rm -rf "$dir"
    mkdir -p "$dir"
    dpkg-deb -x "$(deb_of libc6 "$a")" "$dir"
    ;;
sysroot)
    a=$(debarch "${2:?usage: debroot.sh sysroot ARCH DIR}")
    dir=${3:?usage: debroot.sh sysroot ARCH DIR}
    [ -f "$dir/.complete" ] && exit 0
    rm -rf "$dir"
    mkdir -p "$dir"
    for p in libyaml-dev libjpeg62-turbo-dev libstb-dev zlib1g-dev libx264-dev libmbedtls-dev; do
        dpkg-deb -x "$(deb_of $p "$a")" "$dir"
    done
    touch "$dir/.complete"
    ;;
*)
    echo "usage: sh tools/debroot.sh fetch | bare ARCH DIR | sysroot ARCH DIR" >&2
    exit 2
    ;;
esac
