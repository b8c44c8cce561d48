#!/usr/bin/env bash
# Installs what ibdyn needs to build and test on Debian 12: libibverbs headers for the `ib`
# provider (no device needed), libclang for its bindings, MPICH's mpiexec.hydra for the PMI-1
# compatibility test, iproute2 for network-namespace tests. Idempotent; needs root (or sudo).
set -euo pipefail
pkgs=(libibverbs-dev librdmacm-dev libclang-dev pkg-config mpich libmpich-dev iproute2)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  SUDO=""
  [ "$(id -u)" -ne 0 ] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null; then
  echo "cargo not found: install Rust (https://rustup.rs) first" >&2
  exit 1
fi
