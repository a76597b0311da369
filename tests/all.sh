#!/usr/bin/env bash
# The whole test suite: the Rust tests (unit, fixtures and snapshots, configuration, SARIF, CLI,
# docs), the ecosystem checks in tests/python/ (SARIF against the OASIS schema, the GitLab and
# rdjson reports against theirs and the JUnit XML's shape, the pre-commit hook
# through `pre-commit try-repo`, the pip wheel), each in its own pinned venv under target/venvs/,
# the example GitHub workflow through actionlint (tests/workflow.sh),
# and the kernels' runtime oracle, which builds the fp8 extension variants and checks that
# gil-lint's verdict on each matches what really happens when it runs.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked
cargo test --release --locked
export GIL_LINT="$PWD/target/release/gil-lint"
tests/python/sarif_schema.sh
tests/python/format_schemas.sh
tests/python/pre_commit.sh
tests/python/wheel.sh
tests/workflow.sh
if [ -x kernels/test.sh ]; then
  kernels/test.sh
fi
