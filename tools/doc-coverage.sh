#!/usr/bin/env bash
# Every public declaration of the library modules has a DocC comment.
#
# Dumps the package's symbol graphs (public and open symbols only, without members synthesized or
# inherited from protocol default implementations, and without documentation inherited from a
# protocol requirement) and lists every symbol declared in Sources/ that has no `///` comment of its
# own. Symbols with no source location (compiler-synthesized, e.g. an enum's init(rawValue:)) and
# symbols that come from other modules (Equatable's `!=`, ...) are not ours and are skipped.
#
# usage: tools/doc-coverage.sh [MODULE...]    (default: MappedKV MappedKVFormat MappedKVCache MappedKVCollections)
# Exit status 0 when every symbol is documented, 1 otherwise, 2 when the symbol graphs are missing.
set -euo pipefail
cd "$(dirname "$0")/.."

modules=("$@")
[ ${#modules[@]} -eq 0 ] && modules=(MappedKV MappedKVFormat MappedKVCache MappedKVCollections)

# The dump writes next to the debug products; start from an empty directory so that a module whose
# graph failed to emit cannot pass on a stale file. The dump also tries the test modules, which
# `swift build` does not build, and reports them as errors: only the library modules count here.
directory="$(dirname "$(swift build --show-bin-path)")/symbolgraph"
rm -rf "$directory"
output=$(swift package dump-symbol-graph --skip-synthesized-members --skip-inherited-docs 2>&1) || true
for module in "${modules[@]}"; do
    if [ ! -f "$directory/$module.symbols.json" ]; then
        echo "$output" >&2
        echo "doc-coverage: no symbol graph for $module in $directory" >&2
        exit 2
    fi
done

python3 - "$directory" "$PWD/Sources/" "${modules[@]}" <<'PY'
import glob
import json
import os
import sys
from urllib.parse import unquote, urlparse

directory, sources, modules = sys.argv[1], sys.argv[2], sys.argv[3:]
missing = []
checked = 0
for module in modules:
    # <Module>.symbols.json, plus <Module>@<Other>.symbols.json for extensions of other modules' types.
    files = [os.path.join(directory, module + ".symbols.json")]
    files += sorted(glob.glob(os.path.join(directory, module + "@*.symbols.json")))
    for path in files:
        with open(path, encoding="utf-8") as handle:
            graph = json.load(handle)
        for symbol in graph["symbols"]:
            if symbol.get("accessLevel") not in ("public", "open"):
                continue
            location = symbol.get("location")
            if not location:
                continue  # synthesized by the compiler
            file = unquote(urlparse(location["uri"]).path)
            if not file.startswith(sources):
                continue  # declared elsewhere
            checked += 1
            comment = symbol.get("docComment") or {}
            text = "".join(line.get("text", "") for line in comment.get("lines", [])).strip()
            if not text or comment.get("module", module) != module:
                line = location.get("position", {}).get("line", 0) + 1
                name = ".".join(symbol["pathComponents"])
                kind = symbol["kind"]["displayName"]
                missing.append(f"{os.path.relpath(file)}:{line}: {kind} {name}")

for entry in sorted(missing):
    print(entry)
print(f"doc-coverage: {len(missing)} of {checked} public declarations in {', '.join(modules)} lack a doc comment")
sys.exit(1 if missing else 0)
PY
