#!/usr/bin/env bash
# The public API of each library product, one declaration per line, in api/<Product>.txt.
#
# Dumps the package's symbol graphs (public and open symbols, without members synthesized from
# protocol default implementations) and writes, for each product, every public declaration as
# `<path>: <declaration>` and every conformance of a public type as `<type>: conforms to <protocol>`,
# sorted bytewise. No file paths, line numbers or doc comments: the files change only when the API does.
#
# usage: tools/api-dump.sh            rewrites api/*.txt
#        tools/api-dump.sh --check    compares a fresh dump with api/*.txt; exit 1 with a diff if they differ
#        tools/api-dump.sh DIRECTORY  writes the files into DIRECTORY
# Exit status 2 when the symbol graphs are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

products=(MappedKV MappedKVFormat MappedKVCache MappedKVCollections)
check=false
output=api
case "${1:-}" in
    --check)
        check=true
        output="$(mktemp -d)"
        trap 'rm -rf "$output"' EXIT
        ;;
    "") ;;
    *) output="$1" ;;
esac
mkdir -p "$output"

# The dump writes next to the debug products (building them first if needed); start from an empty
# directory so that a module whose graph failed to emit cannot pass on a stale file. The dump also
# tries the test modules, which are not built here, and reports them as errors: only the products count.
directory="$(dirname "$(swift build --show-bin-path)")/symbolgraph"
rm -rf "$directory"
log=$(swift package dump-symbol-graph --minimum-access-level public --skip-synthesized-members 2>&1) || true
for module in "${products[@]}"; do
    if [ ! -f "$directory/$module.symbols.json" ]; then
        echo "$log" >&2
        echo "api-dump: no symbol graph for $module in $directory" >&2
        exit 2
    fi
done

python3 - "$directory" "$output" "${products[@]}" <<'PY'
import glob
import json
import os
import sys

directory, output, products = sys.argv[1], sys.argv[2], sys.argv[3:]
public = ("public", "open")
# Conformances every type has implicitly (or, for SendableMetatype, has with Sendable): listing them
# would only track the compiler's version.
implicit = {"Swift.Copyable", "Swift.Escapable", "Swift.SendableMetatype"}

def spelled(fragments):
    return " ".join("".join(fragment["spelling"] for fragment in fragments).split())

for product in products:
    # <Module>.symbols.json, plus <Module>@<Other>.symbols.json for extensions of other modules' types.
    files = [os.path.join(directory, product + ".symbols.json")]
    files += sorted(glob.glob(os.path.join(directory, product + "@*.symbols.json")))
    lines = set()
    for path in files:
        with open(path, encoding="utf-8") as handle:
            graph = json.load(handle)
        names = {}
        for symbol in graph["symbols"]:
            if symbol.get("accessLevel") not in public:
                continue
            name = ".".join(symbol["pathComponents"])
            names[symbol["identifier"]["precise"]] = name
            if symbol["kind"]["identifier"] == "swift.extension":
                continue  # an extension block: its members and conformances are listed
            lines.add(f"{name}: {spelled(symbol.get('declarationFragments', []))}")
        for relation in graph.get("relationships", []):
            if relation["kind"] not in ("conformsTo", "inheritsFrom"):
                continue
            source = names.get(relation["source"])
            if source is None:
                continue
            target = names.get(relation["target"]) or relation.get("targetFallback") or relation["target"]
            if target in implicit:
                continue
            verb = "conforms to" if relation["kind"] == "conformsTo" else "inherits from"
            lines.add(f"{source}: {verb} {target}")
    with open(os.path.join(output, product + ".txt"), "w", encoding="utf-8") as handle:
        for line in sorted(lines, key=lambda text: text.encode("utf-8")):
            handle.write(line + "\n")
PY

if $check; then
    if ! diff -u api "$output" >&2; then
        echo "api-dump: the public API differs from api/*.txt (diff above: - committed, + built)." >&2
        echo "If the change is deliberate, run tools/api-dump.sh and commit api/ with it; else undo the change." >&2
        exit 1
    fi
    echo "api-dump: the public API of ${products[*]} matches api/*.txt"
fi
