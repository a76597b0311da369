#!/usr/bin/env bash
# Worst cases for the C++ pre-pass and scanners, generated at 1, 2, 5 and 10 MB: the time (wall
# and CPU) and peak memory of `gil-lint check` on each, to see that time grows linearly with the
# size.
#
#   cargo build --release && benches/worst_cases.sh [path/to/gil-lint]
#
# The cases (each file starts with a pybind11 binding that has one finding, so that the pre-filter
# keeps the file and the run exits with 1):
#   nested       void g() { x = h(h(h(...0...))); }        calls nested as deep as the size allows
#   upper        AAA AAB AAC ...                           one line of upper-case identifiers
#   upper_macro  AA_A AA_B ...                             the same, spelled as macros (A_B)
#   raw          xR""  (one per line)                      identifiers ending in R before a string
#
# SIZES (default "1 2 5 10", in MB) and TIMEOUT (seconds per run, default 600) may be set. The
# files are written to a temporary directory outside the repository, removed at the end.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
if [[ $# -gt 0 ]]; then
    bin=$1
elif [[ -n ${CARGO_TARGET_DIR:-} ]]; then
    bin=$CARGO_TARGET_DIR/release/gil-lint
else
    bin=$root/target/release/gil-lint
fi
[[ -x $bin ]] || { echo "no binary at $bin: run cargo build --release first" >&2; exit 2; }
command -v python3 >/dev/null || { echo "python3 is needed to generate the inputs" >&2; exit 2; }

sizes=${SIZES:-1 2 5 10}
timeout_s=${TIMEOUT:-600}
work=$(mktemp -d "${TMPDIR:-/tmp}/gil-lint-worst.XXXXXX")
trap 'rm -rf "$work"' EXIT

# Files over the default size limit are skipped: lift it where the binary has one.
extra=()
if "$bin" check --help 2>/dev/null | grep -q -- --max-file-size; then
    extra=(--max-file-size 64MiB)
fi

generate() { # case size_mb path
    python3 - "$1" "$2" "$3" <<'EOF'
import itertools, string, sys
case, mb, path = sys.argv[1], float(sys.argv[2]), sys.argv[3]
prelude = (
    '#include <pybind11/pybind11.h>\nnamespace py = pybind11;\n'
    'void f() { py::print("x"); }\n'
    'PYBIND11_MODULE(m, mod) { mod.def("f", &f, py::call_guard<py::gil_scoped_release>()); }\n'
)
size = int(mb * 1_000_000) - len(prelude)
if case == "nested":
    n = (size - 20) // 3
    body = "void g() { x = " + "h(" * n + "0" + ")" * n + "; }\n"
else:
    letters = string.ascii_uppercase
    if case == "upper":
        words = ("".join(w) for w in itertools.cycle(itertools.product(letters, repeat=3)))
        unit = 4
    elif case == "upper_macro":
        words = (a + b + "_" + c for a, b, c in itertools.cycle(itertools.product(letters, repeat=3)))
        unit = 5
    else:  # raw
        words, unit = itertools.repeat('xR""'), 5
    sep = "\n" if case == "raw" else " "
    body = sep.join(itertools.islice(words, size // unit)) + "\n"
with open(path, "w") as out:
    out.write(prelude + body)
EOF
}

has_time_v=false
if [[ -x /usr/bin/time ]] && /usr/bin/time -v true 2>/dev/null; then
    has_time_v=true
fi

echo "binary: $bin${extra:+ (${extra[*]})}"
printf '%-12s %5s %9s %9s %9s %10s %5s\n' case MB seconds s/MB "cpu s" "peak MiB" exit
for case in nested upper upper_macro raw; do
    for mb in $sizes; do
        file=$work/$case-$mb.cpp
        generate "$case" "$mb" "$file"
        log=$work/time.log
        code=0
        start=$(date +%s.%N)
        if $has_time_v; then
            timeout "$timeout_s" /usr/bin/time -v -o "$log" "$bin" check "${extra[@]}" "$file" \
                >/dev/null 2>&1 || code=$?
        else
            timeout "$timeout_s" "$bin" check "${extra[@]}" "$file" >/dev/null 2>&1 || code=$?
        fi
        end=$(date +%s.%N)
        seconds=$(python3 -c "print(f'{$end - $start:.2f}')")
        per_mb=$(python3 -c "print(f'{($end - $start) / $mb:.3f}')")
        peak=-
        cpu=-
        if $has_time_v && [[ -s $log ]]; then
            peak=$(awk -F': ' '/Maximum resident set size/ { printf "%.1f", $2 / 1024 }' "$log")
            cpu=$(awk -F': ' '/(User|System) time/ { t += $2 } END { printf "%.2f", t }' "$log")
        fi
        [[ $code == 124 ]] && seconds=">$timeout_s"
        printf '%-12s %5s %9s %9s %9s %10s %5s\n' "$case" "$mb" "$seconds" "$per_mb" "$cpu" "$peak" \
            "$code"
        rm -f "$file" "$log"
    done
done
