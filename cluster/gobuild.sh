#!/usr/bin/env bash
# gobuild.sh OUT NAME MODDIR PKG [LDFLAGS]
#
# Builds the command PKG inside the wrapper module MODDIR into OUT/NAME, and
# does nothing when OUT/NAME was already built from the same go.mod and go.sum.
# Wrapper modules pin each tool to an exact version, because the module proxy
# here refuses @latest and version listing.
set -euo pipefail

if [[ $# -lt 4 ]]; then
  echo "usage: $0 OUT NAME MODDIR PKG [LDFLAGS]" >&2
  exit 2
fi
name=$2 dir=$3 pkg=$4 ldflags=${5:-}
# Absolute, because the build runs inside the wrapper module.
out=$(mkdir -p "$1" && cd "$1" && pwd)

# A peer's wrapper has no go.sum until its first build writes one.
stamp=$( (cat "$dir/go.mod"; cat "$dir/go.sum" 2>/dev/null || true; echo "$pkg $ldflags") | sha256sum | cut -c1-16)
if [[ -x "$out/$name" && "$(cat "$out/$name.stamp" 2>/dev/null)" == "$stamp" ]]; then
  exit 0
fi
echo "building $name from $dir (a cold build can take minutes)"
(cd "$dir" && CGO_ENABLED=0 go build -trimpath -ldflags "-s -w $ldflags" -o "$out/$name.tmp" "$pkg")
mv "$out/$name.tmp" "$out/$name"
echo "$stamp" > "$out/$name.stamp"
