#!/usr/bin/env bash
# MPICH 5 from PyPI, in a virtual environment under target/: its mpi_abi.h is the reference the
# ABI constants test (abi/tests/abi_constants.rs) compares ibdyn's mpi.h with. Idempotent.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/abi-venv
if [ ! -f "$venv/include/mpi_abi.h" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check mpich==5.0.2
fi
test -f "$venv/include/mpi_abi.h" || {
  echo "abi-deps: mpich==5.0.2 installed but $venv/include/mpi_abi.h is missing" >&2
  exit 1
}
