#!/usr/bin/env bash
# The peers' loop method (warm-up of 5, one barrier, N operations back to back; the mean per
# process, the maximum over every process) on every MPI found, one table per benchmark:
#   intercoll  abi/bench/intercoll_loop.c: 6 intercommunicator collectives + barrier x
#              8 B / 1 KiB / 64 KiB / 1 MiB, parents + spawned children 1+3 and 2+2
#   merge      abi/bench/merge_loop.c: MPI_Intercomm_merge + MPI_Comm_free, 1+1 and 1+8
# Columns: ibdyn's own benchmark (`ibdyn-bench ... --method loop`, the Rust API), the C
# program on ibdyn (built with MPICH 5's mpicc_abi, run by `ibdyn run --abi`), MPICH 5 (the
# PyPI wheel), Open MPI 4.1 (Debian; as is, and with mpi_yield_when_idle 1, as Open MPI
# busy-polls), Debian's MPICH 4.0; then the best peer and ibdyn / best peer (< 1: ibdyn is
# faster). A library that is absent (or whose spawn fails) is skipped with a message.
#
#   bash scripts/compare-peers.sh [--runs N] [--out DIR] [--quick] [intercoll|merge ...]
# --only a,b: just those columns (ibdyn-rs ibdyn-c mpich5 ompi ompi-yield mpich4); several
# --only runs into one --out DIR, then --table DIR prints the tables of every column kept
# there (each run under its own lock, when one run of everything takes too long).
# --runs N: N runs one after the other, each printed (check "3 of 3"); --out DIR keeps the
# per-run figures (DIR/RUN/BENCH.IMPL, lines "CELL US") for `ibdyn-bench plot-intercomm`.
# Environment: BENCH_ITERS (base repetitions, default 1000: 8 B and 1 KiB cells and merge;
# 64 KiB a tenth, 1 MiB a fiftieth).
# Needs: cargo build --release -p ibdyn-bench -p ibdyn-launcher -p ibdyn-abi, and
# scripts/abi-deps.sh (IBDYN_MPI4PY=0 is enough) for MPICH 5.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
venv=$root/target/abi-venv
rel=$root/target/${IBDYN_PROFILE:-release}
runs=1 out= quick=0 only= table_only= benches=()
while [ $# -gt 0 ]; do
  case $1 in
    --runs) runs=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    --only) only=,$2,; shift 2 ;;
    --table) table_only=$2; shift 2 ;;
    intercoll|merge) benches+=("$1"); shift ;;
    *) echo "compare-peers: unknown argument $1 (see the head of $0)" >&2; exit 2 ;;
  esac
done
[ ${#benches[@]} -gt 0 ] || benches=(intercoll merge)
work=$(mktemp -d "${TMPDIR:-/tmp}/ibdyn-peers.XXXXXX")
trap 'rm -rf "$work"' EXIT
[ -n "$out" ] || out=$work/out
mkdir -p "$out"
if [ $quick = 1 ]; then export BENCH_ITERS=${BENCH_ITERS:-20}; fi

# The column names and how each builds and runs: "NAME|CC|LAUNCHER...".
impls=()
if [ -x "$rel/ibdyn-bench" ] && [ -x "$rel/ibdyn" ]; then
  impls+=("ibdyn-rs|-|-")
else
  echo "compare-peers: skipping ibdyn's own benchmark: build it with cargo build --release -p ibdyn-bench -p ibdyn-launcher" >&2
fi
if [ -x "$venv/bin/mpicc_abi" ] && [ -x "$rel/ibdyn" ] && [ -f "$rel/libmpi_abi.so" ]; then
  impls+=("ibdyn-c|$venv/bin/mpicc_abi|$rel/ibdyn run --abi -n")
else
  echo "compare-peers: skipping the C programs on ibdyn: needs scripts/abi-deps.sh and cargo build --release -p ibdyn-abi -p ibdyn-launcher" >&2
fi
if [ -x "$venv/bin/mpicc_abi" ]; then
  impls+=("mpich5|$venv/bin/mpicc_abi|env -u LD_LIBRARY_PATH $venv/bin/mpiexec -n")
else
  echo "compare-peers: skipping MPICH 5: run scripts/abi-deps.sh (the PyPI wheel)" >&2
fi
if command -v mpicc.openmpi >/dev/null && command -v mpirun.openmpi >/dev/null; then
  ompi="mpirun.openmpi --allow-run-as-root --oversubscribe"
  impls+=("ompi|mpicc.openmpi|$ompi -n" "ompi-yield|mpicc.openmpi|$ompi --mca mpi_yield_when_idle 1 -n")
else
  echo "compare-peers: skipping Open MPI: mpicc.openmpi / mpirun.openmpi not found (apt-get install libopenmpi-dev openmpi-bin)" >&2
fi
if command -v mpicc.mpich >/dev/null && command -v mpiexec.hydra >/dev/null; then
  impls+=("mpich4|mpicc.mpich|mpiexec.hydra -n")
else
  echo "compare-peers: skipping Debian MPICH 4.0: mpicc.mpich / mpiexec.hydra not found" >&2
fi

prog() { case $1 in intercoll) echo intercoll_loop ;; merge) echo merge_loop ;; esac; }
cells() { case $1 in intercoll) echo 1+3 2+2 ;; merge) echo 1+1 1+8 ;; esac; }

