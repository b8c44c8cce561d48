#!/usr/bin/env bash
# Set-up and the whole test suite: system packages, then every crate's tests (multi-process
# tests run real jobs through `ibdyn run`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/deps.sh
bash scripts/abi-deps.sh
cargo build --workspace --all-targets
cargo test --workspace --no-fail-fast
