#!/usr/bin/env bash
# Counts heap allocations per store operation with valgrind (instruction-level, so the figure does
# not depend on machine load). Runs `mappedkv bench` at two sizes and divides the difference in
# malloc calls by the difference in operations: fixed start-up costs cancel out.
#
# Usage: tools/count-allocations.sh [N]   (default N=10000; needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-10000}
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
swift build -c release --scratch-path .build-release --product mappedkv >/dev/null
bin=.build-release/release/mappedkv
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

mallocs() {
    valgrind --tool=memcheck --leak-check=no "$bin" bench --root "$work/s$1" --n "$1" 2>&1 >/dev/null |
        sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' | tr -d ,
}
small=$(mallocs "$n")
large=$(mallocs $((2 * n)))
# Each bench run does 2N sets, 2N gets, N removes, N setup sets and 5 reloads of N keys.
ops=$((5 * n + 5 * n))
echo "malloc calls: N=$n: $small, N=$((2 * n)): $large"
awk -v a="$small" -v b="$large" -v ops="$ops" 'BEGIN { printf "allocations per operation (sets, gets, removes, reloaded records): %.4f\n", (b - a) / ops }'
