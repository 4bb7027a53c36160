#!/usr/bin/env bash
# Runs the benches of one area (store, cache, collections, server), prints their output with the
# command, the machine and the commit, and compares the metrics that must not regress with the
# area's thresholds file, tools/bench/Thresholds/AREA.json (swift-nio's Benchmarks/Thresholds is the
# model: one expected value a metric, and how far it may move).
#
#   tools/bench-page.sh store --write                     # regenerate docs/bench/store.md's figures
#   tools/bench-page.sh cache --runs 3 --write --check    # and fail on a regression
#   tools/bench-page.sh store --deterministic --check     # only the allocation counts (what CI runs)
#   tools/bench-page.sh store --deterministic --debug --check   # the same on the debug build (CI's)
#   tools/bench-page.sh cache --update-thresholds         # take this run's figures as the expected ones
#   tools/bench-page.sh server --write                    # the server bench (its own builds: long)
#   tools/bench-page.sh store --write --keep /tmp/run     # and keep the outputs: --from /tmp/run
#                                                         # compares and writes them again, no bench run
#
# --write replaces what lies between the page's `<!-- generated:begin -->` and
# `<!-- generated:end -->` lines in docs/bench/AREA.md; the rest of the page is written by hand.
# --check exits 1 when a metric is worse than its bound: its target `limit` when it has one and no
# tolerance (timing ratios, which swing too much for a tolerance), else expected × (1 + tolerance)
# + slack where lower is better (expected × (1 − tolerance) − slack where higher is better), never
# past its limit (allocation counts, bytes a key). --update-thresholds rewrites `expected`
# (and nothing else) with this run's figures. --deterministic runs only the metrics that do not
# depend on the machine's load (malloc calls counted by valgrind), which CI checks with --debug.
# --runs (default 3) is passed to each bench.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/.." && pwd)"
usage="usage: $0 store|cache|collections|server [--runs R] [--write] [--check] [--update-thresholds] [--deterministic] [--debug] [--keep DIR | --from DIR]"
[ $# -ge 1 ] || { echo "$usage" >&2; exit 2; }
area="$1"
shift
runs=3
write=no
check=no
update=no
deterministic=no
debug=no
keep=""
from=""
arguments="$*"
while [ $# -gt 0 ]; do
    case "$1" in
        --runs) runs="$2"; shift 2 ;;
        --write) write=yes; shift ;;
        --check) check=yes; shift ;;
        --update-thresholds) update=yes; shift ;;
        --deterministic) deterministic=yes; shift ;;
        --debug) debug=yes; shift ;;
        --keep) keep="$2"; shift 2 ;;
        --from) from="$(cd "$2" && pwd)"; shift 2 ;;
        *) echo "$usage" >&2; exit 2 ;;
    esac
done
page="$repo/docs/bench/$area.md"
thresholds="$repo/tools/bench/Thresholds/$area.json"
[ "$debug" = yes ] && thresholds="$repo/tools/bench/Thresholds/$area-debug.json"
case "$area" in store | cache | collections | server) ;; *) echo "$usage" >&2; exit 2 ;; esac

if [ -n "$from" ]; then
    work="$from"
else
    work="$(mktemp -d /tmp/mappedkv-bench-page.XXXXXX)"
    trap 'rm -rf "$work"' EXIT
    : > "$work/sections"
fi

# section NAME TITLE COMMAND...: runs COMMAND from the repository's root, keeps its standard output
# as the section NAME (the build chatter goes to standard error) and notes the command line.
section() {
    local name="$1" title="$2"
    shift 2
    echo "== $title: $*" >&2
    (cd "$repo" && "$@") > "$work/$name.out"
    printf '%s\t%s\t%s\n' "$name" "$title" "$*" >> "$work/sections"
}

