#!/usr/bin/env bash
# packages.sh installs the Debian packages the local cluster runs with, those
# that are missing: containerd and runc run pods, the CNI plugins connect
# them, iptables carries kube-proxy's rules, conntrack lets kube-proxy clear
# stale connections, debootstrap makes the runtimes' base images.
set -euo pipefail
packages=(containerd runc containernetworking-plugins iptables conntrack debootstrap)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if (( ${#missing[@]} )); then
  echo "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
