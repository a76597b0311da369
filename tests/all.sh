#!/usr/bin/env bash
# The whole test suite: the Rust tests (unit, fixtures, snapshots, docs) and the kernels' runtime
# oracle, which builds the fp8 extension variants and checks that gil-lint's verdict on each matches
# what really happens when it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked
cargo test --release --locked
if [ -x kernels/test.sh ]; then
  GIL_LINT="$PWD/target/release/gil-lint" kernels/test.sh
fi