if [ -z "$from" ]; then
# The commit the run measures, taken before it starts; "with uncommitted changes" when the code the
# benches build (not the pages, the thresholds or the scripts' text) differs from it.
commit="$(git -C "$repo" rev-parse --short HEAD)"
if [ -n "$(git -C "$repo" status --porcelain -- Sources Package.swift tools/bench/Sources tools/bench/Package.swift \
    tools/microbench tools/server-bench/Sources tools/server-bench/Package.swift Integrations/*/Sources \
    Integrations/*/Package.swift)" ]; then
    commit="$commit with uncommitted changes"
fi
load_before="$(cut -d' ' -f1-3 /proc/loadavg)"
started="$(date -u +%s)"
# The debug build runs several times slower under valgrind: it counts at N = 2,000 and 4,000.
allocation_flags=(10000 --modes plain,shared-memory,encrypted)
[ "$debug" = yes ] && allocation_flags=(2000 --modes plain,shared-memory,encrypted --debug)
case "$area" in
    store)
        section allocations "Heap allocations per operation (valgrind, deterministic)" \
            tools/count-allocations.sh "${allocation_flags[@]}"
        if [ "$deterministic" = no ]; then
            section targets "mappedkv bench against its targets and floors" \
                tools/bench-targets.sh --runs "$runs" --no-scaling
            svg=()
            [ "$write" = yes ] && svg=(--svg docs/bench/scaling.svg)
            section scaling "MappedKV at N = 10^4, 10^5, 10^6" tools/bench.sh --scaling --runs "$runs" "${svg[@]}"
            [ "$write" = yes ] && svg=(--svg docs/bench/peers.svg)
            section peers "MappedKV against SQLite, LMDB and UserDefaults" \
                tools/bench.sh --n 100000 --runs "$runs" "${svg[@]}"
            # The open-scaling bench's fresh processes run the mappedkv tool built beside it.
            swift build -c release --package-path tools/bench --scratch-path tools/bench/.build --product mappedkv >&2
            section open "Opening a store as it grows (shared-memory lock)" \
                tools/bench.sh --open-scaling --lock shared-memory --sizes 10000,100000,1000000 --runs "$runs" \
                --stores mappedkv,lmdb
            section durability "Each durability level beside the default" \
                .build-release/release/mappedkv bench --durability --root "$work/durability"
            section tidy "A tidy of 100,000 expired keys while another process works" \
                .build-release/release/mappedkv bench --tidy --root "$work/tidy"
        fi
        ;;
    cache)
        [ "$deterministic" = yes ] && { echo "the cache has no deterministic metrics yet" >&2; exit 2; }
        svg=()
        [ "$write" = yes ] && svg=(--svg docs/bench/cache.svg)
        section cache "MappedKVCache against its peers and its targets" tools/bench.sh --cache --runs "$runs" "${svg[@]}"
        ;;
    collections)
        [ "$deterministic" = yes ] && { echo "the collections have no deterministic metrics yet" >&2; exit 2; }
        section collections "MappedKVCollections against its SQLite design, and Bucket.changes()" \
            tools/bench.sh --collections --runs "$runs"
        ;;
    server)
        [ "$deterministic" = yes ] && { echo "the server bench has no deterministic metrics" >&2; exit 2; }
        section server "The cache behind a Vapor app beside what apps use today" tools/server-bench/run.sh
        # The integrations' own benches: each driver against its floor, and a route reading it
        # against a constant route under wrk (each script builds its package in release).
        (cd Integrations/hummingbird-mappedkv && swift build -c release --product HummingbirdMappedKVBench >&2)
        section hummingbird-get "Hummingbird: the persist driver's get against DiskCache get + JSON decode" \
            taskset -c 0 Integrations/hummingbird-mappedkv/.build/release/HummingbirdMappedKVBench --n 100000 --rounds 7
        section hummingbird-http "Hummingbird: a route reading the driver against a constant route" \
            Integrations/hummingbird-mappedkv/bench-http.sh 7 10
        (cd Integrations/vapor-mappedkv && swift build -c release --product VaporMappedKVBench >&2)
        section vapor-get "Vapor: the cache's get against DiskCache get + JSON decode" \
            taskset -c 0 Integrations/vapor-mappedkv/.build/release/VaporMappedKVBench 21 10000
        section vapor-http "Vapor: routes reading the cache against constant routes" \
            Integrations/vapor-mappedkv/bench-http.sh 7 10
        ;;
