#!/usr/bin/env bash
# Runs `mappedkv bench` (release) single-process plain, multi-process and encrypted, alternating
# the three for --runs rounds, and prints each figure's median next to issue 6's target, then
# issue 18's targets as ratios of the same run's medians.
#
#   tools/bench-targets.sh                 # N = 100000, 5 rounds
#   tools/bench-targets.sh --n 10000 --runs 3
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
n=100000
runs=5
while [ $# -gt 0 ]; do
    case "$1" in
        --n) n="$2"; shift 2 ;;
        --runs) runs="$2"; shift 2 ;;
        *) echo "usage: $0 [--n N] [--runs R]" >&2; exit 2 ;;
    esac
done

scratch="$here/../.build-release"
swift build -c release --package-path "$here/.." --scratch-path "$scratch" --product mappedkv >&2
binary="$scratch/release/mappedkv"
root="$(mktemp -d /tmp/mappedkv-targets.XXXXXX)"
trap 'rm -rf "$root"' EXIT
results="$root/results.tsv"

for round in $(seq "$runs"); do
    for mode in plain multi-process encrypted; do
        case "$mode" in
            plain) flags=() ;;
            multi-process) flags=(--multi-process) ;;
            encrypted) flags=(--crypt-key bench-key) ;;
        esac
        rm -rf "$root/store" && mkdir "$root/store"
        "$binary" bench --root "$root/store" --n "$n" "${flags[@]}" | sed "s/^/$mode\t/" >> "$results"
    done
    echo "round $round of $runs done" >&2
done

python3 - "$results" "$n" "$runs" <<'PY'
import collections, statistics, sys
path, n, runs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
samples = collections.defaultdict(list)
for line in open(path):
    mode, name, value = line.split("\t")
    samples[(mode, name)].append(int(value))
median = {key: statistics.median(values) for key, values in samples.items()}
names = ["set_int32", "set_string", "get_int32", "get_string", "remove", "reopen_load", "batch_set_int32",
         "small_set_int32"]
targets = {
    ("plain", "set_int32"): 600, ("plain", "set_string"): 600, ("plain", "get_int32"): 200,
    ("plain", "get_string"): 200, ("plain", "remove"): 600, ("plain", "reopen_load"): 20e6,
    ("multi-process", "set_int32"): 1500, ("multi-process", "set_string"): 1500,
    ("multi-process", "get_int32"): 250, ("multi-process", "get_string"): 250,
}
def show(name, value):
    return f"{value / 1e6:.1f} ms" if name == "reopen_load" else f"{value:,.0f} ns"
print(f"mappedkv bench, N = {n:,}, median of {runs} alternating rounds\n")
print("| mode | workload | median | target | met |")
print("|---|---|---:|---:|---|")
for mode in ["plain", "multi-process", "encrypted"]:
    for name in names:
        value = median[(mode, name)]
        target = targets.get((mode, name))
        if mode == "encrypted":
            ratio = value / median[("plain", name)]
            print(f"| {mode} | {name} | {show(name, value)} ({ratio:.2f}x plain) | 1.30x plain | {'yes' if ratio <= 1.3 else 'NO'} |")
        elif target is None:
            print(f"| {mode} | {name} | {show(name, value)} | | |")
        else:
            print(f"| {mode} | {name} | {show(name, value)} | {show(name, target)} | {'yes' if value <= target else 'NO'} |")

# Issue 18's targets, as ratios of medians of the same run.
def ratio_line(label, value, limit, at_most=True):
    met = value <= limit if at_most else value >= limit
    bound = f"<= {limit}" if at_most else f">= {limit}"
    print(f"| {label} | {value:.2f} | {bound} | {'yes' if met else 'NO'} |")
print("\nissue 18 targets\n")
print("| target | value | limit | met |")
print("|---|---:|---:|---|")
for name in ["set_int32", "set_string", "remove"]:
    ratio_line(f"multi-process {name} / single-process", median[("multi-process", name)] / median[("plain", name)], 2.0)
ratio_line(
    "multi-process set_int32 / batch_set_int32 (100 per batch)",
    median[("multi-process", "set_int32")] / median[("multi-process", "batch_set_int32")], 10.0, at_most=False)
ratio_line("small_set_int32 / set_int32", median[("plain", "small_set_int32")] / median[("plain", "set_int32")], 1.5)
remove = median[("plain", "remove")]
print(f"| single-process remove | {remove:,.0f} ns | <= 450 ns | {'yes' if remove <= 450 else 'NO'} |")
print("\nThe 10^6-key targets (get, reopen, bytes per key) are measured by tools/bench.sh --scaling.")
PY
