#!/usr/bin/env bash
# The load-independent view of the scaling table: for every shape (of
# passes/benches/shapes/mod.rs) and column, the instruction count (callgrind
# Ir, inclusive, of the example's never-inlined `count_*` function) at N and
# at 10N and their ratio (10 = linear). A ratio well above 10 (say > 10.3)
# is superlinear work, which no cache or load explains.
#
#   cargo build --profile bench -p passes --example scaling_ratios
#   passes/benches/ir_ratios.sh [N] [COLUMNS] [SHAPES]
#
# N defaults to 10000; COLUMNS (comma-separated pass columns, parse + verify
# is always counted) to lse,gvn,dce,pipeline; SHAPES (comma-separated) to
# every shape. BIN overrides the example binary. Each shape and size is one
# `scaling_ratios --count SHAPE N --passes COLUMNS` run under callgrind.
# WARM=1 counts a pass column's second run instead (a `--runs 2` count less
# a `--runs 1` one: buffers already grown, as in the timed runs; twice the
# callgrind time); parse + verify is always one fresh run.
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${BIN:-target/release/examples/scaling_ratios}
n=${1:-10000}
cols=${2:-lse,gvn,dce,pipeline}
shapes=${3:-$(grep -o 'name: "[a-z_]*"' passes/benches/shapes/mod.rs | cut -d'"' -f2 | paste -sd,)}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# The inclusive Ir of each `count_*` function of one callgrind profile, as
# "column count" lines.
counts() {
    callgrind_annotate --inclusive=yes "$1" |
        sed -n 's/^ *\([0-9,]*\) .*[^a-z_]count_\([a-z_]*\)\b.*$/\2 \1/p' |
        tr -d ,
}

# The counts of one `--count SHAPE N --runs RUNS` run under callgrind.
profile() {
    valgrind --tool=callgrind --callgrind-out-file="$tmp/p.cg" \
        "$bin" --count "$1" "$2" --passes "$cols" --runs "$3" >/dev/null 2>&1
    counts "$tmp/p.cg"
}

# The second run's counts from a one-run and a two-run profile (parse +
# verify, run once in both, kept as it is).
warm() {
    awk 'NR == FNR { one[$1] = $2; next }
        { print $1, ($1 == "parse_verify" ? $2 : $2 - one[$1]) }' "$1" "$2"
}

header="| shape | parse+verify"
rule="| --- | ---"
for c in ${cols//,/ }; do
    header+=" | $c"
    rule+=" | ---"
done
echo "Ir at N = $n → 10N (ratio; 10 = linear), callgrind, $bin${WARM:+, WARM=$WARM}"
echo
echo "$header |"
echo "$rule |"
for shape in ${shapes//,/ }; do
    for size in "$n" $((10 * n)); do
        profile "$shape" "$size" 1 >"$tmp/$size.txt"
        if [ "${WARM:-0}" = 1 ]; then
            profile "$shape" "$size" 2 >"$tmp/$size.2.txt"
            warm "$tmp/$size.txt" "$tmp/$size.2.txt" >"$tmp/$size.w.txt"
            mv "$tmp/$size.w.txt" "$tmp/$size.txt"
        fi
    done
    row="| $shape"
    for c in parse_verify ${cols//,/ }; do
        a=$(awk -v c="$c" '$1 == c { print $2; exit }' "$tmp/$n.txt")
        b=$(awk -v c="$c" '$1 == c { print $2; exit }' "$tmp/$((10 * n)).txt")
        row+=$(awk -v a="${a:-0}" -v b="${b:-0}" 'BEGIN {
            if (a == 0) { printf " | ?"; exit }
            printf " | %.2fM → %.2fM (×%.2f)", a / 1e6, b / 1e6, b / a }')
    done
    echo "$row |"
done
