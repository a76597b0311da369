#!/usr/bin/env bash
# Benchmark (never a test): gil-lint against ast-grep on the same tree, run alternately.
#
#   benches/compare.sh CORPUS
#
# Prints, for each tool, the median wall time and the peak memory (max RSS, /usr/bin/time -v) of
# RUNS runs after one warm-up, the ratio of the medians; then the same with gil-lint's cache warm
# (the tree unchanged, then one file edited before each run); then a scaling run (CORPUS once and
# twice). Cold runs pass `--no-cache`. Environment:
#   RUNS      counted runs per tool (default 10)
#   THREADS   worker threads for both tools (default: the number of cores)
#   GIL_LINT  the gil-lint binary (default: built here with `cargo build --profile dist`, what ships)
#   AST_GREP  the ast-grep binary (default: PyPI ast-grep-cli==$AST_GREP_VERSION installed in its
#             own venv under target/bench/)
#   SCALING   set to 0 to skip the scaling run
#   WARM      set to 0 to skip the warm runs (the cache kept between runs, issue 17)
#   EDITED    the file, relative to CORPUS, that the edited warm runs append a line to (default:
#             TransformerEngine's PyTorch bindings, on the path of most of its bindings)
#   AST_GREP_RULES  `anchors` adds the other four rules of docs/performance.md's anchor runs
#             (`gil_scoped_release` declarations; PyO3 `allow_threads`, `detach`, `attach`), so
#             that ast-grep also parses the Rust files
#
# The ast-grep rule matches what gil-lint's bindings start from: `.def(...)` registrations whose
# last argument is `call_guard<gil_scoped_release>()`, and `gil_scoped_acquire` declarations
# (pybind11 and nanobind spellings), with .h/.cu/.cuh read as C++.
set -euo pipefail

corpus=${1:?usage: benches/compare.sh CORPUS}
corpus=$(cd "$corpus" && pwd)
here=$(cd "$(dirname "$0")/.." && pwd)
runs=${RUNS:-10}
threads=${THREADS:-$(nproc)}
AST_GREP_VERSION=0.51.1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ -z "${GIL_LINT:-}" ]]; then
  cargo build --profile dist --locked --quiet --manifest-path "$here/Cargo.toml"
  GIL_LINT=$here/target/dist/gil-lint
fi
if [[ -z "${AST_GREP:-}" ]]; then
  venv=$here/target/bench/astgrep-venv
  if [[ ! -x $venv/bin/ast-grep ]]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet "ast-grep-cli==$AST_GREP_VERSION"
  fi
  AST_GREP=$venv/bin/ast-grep
fi

mkdir -p "$work/sg/rules"
cat > "$work/sg/sgconfig.yml" <<'YAML'
ruleDirs: [rules]
languageGlobs:
  cpp: ["*.h", "*.cu", "*.cuh"]
YAML
cat > "$work/sg/rules/gil.yml" <<'YAML'
id: def-call-guard-release
language: cpp
severity: warning
rule:
  any:
    - pattern: $M.def($N, $F, $$$, py::call_guard<py::gil_scoped_release>())
    - pattern: $M.def($N, $F, $$$, nb::call_guard<nb::gil_scoped_release>())
---
id: gil-scoped-acquire-decl
language: cpp
severity: warning
rule:
  any:
    - pattern: py::gil_scoped_acquire $G;
    - pattern: nb::gil_scoped_acquire $G;
YAML

if [[ "${AST_GREP_RULES:-}" == anchors ]]; then
  cat >> "$work/sg/rules/gil.yml" <<'YAML'
---
id: gil-scoped-release-decl
language: cpp
severity: warning
rule:
  any:
    - pattern: py::gil_scoped_release $G;
    - pattern: nb::gil_scoped_release $G;
---
id: rs-allow-threads
language: rust
severity: warning
rule:
  pattern: $P.allow_threads($$$)
---
id: rs-detach
language: rust
severity: warning
rule:
  pattern: $P.detach($$$)
---
id: rs-attach
language: rust
severity: warning
rule:
  any:
    - pattern: Python::attach($$$)
    - pattern: Python::with_gil($$$)
YAML
fi

gil_base=("$GIL_LINT" check --quiet --threads "$threads" --format json)
gil_lint=("${gil_base[@]}" --no-cache)
ast_grep=("$AST_GREP" scan -c "$work/sg/sgconfig.yml" -j "$threads" --json=stream)

