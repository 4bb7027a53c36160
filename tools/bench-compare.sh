#!/usr/bin/env bash
# Compares `mappedkv bench` (release) at another git revision with the working tree, side by side
# in one run: the two binaries alternate, in three modes (plain, multi-process, encrypted), for
# --runs rounds, and each figure's medians are printed with the ratio working tree / base.
#
#   tools/bench-compare.sh ff89a5a                    # N = 100000, 5 rounds
#   tools/bench-compare.sh HEAD~3 --n 10000 --runs 3
#
# The base is checked out into a temporary git worktree and built with its own scratch path.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
[ $# -ge 1 ] || { echo "usage: $0 BASE_REV [--n N] [--runs R]" >&2; exit 2; }
base_rev="$1"
shift
n=100000
runs=5
while [ $# -gt 0 ]; do
    case "$1" in
        --n) n="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        *) echo "usage: $0 BASE_REV [--n N] [--runs R]" >&2; exit 2 ;;
    esac
done

work="$(mktemp -d /tmp/mappedkv-compare.XXXXXX)"
cleanup() {
    git -C "$repo" worktree remove --force "$work/base" >/dev/null 2>&1 || true
    rm -rf "$work"
}
trap cleanup EXIT
git -C "$repo" worktree add --detach "$work/base" "$base_rev" >&2
swift build -c release --package-path "$work/base" --scratch-path "$repo/.build-compare-base" --product mappedkv >&2
swift build -c release --package-path "$repo" --scratch-path "$repo/.build-release" --product mappedkv >&2
declare -A binary=(
    [base]="$repo/.build-compare-base/release/mappedkv"
    [head]="$repo/.build-release/release/mappedkv"
)
results="$work/results.tsv"

for round in $(seq "$runs"); do
    for mode in plain multi-process encrypted; do
        case "$mode" in
            plain) flags=() ;;
            multi-process) flags=(--multi-process) ;;
            encrypted) flags=(--crypt-key bench-key) ;;
        esac
        for side in base head; do
            rm -rf "$work/store" && mkdir "$work/store"
            "${binary[$side]}" bench --root "$work/store" --n "$n" "${flags[@]}" | sed "s/^/$side\t$mode\t/" >> "$results"
        done
    done
    echo "round $round of $runs done" >&2
done

python3 - "$results" "$n" "$runs" "$base_rev" <<'PY'
import collections, statistics, sys
path, n, runs, base_rev = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
samples = collections.defaultdict(list)
for line in open(path):
    side, mode, name, value = line.rstrip("\n").split("\t")
    samples[(side, mode, name)].append(int(value))
names = ["set_int32", "set_string", "get_int32", "get_string", "remove", "reopen_load"]
def show(name, value):
    return f"{value / 1e6:.2f} ms" if name == "reopen_load" else f"{value:,.0f} ns"
print(f"mappedkv bench, N = {n:,}, medians of {runs} alternating rounds; base = {base_rev}, head = working tree\n")
print("| mode | workload | base | head | head/base (median of pairs) | pairs min-max |")
print("|---|---|---:|---:|---:|---|")
for mode in ["plain", "multi-process", "encrypted"]:
    for name in names:
        base = samples[("base", mode, name)]
        head = samples[("head", mode, name)]
        ratios = [h / b for h, b in zip(head, base) if b]
        print(f"| {mode} | {name} | {show(name, statistics.median(base))} | {show(name, statistics.median(head))} "
              f"| {statistics.median(ratios):.2f}x | {min(ratios):.2f}-{max(ratios):.2f} |")
PY
