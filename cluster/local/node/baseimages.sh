#!/usr/bin/env bash
# baseimages.sh ROOT makes the root file systems of the runtimes' base images
# from Debian 12's packages with debootstrap, each once:
#   ROOT/python-3.11  Python 3.11 (python-is-python3 names it python, as the
#                     official images do) with its standard library
#   ROOT/nodejs-18    Node.js 18 (no npm: builds have no network to install
#                     dependencies with)
# each with CA certificates. Docs, man pages and locales are removed; apt's
# lists are never fetched into them.
set -euo pipefail
root=$1
mkdir -p "$root"

# rootfs NAME PACKAGES makes ROOT/NAME with PACKAGES, unless it was made.
rootfs() {
  local name=$1 packages=$2
  [[ -e "$root/$name.done" ]] && return
  rm -rf "${root:?}/$name" "$root/$name.tar"
  echo "debootstrap $name (a minute or two)"
  debootstrap --variant=minbase --include="$packages,ca-certificates" \
    bookworm "$root/$name" http://deb.debian.org/debian >/dev/null
  rm -rf "$root/$name"/usr/share/{doc,man,info,locale} "$root/$name"/var/cache/apt/* "$root/$name"/var/lib/apt/lists/*
  touch "$root/$name.done"
}

rootfs python-3.11 python3.11-minimal,libpython3.11-stdlib,python3-minimal,python-is-python3
rootfs nodejs-18 nodejs
