#!/usr/bin/env bash
# Installs what ibdyn needs to build and test on Debian 12: libibverbs headers for the `ib`
# provider (no device needed), libclang for its bindings, MPICH (mpiexec.hydra and libmpich-dev) for the PMI-1
# compatibility test, iproute2 for network-namespace tests, openssh for the real-ssh test of
# `ibdyn run --hosts` (the test starts its own sshd per namespace), Slurm and munge for the
# single-node allocation test (which starts its own slurmctld, slurmd and munged with a
# generated configuration, whatever services the packages set up). Idempotent; needs root
# (or sudo).
set -euo pipefail
pkgs=(libibverbs-dev librdmacm-dev libclang-dev pkg-config mpich libmpich-dev iproute2 openssh-server openssh-client slurmctld slurmd slurm-client munge)
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