# Build every C program once per compiler; an implementation whose spawn does not work here
# (a one-iteration probe fails) is dropped with a message.
live=()
[ -z "$table_only" ] || impls=()
for spec in "${impls[@]}"; do
  IFS='|' read -r name cc launch <<<"$spec"
  if [ -n "$only" ] && [[ $only != *,$name,* ]]; then continue; fi
  if [ "$cc" != - ]; then
    ok=1
    for p in intercoll_loop merge_loop; do
      exe=$work/$p.${cc##*/}
      [ -x "$exe" ] || "$cc" -O2 -o "$exe" "abi/bench/$p.c" 2>"$work/$name.probe" || ok=0
    done
    if [ $ok = 1 ] && ! (cd "$work" && BENCH_ITERS=1 timeout 60 $launch 1 "$exe" 1 >/dev/null 2>"$work/$name.probe"); then
      ok=0
    fi
    if [ $ok = 0 ]; then
      echo "compare-peers: skipping $name: building or a spawn probe failed: $(head -c 300 "$work/$name.probe" 2>/dev/null | tr '\n' ' ')" >&2
      continue
    fi
  fi
  live+=("$spec")
done

# Waits (at most 10 s) until the machine has been idle for 0.3 s: a library's processes
# that are still exiting (busy-polling ranks, a process manager tearing down) would
# otherwise take the cores from the first cells of the next one.
settle() {
  local i busy=0 quiet=0 a b
  for i in $(seq 100); do
    a=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat)
    sleep 0.1
    b=$(awk '/^cpu /{print $2+$3+$4+$7+$8, $2+$3+$4+$5+$6+$7+$8}' /proc/stat)
    busy=$(echo "$a $b" | awk '{d = $4 - $2; print (d > 0 && ($3 - $1) / d < 0.1) ? 0 : 1}')
    if [ "$busy" = 0 ]; then quiet=$((quiet + 1)); else quiet=0; fi
    [ $quiet -lt 3 ] || return 0
  done
  echo "compare-peers: the machine did not get idle in 10 s; measuring anyway" >&2
}

# Runs one implementation on one benchmark; prints "CELL US" lines.
measure() {
  local name=$1 cc=$2 launch=$3 b=$4 p c
  if [ "$name" = ibdyn-rs ]; then
    local base=${BENCH_ITERS:-}
    for pc in $(cells "$b"); do
      settle
      case $b in
        intercoll) "$rel/ibdyn-bench" intercomm-coll --method loop --groups "$pc" --json \
                     ${base:+--iters $base} ;;
        merge) "$rel/ibdyn-bench" merge --method loop --parents "${pc%+*}" --children "${pc#*+}" \
                 --json --reps $(( (${base:-1000} + 49) / 50 )) ;;
      esac
    done | python3 -c '
import json, sys
for l in sys.stdin:
    r = json.loads(l)
    if r.get("stat") != "max": continue
    cell = r["groups"] + (":%s:%s" % (r["op"], r["size"]) if "op" in r else ":merge")
    print(cell, r["value"])'
    return
  fi
  local exe=$work/$(prog "$b").${cc##*/}
  for pc in $(cells "$b"); do
    p=${pc%+*} c=${pc#*+}
    settle
    (cd "$work" && timeout 300 $launch "$p" "$exe" "$c") | grep -v '^#' || echo "compare-peers: $name $b $p+$c failed" >&2
  done
}

table() {
  local dir=$1 b=$2
  python3 - "$dir" "$b" "${names[@]}" <<'EOF'
import os, sys
d, b, names = sys.argv[1], sys.argv[2], sys.argv[3:]
cols = {}
for n in names:
    f = os.path.join(d, f"{b}.{n}")
    cols[n] = dict(l.split() for l in open(f) if l.strip()) if os.path.exists(f) else {}
order = []
for n in names:
    for k in cols[n]:
        if k not in order: order.append(k)
mine = [n for n in names if n.startswith("ibdyn")]
peers = [n for n in names if not n.startswith("ibdyn")]
head = ["cell"] + names + ["best peer"] + [f"{n}/best" for n in mine]
rows = [head]
lose = 0
for k in order:
    v = {n: float(cols[n][k]) for n in names if k in cols[n]}
    pv = [(v[n], n) for n in peers if n in v]
    best = min(pv) if pv else None
    row = [k] + [f"{v[n]:.2f}" if n in v else "-" for n in names]
    row.append(f"{best[0]:.2f} {best[1]}" if best else "-")
    for n in mine:
        r = v[n] / best[0] if best and n in v and best[0] > 0 else None
        row.append(f"{r:.2f}" if r is not None else "-")
        if n == mine[0] and r is not None and r > 1: lose += 1
    rows.append(row)
w = [max(len(r[i]) for r in rows) for i in range(len(head))]
for r in rows:
    print("  ".join(s.rjust(w[i]) if i else s.ljust(w[i]) for i, s in enumerate(r)))
print(f"# {mine[0] if mine else 'ibdyn'}: {lose} cell(s) behind the best peer")
EOF
}

if [ -n "$table_only" ]; then
  names=()
  for n in ibdyn-rs ibdyn-c mpich5 ompi ompi-yield mpich4; do
    ls "$table_only"/*/*."$n" >/dev/null 2>&1 && names+=("$n")
  done
  for d in $(ls -d "$table_only"/*/ | sort -V); do
    for b in "${benches[@]}"; do
      echo "## $b, loop method, run $(basename "$d") (us; mean per process, max over all processes)"
      table "$d" "$b"
      echo
    done
  done
  exit 0
fi
names=()
for spec in "${live[@]}"; do IFS='|' read -r name _ _ <<<"$spec"; names+=("$name"); done
for run in $(seq 1 "$runs"); do
  mkdir -p "$out/$run"
  for b in "${benches[@]}"; do
    for spec in "${live[@]}"; do
      IFS='|' read -r name cc launch <<<"$spec"
      measure "$name" "$cc" "$launch" "$b" > "$out/$run/$b.$name"
    done
    echo "## $b, loop method, run $run of $runs (us; mean per process, max over all processes)"
    table "$out/$run" "$b"
    echo
  done
done
