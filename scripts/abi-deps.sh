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

# mpi4py from its PyPI source, built against ibdyn (MPI4PY_BUILD_MPICC=ibdyn-cc), for
# abi/tests/mpi4py.rs. Built with -O0: the 260k-line C file then compiles in under a minute
# (several minutes optimised), and the suite tests the bindings, not their speed.
# IBDYN_MPI4PY=0 skips it (the test then says SKIPPED).
if [ "${IBDYN_MPI4PY:-1}" = 1 ]; then
  pyvenv=target/mpi4py-venv
  if ! "$pyvenv/bin/python" -c 'import mpi4py' 2>/dev/null; then
    cargo build -p ibdyn-abi
    python3 -m venv "$pyvenv"
    CFLAGS=-O0 MPI4PY_BUILD_MPICC="$PWD/target/debug/ibdyn-cc" IBDYN_ABI_LIBDIR="$PWD/target/debug" \
      "$pyvenv/bin/pip" install --quiet --disable-pip-version-check --no-binary=mpi4py mpi4py==4.1.2
  fi
fi

# mpi4py's own test suite (the test/ directory of the same sdist), for abi/tests/
# mpi4py.rs: programs written for other MPIs, run unchanged on ibdyn.
if [ "${IBDYN_MPI4PY:-1}" = 1 ] && [ ! -f target/mpi4py-tests/main.py ]; then
  sdist=$(mktemp -d)
  if target/mpi4py-venv/bin/pip download --quiet --disable-pip-version-check --no-deps \
    --no-binary=:all: -d "$sdist" mpi4py==4.1.2; then
    mkdir -p target/mpi4py-tests
    tar -xzf "$sdist"/mpi4py-4.1.2.tar.gz -C target/mpi4py-tests --strip-components=2 mpi4py-4.1.2/test
  else
    echo "abi-deps: could not download mpi4py's sdist; abi/tests/mpi4py.rs will say SKIPPED for its test suite" >&2
  fi
  rm -rf "$sdist"
fi
