#!/usr/bin/env bash
# baseimages.sh ROOT makes the root file systems of the runtimes' base images
# from Debian's packages with debootstrap, once: ROOT/python-3.11 holds
# Debian 12's Python 3.11 (python-is-python3 names it python, as the
# official images do) with its standard library and CA certificates. Docs,
# man pages and locales are removed; apt's lists are never fetched into it.
set -euo pipefail
root=$1
mkdir -p "$root"
if [[ ! -e "$root/python-3.11.done" ]]; then
  rm -rf "$root/python-3.11" "$root/python-3.11.tar"
  echo "debootstrap python-3.11 (about 90 s)"
  debootstrap --variant=minbase \
    --include=python3.11-minimal,libpython3.11-stdlib,python3-minimal,python-is-python3,ca-certificates \
    bookworm "$root/python-3.11" http://deb.debian.org/debian >/dev/null
  rm -rf "$root/python-3.11"/usr/share/{doc,man,info,locale} "$root/python-3.11"/var/cache/apt/* "$root/python-3.11"/var/lib/apt/lists/*
  touch "$root/python-3.11.done"
fi
