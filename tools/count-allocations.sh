#!/usr/bin/env bash
# Counts heap allocations per store operation with valgrind (instruction-level, so the figure does
# not depend on machine load). Runs `mappedkv bench` at two sizes and divides the difference in
# malloc calls by the difference in operations: fixed start-up costs cancel out.
#
# Usage: tools/count-allocations.sh [N]   (default N=10000; needs valgrind)
#        tools/count-allocations.sh [N] --modes plain,shared-memory,encrypted [--debug]
#
# With --modes, one `allocations_<mode><TAB>per-operation` line a mode (plain, flock,
# shared-memory, encrypted: the modes of `mappedkv bench`), the form tools/bench-page.sh compares
# with tools/bench/Thresholds/store.json. --debug counts the debug build (.build, the one the tests
# use) instead of the release build (.build-release): its counts differ from release's, and CI
# checks them against their own thresholds because it has that build already.
set -euo pipefail
cd "$(dirname "$0")/.."
n=10000
modes=""
configuration=release
while [ $# -gt 0 ]; do
    case "$1" in
        --modes) modes="$2"; shift 2 ;;
        --debug) configuration=debug; shift ;;
        [0-9]*) n="$1"; shift ;;
        *) echo "usage: $0 [N] [--modes plain,flock,shared-memory,encrypted] [--debug]" >&2; exit 2 ;;
    esac
done
command -v valgrind >/dev/null || { echo "valgrind is not installed (apt-get install valgrind)" >&2; exit 1; }
if [ "$configuration" = release ]; then
    swift build -c release --scratch-path .build-release --product mappedkv >/dev/null
    bin=.build-release/release/mappedkv
else
    swift build --product mappedkv >/dev/null
    bin=.build/debug/mappedkv
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# valgrind cannot read the DWARF 5 debug information Swift writes: it counts a stripped copy.
cp "$bin" "$work/mappedkv"
strip --strip-debug "$work/mappedkv"
bin="$work/mappedkv"

# mallocs N FLAGS...: malloc calls of one `mappedkv bench` run. The small-sets workload is fixed
# (not scaled with N), so it cancels out; it is kept short because valgrind runs slowly.
mallocs() {
    local count="$1"
    shift
    rm -rf "$work/s$count"
    local report
    report=$(valgrind --tool=memcheck --leak-check=no "$bin" bench --root "$work/s$count" --n "$count" \
        --small-sets 1000 "$@" 2>&1 >/dev/null) || { echo "$report" | tail -n 20 >&2; exit 1; }
    sed -n 's/.*total heap usage: \([0-9,]*\) allocs.*/\1/p' <<<"$report" | tr -d ,
}
# Each bench run does 2N sets, 2N gets, N removes, N setup sets and 5 reloads of N keys (and N
# random gets, N batched gets and N batched sets, which the first form's count leaves out).
ops=$((5 * n + 5 * n))
if [ -z "$modes" ]; then
    small=$(mallocs "$n")
    large=$(mallocs $((2 * n)))
    echo "malloc calls: N=$n: $small, N=$((2 * n)): $large"
    awk -v a="$small" -v b="$large" -v ops="$ops" 'BEGIN { printf "allocations per operation (sets, gets, removes, reloaded records): %.4f\n", (b - a) / ops }'
    exit 0
fi
IFS=, read -r -a mode_list <<<"$modes"
for mode in "${mode_list[@]}"; do
    case "$mode" in
        plain) flags=() ;;
        flock) flags=(--multi-process --lock flock) ;;
        shared-memory) flags=(--multi-process --lock shared-memory) ;;
        encrypted) flags=(--crypt-key bench-key) ;;
        *) echo "unknown mode: $mode" >&2; exit 2 ;;
    esac
    small=$(mallocs "$n" "${flags[@]}")
    large=$(mallocs $((2 * n)) "${flags[@]}")
    awk -v mode="$mode" -v a="$small" -v b="$large" -v ops="$ops" 'BEGIN { printf "allocations_%s\t%.4f\n", mode, (b - a) / ops }'
done
