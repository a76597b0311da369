#!/usr/bin/env bash
# Benchmark-side check (never a test; it needs a corpus outside the repo): writes what a gil-lint
# binary reports on a corpus, so that two binaries' reports can be compared byte for byte.
#
#   benches/equivalence.sh GIL_LINT CORPUS OUT
#
# For the whole CORPUS and for each of its top-level directories alone, with and without the
# pre-filter, on 1 and 2 threads, writes OUT/<tree>.<prefilter|full>.<threads>.<json|sarif|human>.
# Then `diff -r OUT_A OUT_B` says whether two binaries differ anywhere. JSON, SARIF and human
# output must also agree across the pre-filter and thread settings: the script checks that too and
# exits 1, naming the first difference, when they do not.
set -euo pipefail

bin=${1:?usage: benches/equivalence.sh GIL_LINT CORPUS OUT}
corpus=$(cd "${2:?usage: benches/equivalence.sh GIL_LINT CORPUS OUT}" && pwd)
out=${3:?usage: benches/equivalence.sh GIL_LINT CORPUS OUT}
mkdir -p "$out"
status=0
# Two reports agree when equal byte for byte; SARIF's invocation records the command line, which
# differs between the settings by design, so it is left out of that comparison.
same() {
  if [[ $3 == sarif ]]; then
    cmp -s <(without_command_line "$1") <(without_command_line "$2")
  else
    cmp -s "$1" "$2"
  fi
}
without_command_line() {
  python3 -c '
import json, sys
log = json.load(open(sys.argv[1]))
for run in log.get("runs", []):
    for invocation in run.get("invocations", []):
        invocation.pop("commandLine", None)
        invocation.pop("arguments", None)
json.dump(log, sys.stdout, sort_keys=True)
' "$1"
}
trees=(.)
for d in "$corpus"/*/; do trees+=("$(basename "$d")"); done
for tree in "${trees[@]}"; do
  name=${tree/#./ALL}
  for format in json sarif human; do
    first=
    for mode in prefilter full; do
      flag=()
      [[ $mode == full ]] && flag=(--no-prefilter)
      for threads in 1 2; do
        file=$out/$name.$mode.$threads.$format
        (cd "$corpus" && "$bin" check --format "$format" --threads "$threads" "${flag[@]}" "$tree" \
          >"$file" 2>"$file.stderr") || [[ $? == 1 ]]
        if [[ -z $first ]]; then
          first=$file
        elif ! same "$first" "$file" "$format"; then
          echo "differs: $first $file" >&2
          status=1
        fi
      done
    done
  done
done
exit $status
