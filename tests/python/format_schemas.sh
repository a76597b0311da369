#!/usr/bin/env bash
# Validates gil-lint's `gitlab` and `rdjson` reports for every fixture against their schemas
# (vendored in tests/schemas/, see its README), checks that the `junit` XML is well formed and
# has the shape ruff writes, and that every `json-lines` line is a JSON object; offline, with
# jsonschema in a pinned venv.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/python/venv.sh
venv formats jsonschema==4.26.0
gil_lint_binary
exec "$VENV/bin/python" tests/python/format_schemas.py "$GIL_LINT"
