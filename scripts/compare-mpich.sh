#!/usr/bin/env bash
# The C benchmarks of abi/bench, each built ONCE with MPICH 5's mpicc_abi, run on ibdyn
# (`ibdyn run --abi`) and then on MPICH 5 (the wheel's mpiexec): one table per benchmark with
# both columns and the ratio ibdyn/MPICH (times: < 1 means ibdyn is faster; rates: > 1).
#
#   bash scripts/compare-mpich.sh [--quick] [BENCH...]     (BENCH: pingpong spawn_latency
#                                                            spawn_rate merge intercoll connect rma io
#                                                            allreduce rma_fence rma_lock)
# --quick: a smoke run (few iterations, small sizes, spawns of up to 4), not a measurement.
# Environment: BENCH_ITERS, BENCH_MAX_SIZE (bytes), BENCH_MAX_PROCS (spawn_rate).
# Needs: cargo build --release -p ibdyn-abi -p ibdyn-launcher, and scripts/abi-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/target/abi-venv
profile=${IBDYN_PROFILE:-release}
ibdyn=$root/target/$profile/ibdyn
if [ "${1:-}" = "--quick" ]; then
  export BENCH_ITERS=${BENCH_ITERS:-3} BENCH_MAX_SIZE=${BENCH_MAX_SIZE:-64} BENCH_MAX_PROCS=${BENCH_MAX_PROCS:-4}
  shift
fi
benches=("$@")
[ ${#benches[@]} -gt 0 ] || benches=(pingpong spawn_latency spawn_rate merge intercoll connect rma io)
[ -x "$venv/bin/mpicc_abi" ] || { echo "compare-mpich: run scripts/abi-deps.sh first (MPICH 5 wheel)" >&2; exit 1; }
[ -x "$ibdyn" ] || { echo "compare-mpich: build first: cargo build --$profile -p ibdyn-abi -p ibdyn-launcher (or IBDYN_PROFILE=debug)" >&2; exit 1; }
[ -f "$root/target/$profile/libmpi_abi.so" ] || { echo "compare-mpich: libmpi_abi.so missing in target/$profile: cargo build -p ibdyn-abi" >&2; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/ibdyn-compare.XXXXXX")
trap 'rm -rf "$work"' EXIT

nprocs() {
  case $1 in
    pingpong | connect | rma | io | rma_fence | rma_lock) echo 2 ;; intercoll | allreduce) echo 4 ;; merge) echo 2 ;; *) echo 1 ;;
  esac
}

for b in "${benches[@]}"; do
  exe=$work/$b
  "$venv/bin/mpicc_abi" -O2 -o "$exe" "abi/bench/$b.c"
  n=$(nprocs "$b")
  timeout 600 "$ibdyn" run --abi -n "$n" "$exe" > "$work/$b.ibdyn"
  # MPICH's own library: the binary's RUNPATH, nothing of ibdyn's on the library path.
  (cd "$work" && env -u LD_LIBRARY_PATH timeout 600 "$venv/bin/mpiexec" -n "$n" "$exe") > "$work/$b.mpich"
  grep '^# ' "$work/$b.ibdyn" | head -n 1
  printf '%-16s %14s %14s %8s\n' "$(grep '^# ' "$work/$b.ibdyn" | sed -n 2p | awk '{print $2}')" ibdyn "MPICH 5" ratio
  join <(grep -v '^#' "$work/$b.ibdyn" | sort) <(grep -v '^#' "$work/$b.mpich" | sort) |
    sort -V |
    awk '{ r = ($3 > 0) ? $2 / $3 : 0; printf "%-16s %14s %14s %8.2f\n", $1, $2, $3, r }'
  echo
done
