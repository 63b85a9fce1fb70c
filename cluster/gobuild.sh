#!/usr/bin/env bash
# gobuild.sh OUT NAME MODDIR PKG [LDFLAGS]
#
# Builds the command PKG inside the wrapper module MODDIR into OUT/NAME, and
# does nothing when OUT/NAME was already built from the same go.mod and go.sum.
# Wrapper modules pin each tool to an exact version, because the module proxy
# here refuses @latest and version listing.
#
# Files below MODDIR/_overlay/MODULE@VERSION/ are added to a copy of that
# module, which the build uses in its place (go build -modfile with a
# replace): a wrapper's way to fill in what a pinned module lacks against the
# versions it builds with. (go build -overlay refuses files in the module
# cache.)
set -euo pipefail

if [[ $# -lt 4 ]]; then
  echo "usage: $0 OUT NAME MODDIR PKG [LDFLAGS]" >&2
  exit 2
fi
name=$2 dir=$3 pkg=$4 ldflags=${5:-}
# Absolute, because the build runs inside the wrapper module.
out=$(mkdir -p "$1" && cd "$1" && pwd)

# A peer's wrapper has no go.sum until its first build writes one.
overlay=
if [[ -d "$dir/_overlay" ]]; then
  overlay=$(cd "$dir/_overlay" && pwd)
fi
stamp=$( (cat "$dir/go.mod"; cat "$dir/go.sum" 2>/dev/null || true; echo "$pkg $ldflags"
  if [[ -n "$overlay" ]]; then (cd "$overlay" && find . -type f | sort | xargs cat); fi) | sha256sum | cut -c1-16)
if [[ -x "$out/$name" && "$(cat "$out/$name.stamp" 2>/dev/null)" == "$stamp" ]]; then
  exit 0
fi
echo "building $name from $dir (a cold build can take minutes)"
flags=()
if [[ -n "$overlay" ]]; then
  # The copies and the go.mod naming them are the binary's own, so two
  # builds at once never share one.
  patched="$out/$name.patched"
  rm -rf "$patched" && mkdir -p "$patched"
  trap 'rm -rf "$patched"' EXIT
  cp "$dir/go.mod" "$patched/go.mod" && cp "$dir/go.sum" "$patched/go.sum"
  while read -r modver; do
    src=$(cd "$dir" && go mod download -json "$modver" | sed -n 's/^\t"Dir": "\(.*\)",$/\1/p')
    mkdir -p "$(dirname "$patched/$modver")"
    cp -R "$src" "$patched/$modver" && chmod -R u+w "$patched/$modver"
    cp -R "$overlay/$modver/." "$patched/$modver/"
    echo "replace ${modver%@*} ${modver#*@} => $patched/$modver" >> "$patched/go.mod"
  done < <(cd "$overlay" && find . -type d -name '*@*' -prune | sed 's|^\./||')
  flags=(-modfile "$patched/go.mod")
fi
(cd "$dir" && CGO_ENABLED=0 go build -trimpath "${flags[@]}" -ldflags "-s -w $ldflags" -o "$out/$name.tmp" "$pkg")
mv "$out/$name.tmp" "$out/$name"
echo "$stamp" > "$out/$name.stamp"
