#!/usr/bin/env bash
# Runs every benchmark once (release build) and keeps each table in $OUT (default bench-results/).
# Takes 15-25 minutes on 2 cores. The tables in docs/benchmarks.md come from this script.
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-bench-results}
mkdir -p "$OUT"
cargo build --release --workspace --bins --examples >/dev/null
B=target/release/ibdyn-bench
I=target/release/ibdyn
run() { local name=$1; shift; echo "== $name: $*"; timeout 900 "$@" > "$OUT/$name.txt" 2>&1 || echo "   (failed: see $OUT/$name.txt)"; }
run latency-1node   $B latency --nodes 1
run latency-2nodes  $B latency --nodes 2 --iters 5000
run bw-1node        $B bw --nodes 1
run bw-2nodes       $B bw --nodes 2 --iters 50
for op in barrier bcast reduce allreduce allgather alltoall; do
  run coll-$op-n4        $B coll --op $op -n 4 --iters 300
  run icoll-$op          $B intercomm-coll --op $op --iters 300
done
for op in bcast allreduce; do
  run coll-$op-n8-2nodes $B coll --op $op -n 8 --nodes 2 --iters 200
done
run init            $B init
run pmi             $B pmi
run launch          $B launch
run spawn-latency        $B spawn-latency
run spawn-latency-rc     $B spawn-latency --wireup rc --parents 1 --children 1,8
run spawn-latency-2nodes $B spawn-latency --nodes 2 --parents 1,2 --children 1,8
run spawn-rate      $B spawn-rate --children 1,2,4
run spawn-burst     $B spawn-burst --burst 16 --bursts 10
run spawn-burst-prestart $B spawn-burst --burst 16 --bursts 10 --prestart 8
run merge           $B merge --parents 1,2,4,8 --reps 50
run intercomm-latency-1node  $B intercomm-latency --nodes 1
run intercomm-latency-2nodes $B intercomm-latency --nodes 2
$I dvm stop >/dev/null 2>&1
$I dvm start --nodes 1 >/dev/null && {
  run spawn-latency-dvm $B spawn-latency --dvm
  run spawn-rate-dvm    $B spawn-rate --dvm --children 1,2,4
  run merge-dvm         $B merge --dvm --parents 1,2 --reps 50
  $I dvm stop >/dev/null
}
RT=target/release/raytrace
for w in 1 2 4; do
  run raytrace-spawned-$w sh -c "$I run -n 1 $RT --workers $w -q -o /tmp/rt-$w.png"
  run raytrace-static-$w  sh -c "$I run -n $((w + 1)) $RT --static -q -o /tmp/rts-$w.png"
done
run raytrace-grow sh -c "$I run -n 1 $RT --workers 1 --grow-at 25%:+3 -q -o /tmp/rt-grow.png"
run raytrace-local sh -c "$RT --local -q -o /tmp/rt-local.png"
echo "tables in $OUT/"