# One timed run: prints "wall_seconds max_rss_kib cpu_seconds". Exit status 1 is gil-lint's
# "findings" and ast-grep's "matches"; anything above is a failure.
timed() {
  local out=$work/time.txt status=0
  /usr/bin/time -v -o "$out" "$@" > /dev/null 2> "$work/stderr.txt" || status=$?
  if (( status > 1 )); then
    echo "failed ($status): $*" >&2
    cat "$work/stderr.txt" >&2
    exit 1
  fi
  awk -F': ' '
    /Elapsed \(wall clock\)/ { n = split($2, p, ":"); wall = 0; for (i = 1; i <= n; i++) wall = wall * 60 + p[i] }
    /Maximum resident set size/ { rss = $2 }
    /User time/ { user = $2 }
    /System time/ { sys = $2 }
    END { printf "%.3f %d %.3f\n", wall, rss, user + sys }' "$out"
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
column_of() { awk -v c="$1" '{ print $c }'; }

# Runs both tools alternately on $1, RUNS times after a warm-up; leaves the samples in
# $work/gil.txt and $work/sg.txt. gil-lint runs as "${gil_lint[@]}", each time after the command
# $2 (if given).
compare() {
  local tree=$1 before=${2:-true}
  : > "$work/gil.txt"
  : > "$work/sg.txt"
  $before
  timed "${gil_lint[@]}" "$tree" > /dev/null
  timed "${ast_grep[@]}" "$tree" > /dev/null
  for ((i = 0; i < runs; i++)); do
    $before
    timed "${gil_lint[@]}" "$tree" >> "$work/gil.txt"
    timed "${ast_grep[@]}" "$tree" >> "$work/sg.txt"
  done
}

report() {
  local name=$1 samples=$2
  local wall rss cpu
  wall=$(column_of 1 < "$samples" | median)
  cpu=$(column_of 3 < "$samples" | median)
  rss=$(column_of 2 < "$samples" | sort -n | tail -1)
  printf '%-22s median %6.3f s  (min %.3f, max %.3f)  cpu %6.3f s  peak RSS %6.1f MiB\n' \
    "$name" "$wall" "$(column_of 1 < "$samples" | sort -n | head -1)" \
    "$(column_of 1 < "$samples" | sort -n | tail -1)" "$cpu" "$(awk -v k="$rss" 'BEGIN { print k / 1024 }')"
}

ratio() {
  awk -v a="$(column_of 1 < "$1" | median)" -v b="$(column_of 1 < "$2" | median)" 'BEGIN { printf "%.2f", a / b }'
}

echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ *//'), $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo)"
echo "gil-lint: $("$GIL_LINT" --version), ast-grep: $("$AST_GREP" --version)"
echo "corpus: $corpus ($(find "$corpus" -type f \( -name '*.c' -o -name '*.cc' -o -name '*.cpp' -o -name '*.cxx' -o -name '*.h' -o -name '*.hh' -o -name '*.hpp' -o -name '*.cu' -o -name '*.cuh' -o -name '*.rs' \) | wc -l) C/C++/CUDA/Rust files)"
echo "threads: $threads, runs: $runs (after one warm-up each), alternating; ast-grep rules: ${AST_GREP_RULES:-call_guard + gil_scoped_acquire (C++)}"
echo

compare "$corpus"
report "gil-lint" "$work/gil.txt"
report "ast-grep" "$work/sg.txt"
echo "ratio gil-lint / ast-grep (median wall): $(ratio "$work/gil.txt" "$work/sg.txt")"
cp "$work/gil.txt" "$work/gil_once.txt"
cp "$work/sg.txt" "$work/sg_once.txt"

# The same without the pre-filter, for what it saves.
: > "$work/nopre.txt"
for ((i = 0; i < runs; i++)); do
  timed "${gil_lint[@]}" --no-prefilter "$corpus" >> "$work/nopre.txt"
done
report "gil-lint --no-prefilter" "$work/nopre.txt"

if [[ "${WARM:-1}" != 0 ]]; then
  # The cache in a directory of its own, filled by the warm-up run.
  cold=("${gil_lint[@]}")
  gil_lint=("${gil_base[@]}" --cache-dir "$work/cache")
  echo
  echo "warm: the cache filled by the warm-up run, the tree unchanged"
  compare "$corpus"
  report "gil-lint, warm" "$work/gil.txt"
  report "ast-grep" "$work/sg.txt"
  echo "ratio gil-lint warm / ast-grep (median wall): $(ratio "$work/gil.txt" "$work/sg.txt")"
  edited=${EDITED:-TransformerEngine/transformer_engine/pytorch/csrc/extensions/pybind.cpp}
  if [[ -f "$corpus/$edited" ]]; then
    cp "$corpus/$edited" "$work/edited.orig"
    trap 'cp "$work/edited.orig" "$corpus/$edited"; rm -rf "$work"' EXIT
    edits=0
    # A new line appended to the original text: a new text for every run.
    edit() {
      edits=$((edits + 1))
      { cat "$work/edited.orig"; echo "// edit $edits"; } > "$work/edited.new"
      cp "$work/edited.new" "$corpus/$edited"
    }
    echo
    echo "warm, one file edited before each run: $edited"
    compare "$corpus" edit
    cp "$work/edited.orig" "$corpus/$edited"
    report "gil-lint, one edited" "$work/gil.txt"
    report "ast-grep" "$work/sg.txt"
    echo "ratio gil-lint one edited / ast-grep (median wall): $(ratio "$work/gil.txt" "$work/sg.txt")"
  fi
  gil_lint=("${cold[@]}")
fi

if [[ "${SCALING:-1}" != 0 ]]; then
  echo
  echo "scaling: the corpus once, then twice (two hard-linked copies side by side)"
  twice=$(mktemp -d "$(dirname "$corpus")/.gil-lint-twice.XXXXXX")
  trap 'rm -rf "$work" "$twice"' EXIT
  cp -al "$corpus" "$twice/a" 2> /dev/null || cp -r "$corpus" "$twice/a"
  cp -al "$corpus" "$twice/b" 2> /dev/null || cp -r "$corpus" "$twice/b"
  compare "$twice"
  report "gil-lint, twice" "$work/gil.txt"
  report "ast-grep, twice" "$work/sg.txt"
  echo "ratio gil-lint / ast-grep, twice: $(ratio "$work/gil.txt" "$work/sg.txt")"
  echo "twice / once: gil-lint $(ratio "$work/gil.txt" "$work/gil_once.txt"), ast-grep $(ratio "$work/sg.txt" "$work/sg_once.txt")"
fi