esac
load_after="$(cut -d' ' -f1-3 /proc/loadavg)"
minutes=$((($(date -u +%s) - started + 30) / 60))

machine="$(
    cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1)"
    memory="$(awk '/^MemTotal:/ { printf "%.1f GiB RAM", $2 / 1048576 }' /proc/meminfo)"
    echo "$cpu, $(nproc) cores, $memory, Linux $(uname -r), $(swift --version 2>/dev/null | head -n 1)"
)"
day="$(date -u +%F)"
command="tools/bench-page.sh $area $arguments"
if [ -n "$keep" ]; then
    mkdir -p "$keep"
    cp "$work"/sections "$work"/*.out "$keep"/
    printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$commit" "$machine" "$load_before" "$load_after" "$minutes" "$day" \
        "$command" > "$keep/meta"
fi
else
    # --from DIR: the outputs and the facts of a run kept with --keep DIR, compared and written again
    # (after a change to the thresholds or to this script's tables) without running the benches.
    IFS=$'\t' read -r commit machine load_before load_after minutes day command < "$from/meta"
fi

python3 - "$work" "$area" "$thresholds" "$page" "$write" "$check" "$update" "$deterministic" \
    "$command" "$commit" "$machine" "$load_before" "$load_after" "$minutes" "$day" <<'PY'
import json, os, re, sys

(work, area, thresholds_path, page_path, write, check, update, deterministic,
 command, commit, machine, load_before, load_after, minutes, day) = sys.argv[1:]
sections = [line.rstrip("\n").split("\t") for line in open(os.path.join(work, "sections"))]
outputs = {name: open(os.path.join(work, name + ".out")).read() for name, _, _ in sections}

def number(text):
    """The first number in a table cell or a value: "1,234 ns" is 1234, "0.66x" 0.66."""
    found = re.search(r"-?[0-9][0-9,]*(?:\.[0-9]+)?", text)
    return float(found.group(0).replace(",", "")) if found else None

def measure(spec):
    """A metric's figure from its section's output: a `name<TAB>value` line (`line`), a regular
    expression's first group (`text`), or a cell of the `occurrence`-th table row whose first
    cells start with `row` (`column` counts from 1), after the line containing `after` if given."""
    text = outputs.get(spec["section"])
    if text is None:
        return None
    if "text" in spec:
        # `text`: a regular expression over the whole output, its first group the figure.
        found = re.search(spec["text"], text)
        return number(found.group(1)) if found else None
    if "line" in spec:
        for line in text.splitlines():
            fields = line.split("\t")
            if len(fields) == 2 and fields[0] == spec["line"]:
                return float(fields[1])
        return None
    # `after`: only the lines after the first that contains it (a table's heading).
    lines = text.splitlines()
    if "after" in spec:
        heading = next((i for i, line in enumerate(lines) if spec["after"] in line), None)
        if heading is None:
            return None
        lines = lines[heading + 1:]
    matches = []
    for line in lines:
        if not line.startswith("|"):
            continue
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        # `row` is the first cell's start (the whole cell with `exact`), or a list of the first cells'.
        starts = spec["row"] if isinstance(spec["row"], list) else [spec["row"]]
        fits = (lambda cell, start: cell == start) if spec.get("exact") else (lambda cell, start: cell.startswith(start))
        if len(cells) >= len(starts) and all(fits(cell, start) for cell, start in zip(cells, starts)):
            matches.append(cells)
    occurrence = spec.get("occurrence", 1)
    if len(matches) < occurrence:
        return None
    cells = matches[occurrence - 1]
    column = spec["column"]
    if len(cells) < column:
        return None
    # `pattern`, when given, picks the figure out of the cell: "604 ns (1.27x plain)" with
    # "\\(([0-9.]+)x" is 1.27.
    if "pattern" in spec:
        found = re.search(spec["pattern"], cells[column - 1])
        return number(found.group(1)) if found else None
    return number(cells[column - 1])

def bound(spec):
    """A metric with a target and no tolerance is bounded by its target; otherwise by expected and
    its tolerance and slack, never past its target."""
    if "limit" in spec and "tolerance" not in spec:
        return spec["limit"]
    expected, tolerance, slack = spec["expected"], spec.get("tolerance", 0), spec.get("slack", 0)
    if spec.get("better", "lower") == "lower":
        value = expected * (1 + tolerance) + slack
        return min(value, spec["limit"]) if "limit" in spec else value
    value = expected * (1 - tolerance) - slack
    return max(value, spec["limit"]) if "limit" in spec else value

def worse(spec, value, edge):
    return value > edge if spec.get("better", "lower") == "lower" else value < edge

def show(value):
    if value is None:
        return "-"
    return f"{value:,.4f}" if abs(value) < 1 else f"{value:,.2f}" if abs(value) < 100 else f"{value:,.0f}"

thresholds = json.load(open(thresholds_path)) if os.path.exists(thresholds_path) else {"metrics": {}}
rows, regressions, missing = [], [], []
for name, spec in thresholds["metrics"].items():
    if deterministic == "yes" and not spec.get("deterministic"):
        continue
    value = measure(spec)
    if value is None:
        if spec["section"] in outputs:
            missing.append(name)
        continue
    if update == "yes":
        spec["expected"] = round(value, 4)
    edge = bound(spec)
    verdict = "ok"
    if worse(spec, value, edge):
        verdict = "REGRESSED"
        regressions.append(name)
    target = ""
    if "limit" in spec:
        met = not worse(spec, value, spec["limit"])
        target = f"{'≤' if spec.get('better', 'lower') == 'lower' else '≥'} {show(spec['limit'])} ({'met' if met else 'MISSED'})"
    rows.append(f"| {name} | {spec['what']} | {show(value)} | {show(spec['expected'])} | {show(edge)} | {target} | {verdict} |")

relative = os.path.relpath(thresholds_path, os.path.dirname(os.path.dirname(os.path.dirname(page_path))))
table = [f"#### Thresholds (`{relative}`)", "",
         "| metric | what | this run | expected | bound | target | verdict |", "|---|---|---:|---:|---:|---|---|", *rows]
for name in missing:
    table.append(f"| {name} | not found in this run's output | - | - | - | | REGRESSED |")
print("\n".join(table))

if update == "yes":
    with open(thresholds_path, "w") as file:
        json.dump(thresholds, file, indent=2, ensure_ascii=False)
        file.write("\n")
    print(f"\nupdated {thresholds_path}", file=sys.stderr)

if write == "yes":
    block = ["<!-- generated:begin (tools/bench-page.sh writes this block; do not edit it by hand) -->", "",
             f"**Command.** `{command}`, {minutes} min.  ",
             f"**Commit.** `{commit}`, measured {day}.  ",
             f"**Machine.** {machine}.  ",
             f"**Load average** (1, 5, 15 min) before the first bench {load_before}, after the last {load_after}.", ""]
    for name, title, line in sections:
        output = outputs[name].rstrip("\n")
        # Output that is not Markdown (`name<TAB>value` lines) is quoted as it is.
        if not any(text.startswith(("|", "#")) for text in output.splitlines()):
            output = "```\n" + output + "\n```"
        block += [f"### {title}", "", f"`{line}`", "", output, ""]
    block += table + ["", "<!-- generated:end -->"]
    text = open(page_path).read()
    begin = text.index("<!-- generated:begin")
    end = text.index("<!-- generated:end -->") + len("<!-- generated:end -->")
    with open(page_path, "w") as file:
        file.write(text[:begin] + "\n".join(block) + text[end:])
    print(f"wrote {page_path}", file=sys.stderr)

if missing:
    print(f"\nnot found in the output: {', '.join(missing)}", file=sys.stderr)
if regressions:
    print(f"\nregressed: {', '.join(regressions)}", file=sys.stderr)
if check == "yes" and (regressions or missing):
    sys.exit(1)
PY
