#!/usr/bin/env bash
# Set-up and a real job: 4 ranks on 2 (emulated) nodes exchange messages; ranks on one node
# use shared memory, ranks on different nodes the fabric (sockets here; InfiniBand when present).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
# Only what the job needs (a release build of everything, with LTO, takes ~6 minutes on 2 cores).
cargo build --release -p ibdyn-launcher --bin ibdyn -p ibdyn --example ring
exec target/release/ibdyn run -n 4 --nodes 2 --tag-output target/release/examples/ring "$@"
