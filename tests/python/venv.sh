# Sourced by the scripts here: `venv NAME PACKAGE==VERSION...` makes (or reuses) the virtual
# environment target/venvs/NAME holding exactly those pinned packages, and sets $VENV to it.
# Set PYTHON to choose the interpreter (default: python3).
venv() {
  local name="$1"
  shift
  VENV="$PWD/target/venvs/$name"
  local want="$*"
  if [ "$(cat "$VENV/.pins" 2>/dev/null)" != "$want" ]; then
    rm -rf "$VENV"
    "${PYTHON:-python3}" -m venv "$VENV"
    "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check "$@"
    echo "$want" >"$VENV/.pins"
  fi
}

# The gil-lint binary the scripts test: $GIL_LINT, or target/release/gil-lint built here.
gil_lint_binary() {
  if [ -z "${GIL_LINT:-}" ]; then
    cargo build --release --locked --quiet
    GIL_LINT="$PWD/target/release/gil-lint"
  fi
}
